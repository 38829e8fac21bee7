"""Backups, imports and restores of a site: ask for them, list them."""
