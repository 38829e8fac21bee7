"""The media library: upload, list and search, soft delete and restore, the policy, the sweep."""
