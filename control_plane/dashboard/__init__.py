"""The dashboard: server-rendered pages where site owners and editors write and publish.

Litestar + Jinja2, no JavaScript. Sign-in takes a tenant (or operator) token once
and keeps only its id in an encrypted cookie; every form POST passes a same-origin
check and a CSRF token; every change goes through the command layer.
"""

from control_plane.dashboard.router import build_dashboard

__all__ = ["build_dashboard"]
