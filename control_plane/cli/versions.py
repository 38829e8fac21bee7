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

revisions_app = typer.Typer(help="Versions of a document: list, diff, restore.", no_args_is_help=True)
app.add_typer(revisions_app, name="revisions")
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


__all__ = ["revisions_app"]
