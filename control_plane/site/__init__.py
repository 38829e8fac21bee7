"""The site itself: its versioned navigation, redirects and theme, its search index, its example content."""
