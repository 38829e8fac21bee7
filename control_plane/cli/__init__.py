"""The ``pressroom`` command: run the stack, its servers and worker, and operate tenants.

common.py      the Typer app, console, settings, services, the CLI's operator principal
servers.py     up, serve, site, worker, migrate
tenants.py     tenants create|list|show|suspend [--reason]|resume|quota|tokens|move, shards, audit, operator-token
operations.py  operations list|retry, runs describe
versions.py    revisions list|diff|restore, retention show|set|prune
fields.py      fields list|migrate (with a progress bar)
backups.py     backups create|list|import|restore|undo-restore|health
lanes.py       briefs submit|show, lanes list|pack|edit-pack|install|budget|costs
packages.py    packages keygen|sign|install|list|rollback|uninstall, packages keys …
media.py       media list|policy|sweep
"""

from __future__ import annotations

import os

from control_plane.cli import (  # noqa: F401  (they register their commands)
    backups,
    fields,
    lanes,
    media,
    operations,
    packages,
    servers,
    tenants,
    versions,
)
from control_plane.cli.common import app


def main() -> None:
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    app()


__all__ = ["app", "main"]
