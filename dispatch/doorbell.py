"""Push pickup: a runtime worker hears of a tenant's new run at once instead of at its next poll.

The relay and the worker share the tenants' workspaces, so they share a host
and a data directory. Each worker listening for pushes binds one Unix datagram
socket in ``{data_dir}/.doorbell/`` (``PRESSROOM_WORKER_PUSH``, on by default);
the relay, after it has sent a tenant's runs to Prefect (so they are committed
there), rings every socket in that directory with the tenant's slug. A bell of
this very process is rung directly (the worker's own relay after each run, or a
control plane and a worker in one process), without a syscall.

A ring only wakes the worker's poll loop early: the worker still asks Prefect
which runs are due and claims them as before, so a lost, late or duplicate ring
costs nothing but latency, and the poll every ``PRESSROOM_WORKER_POLL_SECONDS``
stays as the fallback (a worker on another host, a full socket buffer, a
directory the process may not bind in). A socket left by a worker that died
refuses the next ring and the ringer removes it; so does the next worker to open
its bell (it connects to each: a live bell hears nothing, a dead one refuses). A data directory too deep for a
socket path (``sun_path`` holds 107 bytes) gets its sockets in a short directory
of the system's temp dir named by a digest of the data directory's path, mode
700 and refused unless this user owns it, so workers and relays of one data
directory still find each other.

Why not Prefect's event stream (``prefect.flow-run.Scheduled`` over the
``/events/out`` websocket): the server emits the state event inside the
transaction that creates the run, so a worker woken by it can ask for due runs
before the run is visible and miss it until the next poll; and it costs the
server a websocket and a filter per worker. The ring is sent after Prefect
answered the create.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import secrets
import socket
import stat
import tempfile
import threading
from collections.abc import Set as AbstractSet
from pathlib import Path

import structlog

log = structlog.get_logger("pressroom.doorbell")
DIRECTORY = ".doorbell"
_MAX_SOCKET_PATH = 107  # sun_path is 108 bytes with the terminating NUL
_SOCKET_NAME_MAX = len("/worker-4194304-00000000.sock")  # the longest name open() binds (pid_max is 2**22)
_WAITING_MAX = 1000  # rings beyond this many tenants between polls only wake the loop
_LOCAL: set[Doorbell] = set()
_LOCAL_LOCK = threading.Lock()


def _directory(data_dir: Path) -> Path:
    """``{data_dir}/.doorbell``, or a short stand-in for it when a socket there would not fit ``sun_path``."""
    beside = Path(data_dir) / DIRECTORY
    if len(os.fsencode(beside)) + _SOCKET_NAME_MAX <= _MAX_SOCKET_PATH:
        return beside
    digest = hashlib.sha256(os.fsencode(Path(data_dir).resolve())).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"pressroom-doorbell-{digest}"


def _usable(directory: Path) -> bool:
    """Create ``directory`` (mode 700); one in a shared temp dir must be ours and closed to others."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if directory.name == DIRECTORY:
        return True
    info = os.lstat(directory)
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


