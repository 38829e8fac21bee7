"""``pressroom tenants …``, ``shards``, ``audit`` and ``operator-token``: the operator API from a shell.

Each command calls the same service as its ``/ops`` endpoint, as the CLI's
operator principal (its writes are audited as ``operator:cli``); a refusal
prints ``error: <code>: <message>`` and exits 1.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from control_plane.cli.common import CLI_OPERATOR, app, console, services

if TYPE_CHECKING:
    from control_plane.container import Services

tenants_app = typer.Typer(help="Tenants (sites).", no_args_is_help=True)
LIST_PAGE = 500  # tenants read a page at a time, as GET /ops/tenants pages them
app.add_typer(tenants_app, name="tenants")
T = TypeVar("T")
YES = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
JSON = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


@contextmanager
def _refusals() -> Iterator[None]:
    """A refusal of the command layer is a message and exit code 1, never a traceback."""
    from tenant_runtime.errors import PressroomError

    try:
        yield
    except PressroomError as exc:
        console.print(f"error: {exc.code}: {exc.message}", markup=False)
        raise typer.Exit(1) from None


def _run(room: Services, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``work`` (a service's coroutine), then close the services on the same loop."""

    async def run() -> T:
        try:
            return await work()
        finally:
            await room.close()

    return asyncio.run(run())


def _print_json(value: object) -> None:
    typer.echo(json.dumps(msgspec.to_builtins(value), indent=2, sort_keys=True))


@app.command("operator-token")
def operator_token(label: Annotated[str, typer.Option()] = "cli") -> None:
    """Issue a new operator token (printed once)."""
    typer.echo(services().tenants.issue_operator_token(CLI_OPERATOR, label))


@tenants_app.command("list")
def tenants_list() -> None:
    """List tenants, printed a page at a time (the first rows show at once, whatever the tenant count)."""
    room = services()
    tenants = room.tenants
    headers = ("slug", "name", "status", "queue", "publishes/h", "shard")
    widths: list[int] | None = None
    after: str | None = None
    out_console = Console()
    while True:  # page by page, as GET /ops/tenants answers: never every tenant's row at once
        page = tenants.list(after=after, limit=LIST_PAGE)
        placed = room.placement.shards_of([t.slug for t in page])
        rows: list[tuple[str, ...]] = []
        for tenant in page:
            out = tenants.out(tenant, placed.get(tenant.slug))
            rows.append((out.slug, out.name, out.status, out.queue, str(out.publishes_per_hour), out.shard or ""))
        if widths is None:  # the first page sets the columns; a longer value later folds inside its column
            widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
        if rows or after is None:
            out_console.print(_page_table(headers, widths, rows, header=after is None))
        if len(page) < LIST_PAGE:
            break
        after = page[-1].slug


