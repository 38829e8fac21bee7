"""One shard's runtime process: its internal API and its runtime worker, over its own data directory.

It holds only its tenants' workspaces (``PRESSROOM_DATA_DIR`` of this shard),
runs their commands (``ShardHost`` over the same ``InProcessRuntime`` the
embedded stack uses), hands committed operations to its own relay, and runs
its tenants' flow runs with a ``RuntimeWorker`` limited to them. Both share one
event loop; commands run on worker threads, the relay on the hand-off's thread.
"""

from __future__ import annotations

import asyncio
import signal

import structlog

from dispatch.prefect_gateway import PrefectGateway
from dispatch.relay import Relay
from dispatch.runtime.handoff import RelayHandoff
from dispatch.runtime.in_process import InProcessRuntime
from dispatch.runtime.server import create_runtime_app
from dispatch.runtime.shard import ShardHost
from dispatch.settings import DispatchSettings, ShardRuntimeSettings
from dispatch.worker import RuntimeWorker
from flows import runtime as flow_runtime
from tenant_runtime.config import SettingsError
from tenant_runtime.heap import settle_heap
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.workspace import WorkspaceFactory

log = structlog.get_logger("pressroom.runtime")


def build_host(name: str, runtime: RuntimeSettings, dispatch: DispatchSettings) -> tuple[ShardHost, RelayHandoff]:
    """The shard's host, with its relay hand-off (on a Prefect client of its own)."""
    factory = WorkspaceFactory(runtime)
    flow_runtime.configure(factory)
    relay_port = PrefectGateway(dispatch)
    relay = Relay(factory, relay_port, dispatch.coalescing)
    handoff = RelayHandoff(relay.relay_tenant, close=relay_port.close)
    return ShardHost(name, factory, InProcessRuntime(factory, dispatch, handoff), handoff), handoff


async def serve_shard(
    name: str,
    runtime: RuntimeSettings,
    dispatch: DispatchSettings,
    server: ShardRuntimeSettings,
    *,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve shard ``name`` until SIGTERM/SIGINT (or ``stop``): the API first, then the worker."""
    import uvicorn

    if server.runtime_secret is None or len(server.runtime_secret.get_secret_value()) < 16:
        raise SettingsError("PRESSROOM_RUNTIME_SECRET: a shard runtime needs a secret of at least 16 characters")
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    host, handoff = build_host(name, runtime, dispatch)
    app = create_runtime_app(host, server.runtime_secret.get_secret_value())
    config = uvicorn.Config(
        app, host=server.runtime_host, port=server.runtime_port, log_level="warning", access_log=False, lifespan="off"
    )
    api = uvicorn.Server(config)
    settle_heap()
    async with PrefectGateway(dispatch) as gateway:
        worker = RuntimeWorker(dispatch, host.factory, gateway, tenants=host.tenants, platform=server.runtime_platform)
        host.busy = worker.busy
        serving = asyncio.create_task(api.serve())
        # uvicorn takes SIGTERM/SIGINT while it serves; its exit (or failing to listen) stops the worker too.
        serving.add_done_callback(lambda _: stop.set())
        log.info("runtime.started", shard=name, port=server.runtime_port, tenants=len(host.tenants))
        try:
            await worker.run(stop)
        finally:
            api.should_exit = True
            await serving
            await asyncio.to_thread(handoff.close)
    log.info("runtime.stopped", shard=name)


__all__ = ["build_host", "serve_shard"]
