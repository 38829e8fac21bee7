"""``pressroom backups …``: back a site up, list its backups, download or import one, restore to a moment.

Every effect goes through the same services as the API and the dashboard, as
the CLI's operator principal.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from control_plane.cli.common import CLI_OPERATOR, app, services
from control_plane.cli.operations import follow
from dispatch.runtime.backups import GetBackupHealth
from tenant_runtime.lifecycle.format import BackupInvalid

backups_app = typer.Typer(help="Backups, imports and restores of a site.", no_args_is_help=True)
app.add_typer(backups_app, name="backups")
console = Console(width=200)


@backups_app.command("create")
def create(
    tenant: str,
    wait: Annotated[bool, typer.Option(help="Follow it to the end.")] = True,
    timeout: Annotated[float, typer.Option()] = 600,
) -> None:
    """Back the whole site up now."""
    room = services()
    result = room.backups.request(CLI_OPERATOR, tenant, confirm=True)
    room.handoff.flush()
    console.print(f"backup {result.body['backup_id']}: operation {result.body['operation_id']} {result.body['status']}")
    if wait:
        statuses = follow(room, tenant, [result.body["operation_id"]], timeout)
        if set(statuses.values()) != {"succeeded"}:
            raise typer.Exit(1)


@backups_app.command("list")
def list_backups(
    tenant: str,
    limit: Annotated[int, typer.Option()] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """The site's backups, newest first: time, status, size, manifest digest."""
    backups = services().backups.list(CLI_OPERATOR, tenant, limit=limit)
    if as_json:
        typer.echo(json.dumps(msgspec.to_builtins(backups), indent=2))
        return
    table = Table("created", "status", "reason", "bytes", "manifest sha256", "error")
    table.add_column("backup", no_wrap=True)
    for b in backups:
        table.add_row(
            b.created_at.isoformat(timespec="seconds"),
            b.status,
            b.reason,
            str(b.bytes or ""),
            (b.manifest_sha256 or "")[:16],
            (b.error or "")[:60],
            b.id,
        )
    console.print(table)


@backups_app.command("download")
def download(
    tenant: str,
    backup_id: str,
    out: Annotated[Path | None, typer.Option(help="The tar to write (default: ./{tenant}-{id}.tar).")] = None,
) -> None:
    """Write backup BACKUP_ID of TENANT as one tar (what GET …/backups/{id}/download streams), streamed to a
    file: a part found changed on the way leaves no file behind and exits 1."""
    found = services().backups.download(CLI_OPERATOR, tenant, backup_id)
    target = out or Path(found.filename)
    partial = target.with_name(f".{target.name}.partial")
    written = 0
    try:
        with partial.open("wb") as handle:
            for chunk in found.chunks():
                handle.write(chunk)
                written += len(chunk)
    except BackupInvalid as exc:
        partial.unlink(missing_ok=True)
        console.print(f"[red]{exc.message}[/red] {json.dumps(exc.details)}")
        raise typer.Exit(1) from None
    partial.replace(target)
    console.print(f"{target}: {written} bytes, manifest sha256 {found.manifest_sha256}")


@backups_app.command("import")
def import_backup(
    tenant: str,
    source_tenant: str,
    backup_id: str,
    wait: Annotated[bool, typer.Option(help="Follow it to the end.")] = True,
    timeout: Annotated[float, typer.Option()] = 600,
) -> None:
    """Replace the site TENANT with backup BACKUP_ID of SOURCE_TENANT (itself, or another tenant)."""
    room = services()
    result = room.backups.import_backup(
        CLI_OPERATOR, tenant, source_tenant=source_tenant, backup_id=backup_id, confirm=True
    )
    room.handoff.flush()
    console.print(f"import into {tenant}: operation {result.body['operation_id']} {result.body['status']}")
    if wait:
        statuses = follow(room, tenant, [result.body["operation_id"]], timeout)
        if set(statuses.values()) != {"succeeded"}:
            raise typer.Exit(1)


@backups_app.command("restore")
def restore(
    tenant: str,
    at: Annotated[datetime, typer.Argument(help="ISO 8601 with an offset, e.g. 2026-12-01T09:00:00+00:00")],
    apply: Annotated[bool, typer.Option("--apply", help="Restore (default: the dry run only).")] = False,
    wait: Annotated[bool, typer.Option(help="Follow it to the end.")] = True,
    timeout: Annotated[float, typer.Option()] = 600,
) -> None:
    """Show what a restore of TENANT to AT changes; with --apply, snapshot now and restore."""
    room = services()
    if not apply:
        plan = room.backups.plan_restore(CLI_OPERATOR, tenant, at)
        typer.echo(json.dumps(msgspec.to_builtins(plan), indent=2))
        return
    result = room.backups.restore(CLI_OPERATOR, tenant, at, confirm=True)
    room.handoff.flush()
    console.print(
        f"restore of {tenant}: operation {result.body['operation_id']}, snapshot {result.body['snapshot_id']}"
    )
    if wait and set(follow(room, tenant, [result.body["operation_id"]], timeout).values()) != {"succeeded"}:
        raise typer.Exit(1)


@backups_app.command("undo-restore")
def undo_restore(
    tenant: str,
    wait: Annotated[bool, typer.Option(help="Follow it to the end.")] = True,
    timeout: Annotated[float, typer.Option()] = 600,
) -> None:
    """Import the snapshot TENANT's last restore took."""
    room = services()
    result = room.backups.undo_restore(CLI_OPERATOR, tenant, confirm=True)
    room.handoff.flush()
    console.print(f"undo of {result.body['undo_of']}: operation {result.body['operation_id']}")
    if wait and set(follow(room, tenant, [result.body["operation_id"]], timeout).values()) != {"succeeded"}:
        raise typer.Exit(1)


@backups_app.command("health")
def health(tenant: str) -> None:
    """The last good backup's age (alarm over 26 h) and the nightly chores' lateness of TENANT."""
    room = services()
    answer = room.runtime.query(tenant, CLI_OPERATOR.actor_ref(tenant), GetBackupHealth())
    typer.echo(json.dumps(msgspec.to_builtins(answer), indent=2, default=str))
