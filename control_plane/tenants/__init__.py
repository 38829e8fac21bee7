"""Tenants (sites) as operators run them: create, suspend, resume, quotas, tokens, the operator audit."""
