"""``pressroom briefs …`` and ``pressroom lanes …``: post a brief and operate lanes, packs and costs from a shell.

The same services as the API (as the CLI's operator principal): a brief posted
here is validated, keyed and queued exactly like one posted by an agent.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Annotated, Any

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from control_plane.cli.common import CLI_OPERATOR, app, services
from control_plane.lanes.schemas import BriefCreate, LaneInstall, PackUpdate

briefs_app = typer.Typer(
    help="Briefs: article requests a lane's flow turns into published articles.", no_args_is_help=True
)
lanes_app = typer.Typer(help="Lanes, their editorial packs, budgets and costs.", no_args_is_help=True)
app.add_typer(briefs_app, name="briefs")
app.add_typer(lanes_app, name="lanes")
console = Console(width=200)


def _print(value: Any) -> None:
    console.print_json(json.dumps(msgspec.to_builtins(value)))


@briefs_app.command("submit")
def submit(
    tenant: str,
    brief_id: Annotated[str, typer.Option("--brief-id", help="The routine's own id for this brief (the run key).")],
    lane: Annotated[str, typer.Option()],
    title: Annotated[str, typer.Option()],
    slug: Annotated[str | None, typer.Option()] = None,
    audience: Annotated[str | None, typer.Option()] = None,
    source: Annotated[list[str] | None, typer.Option("--source", help="A URL to cite (repeatable).")] = None,
    notes: Annotated[str, typer.Option()] = "",
) -> None:
    """Post a brief: queued (202), already queued (200), or the error with its code."""
    room = services()
    data = BriefCreate(
        brief_id=brief_id, lane=lane, title=title, slug=slug, audience=audience, sources=source or [], notes=notes
    )
    result = room.lanes.submit_brief(CLI_OPERATOR, tenant, data)
    room.handoff.flush()  # the run is created before this process exits
    _print({"http_status": result.status_code, **result.body})


@briefs_app.command("show")
def show(tenant: str, brief_id: str) -> None:
    """A brief: its lane, pinned pack version and graph, operation, document and cost."""
    _print(services().lanes.brief(CLI_OPERATOR, tenant, brief_id))


@lanes_app.command("list")
def list_lanes(tenant: str) -> None:
    """The site's lanes."""
    table = Table("lane", "enabled", "pack", "source", "budget µ$", "graph")
    for lane in services().lanes.lanes(CLI_OPERATOR, tenant):
        budget = "default" if lane.budget_micros is None else str(lane.budget_micros)
        table.add_row(lane.name, str(lane.enabled), str(lane.pack_version), lane.source, budget, " → ".join(lane.graph))
    console.print(table)


@lanes_app.command("pack")
def pack(tenant: str, lane: str, version: Annotated[int | None, typer.Option()] = None) -> None:
    """A lane's editorial pack (current, or --version)."""
    _print(services().lanes.pack(CLI_OPERATOR, tenant, lane, version))


@lanes_app.command("edit-pack")
def edit_pack(
    tenant: str,
    lane: str,
    version: Annotated[int, typer.Option(help="The pack version you are editing.")],
    voice: Annotated[str | None, typer.Option()] = None,
    audience: Annotated[str | None, typer.Option()] = None,
    avoid: Annotated[list[str] | None, typer.Option("--avoid", help="A pattern to avoid (repeatable).")] = None,
    guidance: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Add the lane's next pack version (what is not given carries over)."""
    data = PackUpdate(version=version, voice=voice, audience=audience, avoid=avoid, guidance=guidance)
    result = services().lanes.update_pack(CLI_OPERATOR, tenant, lane, data)
    _print(result.body)


@lanes_app.command("install")
def install(
    tenant: str,
    definition: Annotated[typer.FileText, typer.Argument(help='A JSON file: {"name", "graph", "pack"?, "source"?}')],
    override: Annotated[bool, typer.Option(help="Install a graph within one step of the backbone.")] = False,
) -> None:
    """Install (or upgrade) a lane with its own graph; a graph that breaks a contract is refused, naming why."""
    data = msgspec.json.decode(definition.read(), type=LaneInstall)
    data = msgspec.structs.replace(data, override=override or data.override)
    _print(services().lanes.install(CLI_OPERATOR, tenant, data).body)


@lanes_app.command("budget")
def budget(
    tenant: str,
    lane: str,
    micros: Annotated[int | None, typer.Argument(help="µ$ per run; omit for the default.")] = None,
) -> None:
    """Set a lane's per-run budget."""
    _print(services().lanes.set_budget(CLI_OPERATOR, tenant, lane, micros).body)


@lanes_app.command("costs")
def costs(tenant: str, since: Annotated[str | None, typer.Option(help="YYYY-MM-DD")] = None) -> None:
    """Cost of paid steps per lane and UTC day."""
    table = Table("day", "lane", "cost µ$", "entries")
    for row in services().lanes.costs(CLI_OPERATOR, tenant, date.fromisoformat(since) if since else None):
        table.add_row(row.day, row.lane, str(row.cost_micros), str(row.entries))
    console.print(table)


__all__ = ["briefs_app", "lanes_app"]
