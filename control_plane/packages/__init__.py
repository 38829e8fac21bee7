"""Packages: signed themes, plugins and lanes installed on a site, and the publisher keys it trusts."""
