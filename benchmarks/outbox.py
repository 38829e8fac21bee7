"""Read operation rows straight from tenant workspaces, without loading the servers under test.

Polling the tenant API for hundreds of operations would put the harness's own
load on the control plane; a read-only SQLite query on each workspace costs
the measured processes nothing. Timestamps are the ones the operation itself
records (created in the command's transaction, finished when settled).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FINAL = frozenset({"succeeded", "superseded", "failed", "dead", "cancelled"})
DONE = frozenset({"succeeded", "superseded", "dead", "cancelled"})


@dataclass(frozen=True)
class OperationRow:
    id: str
    status: str
    created_at: datetime
    sent_at: datetime | None
    finished_at: datetime | None
    flow_run_id: str | None
    parameters: dict[str, Any]
    retries: int

    @property
    def latency(self) -> float | None:
        """Queued (command committed) → finished, seconds."""
        if self.finished_at is None:
            return None
        return (self.finished_at - self.created_at).total_seconds()


def _when(raw: Any) -> datetime | None:
    if raw is None:
        return None
    value = datetime.fromisoformat(str(raw))
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Outbox:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir

    def _connect(self, tenant: str) -> sqlite3.Connection:
        path = self.data_dir / "tenants" / tenant / "workspace.db"
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)

    def rows(self, tenant: str, ids: Iterable[str] | None = None) -> dict[str, OperationRow]:
        query = "SELECT id, status, created_at, sent_at, finished_at, flow_run_id, parameters, retries FROM operation"
        with self._connect(tenant) as conn:
            fetched = conn.execute(query).fetchall()
        wanted = set(ids) if ids is not None else None
        out = {}
        for row in fetched:
            if wanted is not None and row[0] not in wanted:
                continue
            out[row[0]] = OperationRow(
                row[0],
                row[1],
                _when(row[2]),
                _when(row[3]),
                _when(row[4]),
                row[5],
                json.loads(row[6]) if row[6] else {},
                int(row[7] or 0),
            )
        return out

    def status_counts(self, tenants: Iterable[str]) -> tuple[Counter[str], int]:
        """Operations by status across ``tenants``, and how many are still unsent.

        Publishes waiting, by design, for their tenant's publish run to finish (to be coalesced
        into the next batch: no ``batch_id`` yet) are not counted as unsent.
        """
        counts: Counter[str] = Counter()
        unsent = 0
        for tenant in tenants:
            with self._connect(tenant) as conn:
                for status, n in conn.execute("SELECT status, count(*) FROM operation GROUP BY status"):
                    counts[status] += n
                unsent += conn.execute(
                    "SELECT count(*) FROM operation WHERE sent_at IS NULL AND status IN ('queued', 'scheduled')"
                    " AND NOT (kind = 'publish' AND batch_id IS NULL)"
                ).fetchone()[0]
        return counts, unsent

    async def wait_final(
        self, tenant: str, operation_id: str, *, timeout: float, statuses: frozenset[str] = DONE, interval: float = 0.05
    ) -> OperationRow:
        """Poll until the operation reaches one of ``statuses``; TimeoutError names where it stuck."""
        deadline = time.monotonic() + timeout
        last: OperationRow | None = None
        while True:
            last = (await asyncio.to_thread(self.rows, tenant, [operation_id])).get(operation_id)
            if last is not None and last.status in statuses:
                return last
            if time.monotonic() > deadline:
                state = last.status if last else "missing"
                raise TimeoutError(f"operation {tenant}/{operation_id} still {state} after {timeout:.0f} s")
            await asyncio.sleep(interval)

    async def wait_sent(self, tenants: list[str], *, timeout: float) -> float:
        """Wait until every queued operation of ``tenants`` has its flow run; returns seconds waited."""
        t0 = time.monotonic()
        while True:
            _, unsent = await asyncio.to_thread(self.status_counts, tenants)
            if unsent == 0:
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(f"{unsent} operations still unsent after {timeout:.0f} s")
            await asyncio.sleep(0.2)
