"""Versions of a site's content: document revisions (list, diff, restore) and version retention."""
