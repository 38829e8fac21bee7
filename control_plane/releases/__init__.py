"""Releases: several documents, the navigation, the redirects and the theme, published together, now or later."""
