"""Push pickup: the relay's ring wakes a worker's poll loop at once, in process and across processes."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, cast

import pytest

from dispatch import doorbell
from dispatch.doorbell import Doorbell
from dispatch.prefect_twin import RecordingPrefect
from dispatch.relay import Relay
from dispatch.settings import DispatchSettings
from dispatch.worker import RuntimeWorker
from tenant_runtime.actions.documents import create_document
from tenant_runtime.actions.outbox import Coalescing
from tenant_runtime.actions.publishing import publish_document
from tenant_runtime.workspace import Actor, Workspace, WorkspaceFactory

OWNER = Actor.for_role("u-owner", "owner")


async def _wait(bell: Doorbell, timeout: float) -> tuple[bool, float]:
    started = time.monotonic()
    rung = await bell.wait(timeout)
    return rung, time.monotonic() - started


@pytest.mark.parametrize("depth", ["shallow", "too deep for a socket path"])
def test_a_ring_from_another_process_wakes_a_worker_serving_the_tenant(tmp_path: Path, depth: str) -> None:
    data_dir = tmp_path / "data" if depth == "shallow" else tmp_path / ("d" * 90) / "data"
    short = len(str(tmp_path / "data" / ".doorbell")) + 30 <= 107
    if depth == "shallow" and not short:
        pytest.skip("this temp dir is itself too deep for a socket beside the data")

    async def go() -> tuple[tuple[bool, float], tuple[bool, float], int]:
        bell = Doorbell(data_dir, frozenset({"acme"})).open()
        try:
            # Beside the data, or (too deep) in a short directory of the temp dir both sides derive.
            expected = data_dir / ".doorbell" if depth == "shallow" else Path(tempfile.gettempdir())
            assert bell.path is not None and (bell.path.parent == expected or bell.path.parent.parent == expected)
            assert len(os.fsencode(bell.path)) <= 107
            code = "import sys; from dispatch.doorbell import ring; sys.exit(ring(sys.argv[1], sys.argv[2]) != 1)"
            ringer = await asyncio.create_subprocess_exec(sys.executable, "-c", code, str(data_dir), "acme")
            woken = await _wait(bell, 60)  # the ringer is a fresh interpreter: slow to start on a busy machine
            assert await ringer.wait() == 0  # it reached exactly the one socket
            assert bell.take_waiting() == {"acme"} and bell.take_waiting() == set()  # the next poll names acme's queue
            # A ring for a tenant this worker does not serve does not wake it.
            await asyncio.to_thread(_ring_raw, bell.path, b"other")
            ignored = await _wait(bell, 0.3)
            assert bell.take_waiting() == set()
            return woken, ignored, bell.rings
        finally:
            bell.close()

    (rung, waited), (other_rung, _), rings = asyncio.run(go())
    assert rung and waited < 60 and rings == 1
    assert not other_rung
    if depth == "shallow":
        assert not list(doorbell._directory(data_dir).iterdir())  # closing removes its socket
    else:
        assert not doorbell._directory(data_dir).exists()  # and a stand-in in the shared temp dir with it


def test_a_stand_in_directory_that_others_can_enter_is_refused_and_the_worker_polls(tmp_path: Path) -> None:
    data_dir = tmp_path / ("d" * 90) / "data"
    directory = doorbell._directory(data_dir)
    directory.mkdir(mode=0o700)
    directory.chmod(0o777)  # as another user could have left it in a shared /tmp
    try:

        async def go() -> Path | None:
            bell = Doorbell(data_dir).open()
            bell.close()
            return bell.path

        assert asyncio.run(go()) is None
        assert not list(directory.iterdir())
    finally:
        directory.rmdir()


def _ring_raw(path: Path, data: bytes) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.sendto(data, str(path))


def test_a_bell_of_this_process_is_rung_directly_from_any_thread_and_only_for_its_data_dir(tmp_path: Path) -> None:
    async def go() -> tuple[bool, bool]:
        mine = Doorbell(tmp_path / "a").open()
        theirs = Doorbell(tmp_path / "b").open()
        try:
            threading.Thread(target=doorbell.ring, args=(tmp_path / "a", "acme")).start()
            rung, _ = await _wait(mine, 5)
            other, _ = await _wait(theirs, 0.2)
            return rung, other
        finally:
            mine.close()
            theirs.close()

    assert asyncio.run(go()) == (True, False)


def test_the_socket_of_a_dead_worker_is_removed_by_the_next_ring(tmp_path: Path) -> None:
    directory = doorbell._directory(tmp_path)
    directory.mkdir(mode=0o700)
    dead = directory / "worker-1-dead.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(dead))
    sock.close()  # the file stays, nobody listens: as after a kill -9

    assert doorbell.ring(tmp_path, "acme") == 0
    assert not dead.exists()
    assert doorbell.ring(tmp_path / "nowhere", "acme") == 0  # no directory: nothing to ring, no error


def test_the_next_worker_to_open_its_bell_removes_dead_sockets_and_leaves_live_ones(tmp_path: Path) -> None:
    directory = doorbell._directory(tmp_path)
    directory.mkdir(mode=0o700)
    dead = directory / "worker-1-dead.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as gone:
        gone.bind(str(dead))  # closed at once, the file left: as after a kill -9
    live_path = directory / "worker-2-live.sock"
    live = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    live.bind(str(live_path))
    live.setblocking(False)

    async def open_and_close() -> Path | None:
        bell = Doorbell(tmp_path).open()
        try:
            return bell.path
        finally:
            bell.close()

    try:
        opened = asyncio.run(open_and_close())
        assert opened is not None and opened.parent == directory
        assert not dead.exists() and live_path.exists()
        with pytest.raises(BlockingIOError):
            live.recv(256)  # the live bell was only connected to: no ring reached it
    finally:
        live.close()


def test_the_relay_rings_once_its_runs_are_in_prefect_and_not_when_push_is_off(
    workspace_factory: WorkspaceFactory, workspace: Workspace
) -> None:
    async def go(push: bool) -> tuple[int, int]:
        bell = Doorbell(workspace_factory.settings.data_dir).open()
        try:
            with workspace.transaction() as tx:
                document = create_document(
                    tx, OWNER, slug=f"n-{str(push).lower()}", title="N", body="Body", kind="post"
                )
                publish_document(tx, workspace.tenant, OWNER, document.id)
            relay = Relay(workspace_factory, RecordingPrefect(), Coalescing(in_flight=10), push=push)
            sent = await relay.relay_tenant(workspace.tenant)
            await asyncio.sleep(0.05)
            await relay.relay_tenant(workspace.tenant)  # nothing left to send: no ring
            await asyncio.sleep(0.05)
            return sent, bell.rings
        finally:
            bell.close()

    assert asyncio.run(go(True)) == (1, 1)
    assert asyncio.run(go(False)) == (1, 0)


def test_a_ringing_doorbell_ends_the_workers_idle_wait_at_once(workspace_factory: WorkspaceFactory) -> None:
    settings = DispatchSettings(PRESSROOM_WORKER_POLL_SECONDS=30)  # type: ignore[call-arg]
    worker = RuntimeWorker(settings, workspace_factory, cast(Any, RecordingPrefect()))

    async def go() -> float:
        worker.doorbell = Doorbell(workspace_factory.settings.data_dir).open()
        try:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            loop.call_later(0.05, doorbell.ring, workspace_factory.settings.data_dir, "acme")
            started = time.monotonic()
            await worker._idle(stop)
            return time.monotonic() - started
        finally:
            worker.doorbell.close()

    assert asyncio.run(go()) < 5  # not the 30 s poll
