"""``pressroom fields …``: custom field definitions and their migrations, with a progress bar."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import msgspec
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from control_plane.cli.common import CLI_OPERATOR, app, services
from dispatch.runtime.fields import ChangeField
from tenant_runtime.operation_states import settled

fields_app = typer.Typer(help="Custom fields of documents: definitions and migrations.", no_args_is_help=True)
app.add_typer(fields_app, name="fields")
console = Console(width=200)


@fields_app.command("list")
def list_fields(tenant: str, kind: Annotated[str | None, typer.Option()] = None) -> None:
    """The custom field definitions of the site."""
    table = Table("kind", "name", "type", "required", "default", "options", "version", "status")
    for d in services().fields.list(CLI_OPERATOR, tenant, kind=kind):
        table.add_row(
            d["kind"],
            d["name"],
            d["type"],
            str(d["required"]),
            json.dumps(d["default"]),
            json.dumps(d["options"]),
            str(d["version"]),
            d["status"],
        )
    console.print(table)


@fields_app.command("migrate")
def migrate(
    tenant: str,
    kind: str,
    change: Annotated[str, typer.Argument(help="add | rename | change_type | remove")],
    field: str,
    to: Annotated[str | None, typer.Option(help="The new name (rename).")] = None,
    field_type: Annotated[str | None, typer.Option("--type", help="The type (add, change_type).")] = None,
    default: Annotated[str | None, typer.Option(help="The default, as JSON (add).")] = None,
    options: Annotated[str | None, typer.Option(help='Options as JSON, e.g. \'{"choices": ["a", "b"]}\'.')] = None,
    required: Annotated[bool, typer.Option()] = False,
    wait: Annotated[bool, typer.Option(help="Follow it to the end with a progress bar.")] = True,
    timeout: Annotated[float, typer.Option()] = 3600,
) -> None:
    """Apply a definition change to every document (migrate_field), showing its progress."""
    room = services()
    message = ChangeField(
        kind=kind,
        change=change,
        field=field,
        to=to,
        field_type=field_type,
        options=json.loads(options) if options else None,
        default=json.loads(default) if default else None,
        required=required,
    )
    outcome = room.fields.change(CLI_OPERATOR, tenant, message, confirm=True)
    room.handoff.flush()
    operation_id = outcome.body["operation_id"]
    console.print(f"field migration {operation_id}: {outcome.body['status']}")
    if wait:
        final = follow_migration(room, tenant, operation_id, timeout)
        progress = final.get("progress") or {}
        console.print(
            f"{operation_id}: {final['status']}; converted {progress.get('converted')}/{progress.get('total')}"
        )
        for problem in progress.get("unconvertible", []):
            console.print(f"  cannot convert {problem['slug']} ({problem['document_id']}): {problem['reason']}")
        if final["status"] != "succeeded":
            raise typer.Exit(1)


def follow_migration(room: Any, tenant: str, operation_id: str, timeout: float) -> dict[str, Any]:
    """A progress bar of documents done over the total, per phase, until the operation is final."""
    deadline = time.monotonic() + timeout
    operation: dict[str, Any] = {}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} documents"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task(f"{tenant}: queued", total=None)
        while time.monotonic() < deadline:
            operation = msgspec.to_builtins(room.operations.get(CLI_OPERATOR, tenant, operation_id))
            progress = operation.get("progress") or {}
            bar.update(
                task,
                total=progress.get("total") or None,
                completed=progress.get("done", 0),
                description=f"{tenant}: {progress.get('phase', operation['status'])}",
            )
            if settled(operation["status"], operation["next_attempt_at"]):
                break
            time.sleep(0.5)
    return operation


__all__ = ["fields_app"]
