"""``pressroom revisions …``: a document's versions from a shell (list, diff, restore).

Every effect goes through the same services as the API, as the CLI's operator principal.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from control_plane.cli.common import CLI_OPERATOR, app, services
from control_plane.cli.operations import follow

revisions_app = typer.Typer(help="Versions of a document: list, diff, restore.", no_args_is_help=True)
retention_app = typer.Typer(help="Version retention: policies and pruning.", no_args_is_help=True)
app.add_typer(revisions_app, name="revisions")
app.add_typer(retention_app, name="retention")
console = Console(width=200)


@revisions_app.command("list")
def list_revisions(tenant: str, document_id: str, limit: Annotated[int, typer.Option()] = 50) -> None:
    """The document's versions, newest first."""
    room = services()
    table = Table("version", "title", "by", "at", "bytes", "")
    for r in room.revisions.list(CLI_OPERATOR, tenant, document_id, limit=limit):
        marks = ", ".join(
            m for m, on in (("current", r.current), ("published", r.published), ("spilled", r.spilled)) if on
        )
        table.add_row(str(r.version), r.title, r.actor, r.created_at.isoformat(timespec="seconds"), str(r.bytes), marks)
    console.print(table)


@revisions_app.command("diff")
def diff(tenant: str, document_id: str, from_version: int, to_version: int) -> None:
    """A word-level diff of two versions: removed words red, added words green."""
    room = services()
    result = room.revisions.diff(CLI_OPERATOR, tenant, document_id, from_version, to_version)
    for name, part in (("title", result.title), ("body", result.body)):
        text = Text(f"{name}: ", style="bold")
        for hunk in part["hunks"]:
            if hunk["op"] == "equal":
                text.append(hunk["old"])
                continue
            if hunk["old"]:
                text.append(hunk["old"], style="red strike")
            if hunk["new"]:
                text.append(hunk["new"], style="green underline")
        console.print(text)
    console.print(f"+{result.body['words_inserted']} -{result.body['words_deleted']} words")


@revisions_app.command("restore")
def restore(
    tenant: str,
    document_id: str,
    version: int,
    publish: Annotated[bool, typer.Option(help="Publish the restored version too.")] = False,
) -> None:
    """Restore a version as the document's newest version (a draft unless --publish)."""
    room = services()
    outcome = room.revisions.restore(CLI_OPERATOR, tenant, document_id, version, publish=publish, confirm=True)
    room.handoff.flush()
    document = outcome.body["document"]
    line = f"{document_id}: version {document['version']} restored from {version}"
    if not outcome.body.get("changed", True):
        line += " (unchanged: it already held that content)"
    if "operation_id" in outcome.body:
        line += f"; publish operation {outcome.body['operation_id']} {outcome.body['status']}"
    console.print(line)


@retention_app.command("show")
def show_retention(tenant: str) -> None:
    """The policy of each versioned entity type, and spillover waiting to be deleted."""
    state = services().retention.get(CLI_OPERATOR, tenant)
    table = Table("entity type", "keep last", "keep days", "")
    for p in state["policies"]:
        table.add_row(p["entity_type"], str(p["keep_last"]), str(p["keep_days"]), "default" if p["default"] else "")
    console.print(table)
    for pending in state["spillover_pending"]:
        console.print(
            f"spillover not deleted yet: {pending['key']} ({pending['attempts']} attempts: {pending['last_error']})"
        )


@retention_app.command("set")
def set_retention(
    tenant: str,
    entity_type: str,
    keep_last: Annotated[int, typer.Option(help="Versions of each entity always kept.")],
    keep_days: Annotated[int, typer.Option(help="Every version younger than this is kept.")],
) -> None:
    """Set one entity type's retention policy."""
    services().retention.set_policy(CLI_OPERATOR, tenant, entity_type, keep_last=keep_last, keep_days=keep_days)
    console.print(f"{tenant}: {entity_type} keeps the last {keep_last} versions and {keep_days} days")


@retention_app.command("prune")
def prune(
    tenant: str,
    wait: Annotated[bool, typer.Option(help="Follow it to the end.")] = True,
    timeout: Annotated[float, typer.Option()] = 300,
) -> None:
    """Run prune_policies now (it deletes versions beyond the policy for good)."""
    room = services()
    outcome = room.retention.prune(CLI_OPERATOR, tenant, confirm=True)
    room.handoff.flush()
    operation_id = outcome.body["operation_id"]
    console.print(f"prune operation {operation_id}: {outcome.body['status']}")
    if wait:
        follow(room, tenant, [operation_id], timeout)
        facts = room.operations.get(CLI_OPERATOR, tenant, operation_id).outcome or {}
        console.print(", ".join(f"{k}={v}" for k, v in facts.items() if not isinstance(v, list)))


__all__ = ["retention_app", "revisions_app"]
