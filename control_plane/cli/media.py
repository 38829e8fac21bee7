"""``pressroom media …``: a site's media library from a shell (list and search, policy, sweep).

Every effect goes through the same services as the API, as the CLI's operator principal.
"""

from __future__ import annotations

import json
from typing import Annotated

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from control_plane.cli.common import CLI_OPERATOR, app, services
from control_plane.cli.operations import follow

media_app = typer.Typer(help="A site's media library: list, policy, sweep.", no_args_is_help=True)
app.add_typer(media_app, name="media")
console = Console(width=200)


@media_app.command("list")
def list_media(
    tenant: str,
    q: Annotated[str | None, typer.Option(help="Part of the name.")] = None,
    status: Annotated[str, typer.Option(help="active, deleted (the trash) or all.")] = "active",
    limit: Annotated[int, typer.Option()] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """The site's files, newest first."""
    found = services().media.list(CLI_OPERATOR, tenant, q=q, state=status, limit=limit)
    if as_json:
        typer.echo(json.dumps(msgspec.to_builtins(found), indent=2))
        return
    table = Table("name", "type", "bytes", "size", "status", "purge after")
    table.add_column("id", no_wrap=True)
    for m in found:
        size = f"{m.width}×{m.height}" if m.width else ""
        after = m.purge_after.isoformat(timespec="seconds") if m.purge_after else ""
        table.add_row(m.name, m.content_type, str(m.bytes), size, m.status, after, m.id)
    console.print(table)


@media_app.command("policy")
def policy(
    tenant: str,
    max_bytes: Annotated[int | None, typer.Option(help="Largest upload, in bytes.")] = None,
    retention_days: Annotated[int | None, typer.Option(help="Days a deleted file stays restorable.")] = None,
) -> None:
    """Show the site's media policy, or set it (audited as operator:cli)."""
    room = services()
    if max_bytes is None and retention_days is None:
        current = room.media.policy(CLI_OPERATOR, tenant)
    else:
        body = room.media.set_policy(CLI_OPERATOR, tenant, max_bytes=max_bytes, retention_days=retention_days).body
        current = msgspec.convert(body, type=type(room.media.policy(CLI_OPERATOR, tenant)))
    console.print(f"{tenant}: max {current.max_bytes} bytes per file, deleted files kept {current.retention_days} days")


@media_app.command("sweep")
def sweep(
    tenant: str,
    wait: Annotated[bool, typer.Option(help="Follow it to the end and show what it did.")] = True,
    timeout: Annotated[float, typer.Option()] = 600,
) -> None:
    """Delete for good the files past retention in the trash that no kept document version references."""
    room = services()
    result = room.media.sweep(CLI_OPERATOR, tenant, confirm=True)
    room.handoff.flush()
    operation_id = result.body["operation_id"]
    console.print(f"sweep: operation {operation_id} {result.body['status']}")
    if not wait:
        return
    statuses = follow(room, tenant, [operation_id], timeout)
    operation = room.operations.get(CLI_OPERATOR, tenant, operation_id)
    outcome = operation.outcome or {}
    console.print(f"purged: {', '.join(outcome.get('purged') or []) or 'none'}")
    for kept in outcome.get("kept") or []:
        names = ", ".join(f"{r['slug']}@{r['version'] or 'current'}" for r in kept["references"])
        console.print(f"kept {kept['media_id']}: referenced by {names}")
    if set(statuses.values()) != {"succeeded"}:
        raise typer.Exit(1)


__all__ = ["media_app"]
