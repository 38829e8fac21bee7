"""``pressroom tenants …`` and ``pressroom operator-token``: operator writes, audited as ``operator:cli``."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from control_plane.cli.common import CLI_OPERATOR, app, console, services

tenants_app = typer.Typer(help="Tenants (sites).", no_args_is_help=True)
app.add_typer(tenants_app, name="tenants")


@app.command("operator-token")
def operator_token(label: Annotated[str, typer.Option()] = "cli") -> None:
    """Issue a new operator token (printed once)."""
    typer.echo(services().tenants.issue_operator_token(CLI_OPERATOR, label))


@tenants_app.command("list")
def tenants_list() -> None:
    """List tenants."""
    room = services()
    tenants = room.tenants
    placed = room.placement.shards_of()
    table = Table("slug", "name", "status", "queue", "publishes/h", "shard")
    for tenant in tenants.list():
        out = tenants.out(tenant, placed.get(tenant.slug))
        table.add_row(out.slug, out.name, out.status, out.queue, str(out.publishes_per_hour), out.shard or "")
    Console().print(table)


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

    async def create() -> str:
        try:
            return (await room.tenants.create(CLI_OPERATOR, slug, name, shard=shard)).slug
        finally:
            await room.close()

    console.print(f"created tenant {asyncio.run(create())}")


__all__ = ["tenants_app"]
