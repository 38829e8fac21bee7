"""A stopping worker exits promptly: a Prefect server that never answers cannot hold it, and runs
still going after the grace period are cancelled (to be resumed from the cache by the next worker)."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

from dispatch.prefect_gateway import PrefectGateway
from dispatch.settings import DispatchSettings
from dispatch.worker import RuntimeWorker
from tenant_runtime.edge import MemoryPurger
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.storage import MemoryStore
from tenant_runtime.storage.factory import StorageSettings
from tenant_runtime.workspace import WorkspaceFactory


def _factory(tmp_path: Path) -> WorkspaceFactory:
    settings = RuntimeSettings(data_dir=tmp_path, storage=StorageSettings(root=tmp_path / "objects"))
    factory = WorkspaceFactory(settings, store=MemoryStore(), purger=MemoryPurger())
    factory.create("acme")
    return factory


def test_sigterm_while_the_prefect_server_never_answers_stops_the_worker_at_once(tmp_path: Path) -> None:
    # A socket that accepts connections into its backlog and never answers: every API call hangs.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    port = silent.getsockname()[1]
    settings = DispatchSettings(api_url=f"http://127.0.0.1:{port}/api")

    async def main() -> float:
        stop = asyncio.Event()
        async with PrefectGateway(settings) as gateway:
            worker = RuntimeWorker(settings, _factory(tmp_path), gateway)
            running = asyncio.create_task(worker.run(stop))
            await asyncio.sleep(1.0)
            assert not running.done()  # still waiting on the silent server
            stop.set()
            t0 = time.monotonic()
            await asyncio.wait_for(running, timeout=10)
            return time.monotonic() - t0

    try:
        assert asyncio.run(main()) < 2.0
    finally:
        silent.close()


def test_runs_still_going_after_the_grace_period_are_cancelled(tmp_path: Path) -> None:
    settings = DispatchSettings(api_url="http://127.0.0.1:9/api")

    async def main() -> tuple[bool, bool]:
        worker = RuntimeWorker(settings, _factory(tmp_path), PrefectGateway(settings))
        quick = asyncio.create_task(asyncio.sleep(0.05))
        stuck = asyncio.create_task(asyncio.sleep(3600))
        worker._running.update({"quick": quick, "stuck": stuck})  # type: ignore[dict-item]
        await worker.drain(grace=0.3)
        return quick.done() and not quick.cancelled(), stuck.cancelled()

    finished, cancelled = asyncio.run(main())
    assert finished and cancelled
