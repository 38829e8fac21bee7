"""Documents of a site: write, edit, publish and unpublish."""
