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
    tenants = services().tenants
    table = Table("slug", "name", "status", "queue", "publishes/h")
    for tenant in tenants.list():
        out = tenants.out(tenant)
        table.add_row(out.slug, out.name, out.status, out.queue, str(out.publishes_per_hour))
    Console().print(table)


@tenants_app.command("create")
def tenants_create(slug: str, name: str) -> None:
    """Create a tenant (workspace + queue)."""
    room = services()

    async def create() -> str:
        try:
            return (await room.tenants.create(CLI_OPERATOR, slug, name)).slug
        finally:
            await room.close()

    console.print(f"created tenant {asyncio.run(create())}")


__all__ = ["tenants_app"]
