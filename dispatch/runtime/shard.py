"""A shard's runtime: the tenants it holds, and the drain → export → import → release of a move.

``ShardTenants`` is the live set of tenants whose workspaces this runtime
holds (loaded from its data directory at start, changed only by creation,
import and export). A draining tenant is still a member (a run already taken
finishes and settles) but is left out of iteration, so the worker neither polls
its queue nor sweeps it. ``ShardHost`` serves the shard's tenants: it refuses a
tenant it does not hold (``tenant_not_on_shard``) and, while a tenant drains, its
commands (``tenant_moving``, 503 with Retry-After), and it hands a tenant over:

1. ``drain``: refuse new commands, wait for the commands and flow runs in
   flight, flush the relay hand-off; on timeout resume and fail (nothing moved).
2. ``export``: move the workspace out of the serving directory into
   ``handover/`` (the runtime no longer holds it), and return a consistent
   snapshot of it (SQLite online backup) with its SHA-256.
3. ``import_`` (on the target): verify the SHA-256 and integrity, put the
   workspace in place, hold the tenant, relay whatever it left unsent.
4. ``release`` (on the source, after the placement flips): delete the
   hand-over copy; or ``resume`` (the move failed): put it back and serve again.

On a shard whose workspaces are on PostgreSQL the hand-over is the same SQLite
file (``tenant_runtime.lifecycle.handover``): export writes the schema's rows
into it and renames the schema out of service, import builds a new schema
from it, release drops the held schema, resume renames it back. Shards of
either backend move tenants to each other.

Unsent operations travel inside the workspace; runs already in Prefect wait on
the tenant's queue for whichever runtime holds the tenant; the relay's
idempotency keys make a re-send find the run it created before. So an operation
is neither lost nor run twice across a move.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import structlog

from dispatch.runtime import messages as m
from dispatch.runtime.handoff import RelayHandoff
from dispatch.runtime.in_process import InProcessRuntime
from dispatch.runtime.views import CommandResult
from tenant_runtime.errors import BadRequest, Conflict, NotOnShard, TenantMoving, Unavailable
from tenant_runtime.ids import check_tenant_slug
from tenant_runtime.lifecycle import handover
from tenant_runtime.workspace import WorkspaceFactory, list_tenants

log = structlog.get_logger("pressroom.shard")
MOVE_RETRY_AFTER = 5  # seconds a client waits before retrying a command of a moving tenant
DRAIN_SETTLE_SECONDS = 0.1


class ShardTenants(AbstractSet[str]):
    """The tenants a runtime holds; iteration leaves out the draining ones (see the module docstring)."""

    def __init__(self, tenants: Iterable[str] = ()) -> None:
        self._held: set[str] = set(tenants)
        self._draining: set[str] = set()
        self._lock = threading.Lock()

    def __contains__(self, tenant: object) -> bool:
        with self._lock:
            return tenant in self._held

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(sorted(self._held - self._draining))

    def __len__(self) -> int:
        with self._lock:
            return len(self._held - self._draining)

    def add(self, tenant: str) -> None:
        with self._lock:
            self._held.add(tenant)

    def remove(self, tenant: str) -> None:
        with self._lock:
            self._held.discard(tenant)
            self._draining.discard(tenant)

    def drain(self, tenant: str) -> None:
        with self._lock:
            self._draining.add(tenant)

    def undrain(self, tenant: str) -> None:
        with self._lock:
            self._draining.discard(tenant)

    def draining(self, tenant: str) -> bool:
        with self._lock:
            return tenant in self._draining


class ShardHost:
    """The runtime of one shard: its tenants' queries and commands, and their hand-over."""

    def __init__(
        self,
        name: str,
        factory: WorkspaceFactory,
        runtime: InProcessRuntime,
        handoff: RelayHandoff | None,
        *,
        busy: Callable[[str], bool] | None = None,
    ) -> None:
        self.name = name
        self.factory = factory
        self.runtime = runtime
        self.handoff = handoff
        self.tenants = ShardTenants(list_tenants(factory.settings))
        # Whether the shard's worker is running a flow run of the tenant (set once the worker exists).
        self.busy: Callable[[str], bool] = busy or (lambda tenant: False)
        self._in_flight: dict[str, int] = {}
        self._idle = threading.Condition()

    @property
    def handover_dir(self) -> Path:
        return self.factory.settings.data_dir / "handover"

    # --- serving ---------------------------------------------------------------------------------------

    def _require(self, tenant: str) -> None:
        check_tenant_slug(tenant)
        if tenant not in self.tenants:
            raise NotOnShard(
                f"Tenant {tenant!r} is not on shard {self.name!r}.", details={"tenant": tenant, "shard": self.name}
            )

    def query(self, tenant: str, actor: m.ActorRef, query: m.Message) -> Any:
        self._require(tenant)
        return self.runtime.query(tenant, actor, query)

    def execute(self, tenant: str, command: m.Command) -> CommandResult:
        if isinstance(command.message, m.CreateWorkspace):
            # The control plane placed the tenant here before asking (the shard credential vouches for it).
            result = self.runtime.execute(tenant, command)
            self.tenants.add(tenant)
            return result
        with self._command(tenant):
            return self.runtime.execute(tenant, command)

    @contextmanager
    def _command(self, tenant: str) -> Iterator[None]:
        self._require(tenant)
        with self._idle:
            if self.tenants.draining(tenant):
                raise _moving(tenant)
            self._in_flight[tenant] = self._in_flight.get(tenant, 0) + 1
        try:
            yield
        finally:
            with self._idle:
                self._in_flight[tenant] -= 1
                if not self._in_flight[tenant]:
                    del self._in_flight[tenant]
                self._idle.notify_all()

    # --- hand-over -------------------------------------------------------------------------------------

    def drain(self, tenant: str, timeout: float = 60.0) -> dict[str, Any]:
        """Stop taking the tenant's commands and runs; return once nothing of it is in flight."""
        self._require(tenant)
        started = time.monotonic()
        deadline = started + timeout
        self.tenants.drain(tenant)
        # The worker checks "draining" and counts a run as busy in one step on its own thread;
        # a beat later, a run it took just before the drain shows as busy.
        time.sleep(DRAIN_SETTLE_SECONDS)
        with self._idle:
            commands_done = self._idle.wait_for(lambda: tenant not in self._in_flight, timeout)
        while commands_done and self.busy(tenant) and time.monotonic() < deadline:
            time.sleep(0.05)
        relayed = self.handoff.flush(max(0.1, deadline - time.monotonic())) if self.handoff is not None else True
        if not commands_done or self.busy(tenant) or not relayed:
            self.tenants.undrain(tenant)
            raise Unavailable(
                "The tenant still has work in flight; the move was called off and it is served here again.",
                details={"tenant": tenant, "shard": self.name, "timeout": timeout},
            )
        waited = round(time.monotonic() - started, 3)
        log.info("shard.drained", tenant=tenant, shard=self.name, seconds=waited)
        return {"tenant": tenant, "shard": self.name, "drained_in_seconds": waited}

    @property
    def _postgres(self) -> bool:
        return self.factory.settings.postgres_workspaces

    def export(self, tenant: str) -> tuple[bytes, str]:
        """Take the drained tenant out of service and return a snapshot of its workspace and its SHA-256."""
        held = self.handover_dir / tenant / "workspace.db"
        if tenant in self.tenants:
            if not self.tenants.draining(tenant):
                raise Conflict("Drain the tenant before exporting it.", details={"tenant": tenant})
            self.factory.forget(tenant)
            held.parent.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(held.parent, ignore_errors=True)
            folder = self.factory.settings.workspace_path(tenant).parent
            if self._postgres:
                folder.mkdir(parents=True, exist_ok=True)  # the tenant's files beside its schema travel too
            folder.rename(held.parent)
            if self._postgres:
                handover.hold(self.factory.settings, tenant, held)
            self.tenants.remove(tenant)
        elif not held.exists():  # exported before: a retried move exports the same copy again
            self._require(tenant)
        data = _snapshot(held)
        digest = hashlib.sha256(data).hexdigest()
        log.info("shard.exported", tenant=tenant, shard=self.name, bytes=len(data), sha256=digest)
        return data, digest

    def import_(self, tenant: str, data: bytes, sha256: str) -> dict[str, Any]:
        """Hold ``tenant`` from the snapshot ``data``; refuses a damaged snapshot, replaces an earlier import."""
        check_tenant_slug(tenant)
        if hashlib.sha256(data).hexdigest() != sha256:
            raise BadRequest("The snapshot does not match its SHA-256.", details={"tenant": tenant})
        if tenant in self.tenants and not self.tenants.draining(tenant):
            raise Conflict(f"Shard {self.name!r} already serves {tenant!r}.", details={"tenant": tenant})
        path = self.factory.settings.workspace_path(tenant)
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = path.with_name(f".import-{time.time_ns()}.db")
        staged.write_bytes(data)
        try:
            _check_integrity(staged)
        except Exception:
            staged.unlink(missing_ok=True)
            raise
        self.factory.forget(tenant)
        if self._postgres:
            try:
                handover.install(self.factory.settings, tenant, staged)
            finally:
                staged.unlink(missing_ok=True)
        else:
            for suffix in ("-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            staged.replace(path)
        self.factory.open(tenant)  # upgrades the schema if this runtime's chain is newer
        self.tenants.add(tenant)
        self.tenants.undrain(tenant)
        if self.handoff is not None:
            self.handoff.notify(tenant)  # whatever the source left unsent goes out from here
        log.info("shard.imported", tenant=tenant, shard=self.name, bytes=len(data))
        return {"tenant": tenant, "shard": self.name, "bytes": len(data)}

    def release(self, tenant: str) -> dict[str, Any]:
        """The move is done: forget the hand-over copy."""
        check_tenant_slug(tenant)
        if self._postgres:
            handover.release(self.factory.settings, tenant)
        shutil.rmtree(self.handover_dir / tenant, ignore_errors=True)
        return {"tenant": tenant, "shard": self.name, "released": True}

    def resume(self, tenant: str) -> dict[str, Any]:
        """The move was called off: serve the tenant here again (from the hand-over copy if it was exported)."""
        check_tenant_slug(tenant)
        held = self.handover_dir / tenant
        if tenant not in self.tenants and (held / "workspace.db").exists():
            target = self.factory.settings.workspace_path(tenant).parent
            if target.exists():
                raise Conflict("The tenant's workspace is back already.", details={"tenant": tenant})
            target.parent.mkdir(parents=True, exist_ok=True)
            held.rename(target)
            if self._postgres:
                handover.unhold(self.factory.settings, tenant)
                (target / "workspace.db").unlink(missing_ok=True)  # the hand-over file; the schema is the workspace
            self.tenants.add(tenant)
        self._require(tenant)
        self.tenants.undrain(tenant)
        if self.handoff is not None:
            self.handoff.notify(tenant)
        return {"tenant": tenant, "shard": self.name, "resumed": True}


def _moving(tenant: str) -> TenantMoving:
    return TenantMoving(
        "This site is moving to another runtime; try again in a few seconds.",
        details={"tenant": tenant, "retry_after": MOVE_RETRY_AFTER},
    )


def _snapshot(path: Path) -> bytes:
    """A consistent copy of a SQLite database (WAL included), through the online backup API."""
    target = path.with_name(f".snapshot-{time.time_ns()}.db")
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)
        finally:
            copy.close()
    finally:
        source.close()
    try:
        return target.read_bytes()
    finally:
        target.unlink(missing_ok=True)


def _check_integrity(path: Path) -> None:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (result,) = connection.execute("PRAGMA integrity_check").fetchone()
    except sqlite3.DatabaseError as exc:
        raise BadRequest("The snapshot is not a workspace database.", details={"error": str(exc)}) from None
    finally:
        connection.close()
    if result != "ok":
        raise BadRequest("The snapshot fails SQLite's integrity check.", details={"result": str(result)[:200]})


__all__ = ["MOVE_RETRY_AFTER", "ShardHost", "ShardTenants"]
