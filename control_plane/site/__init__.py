"""The public site server: read-only, serves rendered objects or renders live."""
