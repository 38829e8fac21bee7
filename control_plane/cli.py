"""The ``pressroom`` command: run the stack, its servers and worker, and operate tenants."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from control_plane.cli_ops import operations_app, runs_app

app = typer.Typer(help="Pressroom: a multi-tenant publishing control plane on Prefect.", no_args_is_help=True)
tenants_app = typer.Typer(help="Tenants (sites).", no_args_is_help=True)
app.add_typer(tenants_app, name="tenants")
app.add_typer(operations_app, name="operations")
app.add_typer(runs_app, name="runs")
console = Console(stderr=True)


def _settings():  # type: ignore[no-untyped-def]
    from control_plane.settings import Settings

    return Settings.from_env()


def _logging(settings) -> None:  # type: ignore[no-untyped-def]
    from tenant_runtime.logs import configure_logging

    configure_logging(settings.control_plane.log_level, json=settings.control_plane.log_json)


@app.command()
def up(
    seed: Annotated[bool, typer.Option(help="Create and seed the example tenant.")] = True,
    wait: Annotated[bool, typer.Option(help="Keep running (supervised) until stopped; --no-wait stops again "
                                            "once everything is up, a smoke check.")] = True,
) -> None:
    """Start the whole local stack (Prefect + UI, control plane, site, worker), supervised; seed `example`.

    A crashed service is restarted; SIGTERM, SIGINT, SIGHUP or SIGQUIT stop everything and exit 0.
    """
    from control_plane.local.stack import Stack

    try:
        stack = Stack.from_env()
    except ValueError as exc:
        console.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    raise typer.Exit(stack.run(seed=seed, stay=wait))


@app.command()
def serve(
    host: Annotated[str | None, typer.Option()] = None, port: Annotated[int | None, typer.Option()] = None
) -> None:
    """Run the control plane (dashboard, tenant API, operator API)."""
    import uvicorn

    from control_plane.app import create_app

    settings = _settings()
    _logging(settings)
    uvicorn.run(create_app(settings), host=host or settings.control_plane.host,
                port=port or settings.control_plane.port, log_level="warning", access_log=False)


@app.command()
def site(
    host: Annotated[str | None, typer.Option()] = None, port: Annotated[int | None, typer.Option()] = None
) -> None:
    """Run the public site server (read-only)."""
    import uvicorn

    from control_plane.site.app import create_site_asgi

    settings = _settings()
    _logging(settings)
    uvicorn.run(create_site_asgi(settings), host=host or settings.control_plane.site_host,
                port=port or settings.control_plane.site_port, log_level="warning", access_log=False)


@app.command()
def worker(
    tenant: Annotated[list[str] | None, typer.Option("--tenant", help="Serve only these tenants.")] = None,
) -> None:
    """Run a runtime worker: executes flow runs of tenant queues in this process."""
    from dispatch.prefect_gateway import PrefectGateway
    from dispatch.worker import RuntimeWorker
    from flows import runtime
    from tenant_runtime.workspace import WorkspaceFactory

    settings = _settings()
    _logging(settings)
    factory = WorkspaceFactory(settings.runtime)
    runtime.configure(factory)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with PrefectGateway(settings.dispatch) as gateway:
            await RuntimeWorker(settings.dispatch, factory, gateway,
                                tenants=frozenset(tenant) if tenant else None).run(stop)

    asyncio.run(main())


@app.command("migrate")
def migrate() -> None:
    """Bring the control-plane database schema up to date."""
    from control_plane.db import upgrade

    upgrade(_settings().control_plane.database_url)
    console.print("control-plane schema is up to date")


@app.command("operator-token")
def operator_token(label: Annotated[str, typer.Option()] = "cli") -> None:
    """Issue a new operator token (printed once)."""
    from control_plane.services.container import Services

    services = Services.build(_settings())
    typer.echo(services.tokens.issue_operator_token(label))


@tenants_app.command("list")
def tenants_list() -> None:
    """List tenants."""
    from control_plane.services.container import Services

    services = Services.build(_settings())
    table = Table("slug", "name", "status", "queue", "publishes/h")
    for t in services.tenants.list():
        table.add_row(t.slug, t.name, t.status, services.settings.dispatch.queue_for(t.slug), str(t.publishes_per_hour))
    Console().print(table)


@tenants_app.command("create")
def tenants_create(slug: str, name: str) -> None:
    """Create a tenant (workspace + queue)."""
    from control_plane.services.container import Services

    services = Services.build(_settings())
    tenant = services.tenants.create(slug, name)

    async def queue() -> None:
        async with services.gateway as gateway:
            await gateway.ensure_queue(tenant.slug)

    try:
        asyncio.run(queue())
    except Exception as exc:
        console.print(f"[yellow]queue not created yet ({exc}); the relay creates it before the first run[/yellow]")
    console.print(f"created tenant {tenant.slug}")


def main() -> None:
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    app()


if __name__ == "__main__":
    main()