class Doorbell:
    """One worker's bell: ``wait`` returns early when a tenant it serves has a new run."""

    def __init__(self, data_dir: Path, serves: AbstractSet[str] | None = None) -> None:
        self.directory = _directory(data_dir)
        self.serves = serves  # None: every tenant
        self.path: Path | None = None
        self.rings = 0
        # The tenants rung for since the worker last took them: its next poll asks for their queues
        # even when other tenants' older runs fill the pool's list of waiting runs.
        self.waiting: set[str] = set()
        self._sock: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._rung = asyncio.Event()

    def open(self) -> Doorbell:
        """Listen on this event loop (in process always; across processes when the socket can be bound)."""
        self._loop = asyncio.get_running_loop()
        with _LOCAL_LOCK:
            _LOCAL.add(self)
        path = self.directory / f"worker-{os.getpid()}-{secrets.token_hex(4)}.sock"
        if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
            log.warning("doorbell.path_too_long", path=str(path), fallback="poll")
            return self
        try:
            if not _usable(self.directory):
                log.warning("doorbell.directory_not_ours", path=str(self.directory), fallback="poll")
                return self
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.setblocking(False)
            try:
                sock.bind(os.fspath(path))
            except FileNotFoundError:  # a stand-in directory removed by the last bell leaving it: once more
                if not _usable(self.directory):
                    raise
                sock.bind(os.fspath(path))
        except OSError as exc:
            log.warning("doorbell.unavailable", path=str(path), error=str(exc), fallback="poll")
            return self
        self._sock, self.path = sock, path
        self._loop.add_reader(sock.fileno(), self._readable)
        _remove_dead(self.directory, keep=path)
        return self

    def close(self) -> None:
        with _LOCAL_LOCK:
            _LOCAL.discard(self)
        sock, self._sock = self._sock, None
        if sock is not None:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(sock.fileno())
            sock.close()
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            self.path = None
            if self.directory.name != DIRECTORY:  # a stand-in in the shared temp dir: the last bell takes it away
                with contextlib.suppress(OSError):
                    self.directory.rmdir()

    async def wait(self, timeout: float) -> bool:
        """Until rung (True) or ``timeout`` seconds (False); a ring since the last wait returns at once."""
        try:
            await asyncio.wait_for(self._rung.wait(), timeout)
        except TimeoutError:
            return False
        finally:
            self._rung.clear()
        return True

    def ring(self) -> None:
        """Wake the loop (from this loop's thread)."""
        self.rings += 1
        self._rung.set()

    def ring_for(self, tenant: str) -> None:
        """Wake the loop if it serves ``tenant`` (from any thread)."""
        if (self.serves is None or tenant in self.serves) and self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(self._ring_tenant, tenant)

    def take_waiting(self) -> set[str]:
        """The tenants rung for since the last call (from this loop's thread)."""
        waiting, self.waiting = self.waiting, set()
        return waiting

    def _ring_tenant(self, tenant: str) -> None:
        if len(self.waiting) < _WAITING_MAX:
            self.waiting.add(tenant)
        self.ring()

    def _readable(self) -> None:
        while self._sock is not None:
            try:
                data = self._sock.recv(256)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            tenant = data.decode(errors="replace")
            if self.serves is None or tenant in self.serves:
                self._ring_tenant(tenant)


def _remove_dead(directory: Path, *, keep: Path) -> int:
    """Remove the sockets of workers that died without closing their bell (a kill -9), however long no ring
    came; how many. A connect reaches a live bell without sending it anything; a dead one refuses it."""
    removed = 0
    try:
        entries = [e for e in os.scandir(directory) if e.name.endswith(".sock") and e.path != os.fspath(keep)]
    except OSError:
        return 0
    for entry in entries:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as probe:
            try:
                probe.connect(entry.path)
            except ConnectionRefusedError:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue  # gone meanwhile, or not ours to judge
    return removed


def ring(data_dir: Path, tenant: str) -> int:
    """Tell the workers on this host that ``tenant`` has a new run; how many sockets were reached.

    Never raises and never blocks: a ring is a hint (see the module doc).
    """
    directory = _directory(data_dir)
    own: set[str] = set()
    with _LOCAL_LOCK:
        local = [bell for bell in _LOCAL if bell.directory == directory]
    for bell in local:
        bell.ring_for(tenant)
        if bell.path is not None:
            own.add(os.fspath(bell.path))
    try:
        paths = [p for p in os.scandir(directory) if p.name.endswith(".sock") and p.path not in own]
    except OSError:
        return 0
    if not paths:
        return 0
    reached = 0
    message = tenant.encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.setblocking(False)
        for entry in paths:
            try:
                sock.sendto(message, entry.path)
                reached += 1
            except BlockingIOError:
                reached += 1  # its buffer is full of rings already: it is awake
            except (ConnectionRefusedError, FileNotFoundError):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)  # its worker is gone
            except OSError as exc:
                log.debug("doorbell.ring_failed", path=entry.path, error=str(exc))
    return reached


__all__ = ["DIRECTORY", "Doorbell", "ring"]
