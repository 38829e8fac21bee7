"""The public site server: readers' pages, feeds, search and public records, read-only."""