def _page_table(headers: tuple[str, ...], widths: list[int], rows: list[tuple[str, ...]], *, header: bool) -> Table:
    table = Table(show_header=header)
    for name, width in zip(headers, widths, strict=True):
        table.add_column(name, min_width=width, max_width=max(width, 40), overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


@tenants_app.command("move")
def tenants_move(slug: str, to: Annotated[str, typer.Option("--to", help="The shard to move the tenant to.")]) -> None:
    """Move a tenant to another shard: drain, hand over, resume (its commands answer 503 meanwhile)."""
    from tenant_runtime.errors import PressroomError

    room = services()
    try:
        moved = room.placement.move(CLI_OPERATOR, slug, to)
    except PressroomError as exc:
        console.print(f"error: {exc.code}: {exc.message}", markup=False)
        raise typer.Exit(1) from None
    finally:
        asyncio.run(room.close())
    console.print(
        f"moved {moved.tenant} from {moved.from_shard} to {moved.to_shard} "
        f"({moved.bytes} bytes, drained in {moved.drained_in_seconds}s, {moved.seconds}s in all)"
    )


@app.command("shards")
def shards() -> None:
    """List shards: transport, tenants placed, whether the runtime answers."""
    room = services()
    try:
        table = Table("shard", "transport", "url", "tenants", "default", "status")
        for shard in room.placement.shards(probe=True):
            table.add_row(
                shard.name, shard.transport, shard.url or "", str(shard.tenants), "yes" if shard.default else "",
                shard.status or "",
            )  # fmt: skip
        Console().print(table)
    finally:
        asyncio.run(room.close())


@tenants_app.command("create")
def tenants_create(
    slug: str,
    name: str,
    shard: Annotated[str | None, typer.Option("--shard", help="Its shard (default: the default shard).")] = None,
) -> None:
    """Create a tenant (placement, workspace on its shard, queue)."""
    room = services()
    with _refusals():
        out = _run(room, lambda: room.tenants.create(CLI_OPERATOR, slug, name, shard=shard))
    console.print(f"created tenant {out.slug} on shard {out.shard}")


@tenants_app.command("show")
def tenants_show(slug: str, as_json: JSON = False) -> None:
    """A tenant: status, shard, quota, queue depth, late runs (Prefect's view); --json adds backups, retention."""
    room = services()
    with _refusals():
        out = _run(room, lambda: room.tenants.detail(CLI_OPERATOR, slug))
    if as_json:
        _print_json(out)
        return
    late = f"{out.late_runs} (by {out.late_by_seconds or 0:.0f}s)" if out.prefect == "ok" else "unknown (no Prefect)"
    table = Table("field", "value", show_header=False)
    for field, value in (
        ("slug", out.slug), ("name", out.name), ("status", out.status), ("reason", out.status_reason or ""),
        ("shard", out.shard or ""),
        ("moving to", out.moving_to or ""), ("queue", out.queue), ("publishes/h", str(out.publishes_per_hour)),
        ("queue depth", str(out.queue_depth)), ("late runs", late), ("site", out.site_url),
        ("created", out.created_at.isoformat()),
    ):  # fmt: skip
        table.add_row(field, value)
    Console().print(table)


def _set_status(slug: str, status: str, reason: str | None = None) -> None:
    room = services()
    with _refusals():
        out = _run(room, lambda: room.tenants.set_status(CLI_OPERATOR, slug, status, reason))
    console.print(f"tenant {out.slug}: {out.status}")


def _check_reason(reason: str | None) -> None:
    """The API's rule for a suspend reason (SuspendIn): at most 500 characters, no control characters."""
    from tenant_runtime.errors import BadRequest

    if reason is None:
        return
    with _refusals():
        if len(reason) > 500:
            raise BadRequest("The reason is at most 500 characters.", details={"length": len(reason)})
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in reason):
            raise BadRequest("The reason may not contain control characters (newlines, tabs …).")


@tenants_app.command("suspend")
def tenants_suspend(
    slug: str,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why, shown to the site's editors (<= 500 characters).")
    ] = None,
    yes: YES = False,
) -> None:
    """Pause the tenant's queue and refuse its commands (423) until resumed; --reason is told to its editors."""
    _check_reason(reason)  # before asking: a refused reason changes nothing
    if not yes and not typer.confirm(f"suspend {slug}? Its runs stop and its commands are refused."):
        raise typer.Abort()
    _set_status(slug, "suspended", reason)


@tenants_app.command("resume")
def tenants_resume(slug: str) -> None:
    """Resume the tenant's queue and accept its commands again."""
    _set_status(slug, "active")


@tenants_app.command("quota")
def tenants_quota(slug: str, publishes_per_hour: int) -> None:
    """Set the tenant's publishes-per-hour quota (0 stops its publishes)."""
    room = services()
    with _refusals():
        out = room.tenants.set_quota(CLI_OPERATOR, slug, publishes_per_hour)
    console.print(f"tenant {out.slug}: {out.publishes_per_hour} publishes per hour")


@tenants_app.command("tokens")
def tenants_tokens(
    slug: str,
    role: Annotated[str, typer.Option("--role", help="owner, editor or viewer.")],
    name: Annotated[str, typer.Option("--name", help="A label for the token.")] = "",
) -> None:
    """Issue a member token with a role; the token alone goes to stdout (shown once, stored hashed)."""
    room = services()
    with _refusals():
        out = room.tenants.issue_token(CLI_OPERATOR, slug, role, name)
    console.print(f"token {out.id} ({out.role} of {out.tenant}):")
    typer.echo(out.token)


@app.command("audit")
def audit(
    action: Annotated[str | None, typer.Option(help="e.g. tenant.suspend")] = None,
    tenant: Annotated[str | None, typer.Option()] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 100,
    as_json: JSON = False,
) -> None:
    """Operator writes, newest first (the operator audit)."""
    entries = services().tenants.audit(action=action, tenant=tenant, limit=limit)
    if as_json:
        _print_json(entries)
        return
    table = Table("when", "action", "actor", "tenant", "object", "data")
    for entry in entries:
        obj = f"{entry.object_type}:{entry.object_id}" if entry.object_type else ""
        table.add_row(
            entry.created_at.isoformat(timespec="seconds"), entry.action, entry.actor, entry.tenant or "", obj,
            json.dumps(entry.data, sort_keys=True),
        )  # fmt: skip
    Console(width=200).print(table)


__all__ = ["tenants_app"]
