"""Briefs, lanes and editorial packs (tenant API)."""
