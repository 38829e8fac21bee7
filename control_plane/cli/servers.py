"""``pressroom up|serve|site|worker|runtime|migrate``: the stack and each of its servers."""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING, Annotated

import typer

from control_plane.cli.common import app, console, logging_from, settings_from_env

if TYPE_CHECKING:
    from tenant_runtime.workspace.open import TenantMigration


@app.command()
def up(
    seed: Annotated[bool, typer.Option(help="Create and seed the example tenant.")] = True,
    wait: Annotated[
        bool,
        typer.Option(
            help="Keep running (supervised) until stopped; --no-wait stops again once everything is up, a smoke check."
        ),
    ] = True,
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
    from tenant_runtime.heap import settle_heap

    settings = settings_from_env()
    logging_from(settings)
    application = create_app(settings)
    settle_heap()
    uvicorn.run(
        application,
        host=host or settings.control_plane.host,
        port=port or settings.control_plane.port,
        log_level="warning",
        access_log=False,
    )


@app.command()
def site(
    host: Annotated[str | None, typer.Option()] = None, port: Annotated[int | None, typer.Option()] = None
) -> None:
    """Run the public site server (read-only)."""
    import uvicorn

    from control_plane.public.app import create_site_asgi
    from tenant_runtime.heap import settle_heap

    settings = settings_from_env()
    logging_from(settings)
    application = create_site_asgi(settings)
    settle_heap()
    uvicorn.run(
        application,
        host=host or settings.control_plane.site_host,
        port=port or settings.control_plane.site_port,
        log_level="warning",
        access_log=False,
    )


@app.command()
def worker(
    tenant: Annotated[list[str] | None, typer.Option("--tenant", help="Serve only these tenants.")] = None,
    platform: Annotated[
        bool | None,
        typer.Option(
            "--platform/--no-platform",
            help="Also run platform runs (nightly fan-outs); default: only a worker of every tenant does.",
        ),
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            "--metrics-port",
            envvar="PRESSROOM_WORKER_METRICS_PORT",
            help="Serve this process's Prometheus metrics (sweep, relay, steps) on 127.0.0.1:PORT/metrics.",
        ),
    ] = None,
) -> None:
    """Run a runtime worker: executes flow runs of tenant queues in this process."""
    from prometheus_client import start_http_server

    from dispatch.prefect_gateway import PrefectGateway
    from dispatch.worker import RuntimeWorker
    from flows import runtime
    from tenant_runtime.heap import settle_heap
    from tenant_runtime.workspace import WorkspaceFactory

    settings = settings_from_env()
    logging_from(settings)
    if metrics_port is not None:
        # Loopback only: a worker has no credential check of its own (a shard runtime serves /metrics on its API).
        start_http_server(metrics_port, addr="127.0.0.1")
    factory = WorkspaceFactory(settings.runtime)
    runtime.configure(factory)
    settle_heap()

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with PrefectGateway(settings.dispatch) as gateway:
            tenants = frozenset(tenant) if tenant else None
            await RuntimeWorker(settings.dispatch, factory, gateway, tenants=tenants, platform=platform).run(stop)

    asyncio.run(main())


@app.command()
def runtime(
    shard: Annotated[str, typer.Option("--shard", help="The shard this runtime serves (its tenants, its queues).")],
    host: Annotated[str | None, typer.Option()] = None,
    port: Annotated[int | None, typer.Option()] = None,
) -> None:
    """Run a shard's tenant runtime: its internal API (PRESSROOM_RUNTIME_SECRET) and its tenants' worker."""
    from dispatch.runtime.process import serve_shard
    from dispatch.settings import ShardRuntimeSettings
    from tenant_runtime.config import SettingsError

    settings = settings_from_env()
    logging_from(settings)
    overrides = {k: v for k, v in {"runtime_host": host, "runtime_port": port}.items() if v is not None}
    try:
        server = ShardRuntimeSettings.from_env(None, **overrides)
        asyncio.run(serve_shard(shard, settings.runtime, settings.dispatch, server))
    except SettingsError as exc:
        console.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None


@app.command("migrate")
def migrate() -> None:
    """Bring the control-plane database and every tenant workspace up to date (with progress)."""
    from rich.progress import Progress

    from control_plane.db import upgrade
    from tenant_runtime.workspace import list_tenants, migrate_workspaces

    settings = settings_from_env()
    upgrade(settings.database_url)
    console.print("control-plane schema is up to date")
    failed: list[str] = []
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task("tenant workspaces", total=len(list_tenants(settings.runtime)))

        def report(outcome: TenantMigration) -> None:
            progress.advance(bar)
            if not outcome.ok:
                failed.append(outcome.tenant)
                console.print(f"[red]{outcome.tenant}: {outcome.error}[/red]")
            elif outcome.result is not None and outcome.result.upgraded:
                console.print(
                    f"{outcome.tenant}: {outcome.result.from_revision or 'unversioned'} → {outcome.result.to_revision}"
                )

        outcomes = migrate_workspaces(settings.runtime, report)
    console.print(f"{len(outcomes) - len(failed)} of {len(outcomes)} tenant workspaces are up to date")
    if failed:
        raise typer.Exit(1)
