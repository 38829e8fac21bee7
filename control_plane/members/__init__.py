"""A site's members (owner, editor, viewer) and their API tokens, managed by its owners."""
