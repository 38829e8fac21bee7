"""Control-plane services: the logic behind the thin HTTP and CLI edges."""
