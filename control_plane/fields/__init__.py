"""Custom fields of documents: definitions per kind, and their migrations (migrate_field)."""
