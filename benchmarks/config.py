"""How big each suite is: the issue's counts (full) and a smoke-sized profile (quick)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# The order suites run in: later suites leave more behind in the Prefect database
# (idle tenants, then a backlog of far-future runs), so they come last.
SUITE_NAMES = (
    "command_ack",
    "visible",
    "materialized",
    "retry_cost",
    "fairness",
    "throughput",
    "idle_tenants",
    "scheduled_backlog",
)
# Run only when asked for (--suite NAME): whatif* measure proposed core changes patched in-process;
# brief_intake measures the brief API (issue 13); backup_import backups, imports and the nightly fan-out (issue 11);
# scale how costs grow with tenants up to 10,000 (issue 14); dashboard_pages times the dashboard's pages on a
# tenant of the size (issue 15).
EXTRA_SUITES = ("whatif", "whatif_fairness", "brief_intake", "backup_import", "scale", "dashboard_pages")
# Suites that build what they measure in-process and need none of the stack: run alone, no stack starts
# (its idle Prefect server and PostgreSQL would only add noise to what they time).
STACKLESS_SUITES = ("dashboard_pages",)


@dataclass(frozen=True)
class Profile:
    name: str
    # command_ack: rounds of (Pressroom, bare Prefect), interleaved; paced (open loop) then saturated
    ack_tenants: int
    ack_clients: int
    ack_rate: float  # paced: publishes per second offered by all clients together (Poisson arrivals)
    ack_paced_seconds: float
    ack_rounds: int
    ack_saturated_per_round: int
    ack_saturated_rounds: int
    # visible
    visible_samples: int
    # materialized: triples (Pressroom worker, process worker, in-process floor)
    materialized_samples: int
    # throughput: seconds of sustained load, split into interleaved segments
    throughput_tenants: int
    throughput_window: float
    throughput_baseline_window: float
    throughput_segments: int
    # fairness
    fairness_flood: int
    fairness_samples: int
    fairness_timeout: float
    # idle tenants
    idle_tenants: int
    idle_window: float
    idle_restart: bool  # also time a worker start-up with every tenant
    # scheduled backlog
    backlog_runs: int
    backlog_window: float
    backlog_due_runs: int
    backlog_sqlite: bool
    backlog_sqlite_runs: int
    backlog_create_budget: float
    # profile of the largest cost: its own uncounted segment, or (quick) during the measured one
    profile_seconds: float
    profile_inline: bool
    # dashboard pages: the big tenant's rows (issue 15: 10,000 documents, 50,000 operations) and rounds
    pages_documents: int = 10_000
    pages_operations: int = 50_000
    pages_media: int = 5_000
    pages_briefs: int = 5_000
    pages_audit: int = 20_000
    pages_rounds: int = 30

    @classmethod
    def quick(cls) -> Profile:
        return cls(
            name="quick",
            ack_tenants=20,
            ack_clients=50,
            ack_rate=4.0,
            ack_paced_seconds=4,
            ack_rounds=2,
            ack_saturated_per_round=50,
            ack_saturated_rounds=1,
            visible_samples=10,
            materialized_samples=2,
            throughput_tenants=20,
            throughput_window=15,
            throughput_baseline_window=15,
            throughput_segments=1,
            fairness_flood=100,
            fairness_samples=2,
            fairness_timeout=60,
            idle_tenants=100,
            idle_window=6,
            idle_restart=False,
            backlog_runs=1_000,
            backlog_window=5,
            backlog_due_runs=100,
            backlog_sqlite=False,
            backlog_sqlite_runs=0,
            backlog_create_budget=120,
            profile_seconds=6,
            profile_inline=True,
            pages_documents=2_000,
            pages_operations=10_000,
            pages_media=1_000,
            pages_briefs=1_000,
            pages_audit=4_000,
            pages_rounds=5,
        )

    @classmethod
    def full(cls) -> Profile:
        return cls(
            name="full",
            ack_tenants=20,
            ack_clients=50,
            ack_rate=4.0,
            ack_paced_seconds=30,
            ack_rounds=4,
            ack_saturated_per_round=300,
            ack_saturated_rounds=2,
            visible_samples=100,
            materialized_samples=20,
            throughput_tenants=20,
            throughput_window=180,
            throughput_baseline_window=120,
            throughput_segments=2,
            fairness_flood=1_000,
            fairness_samples=4,
            fairness_timeout=180,
            idle_tenants=1_000,
            idle_window=60,
            idle_restart=True,
            backlog_runs=10_000,
            backlog_window=60,
            backlog_due_runs=100,
            backlog_sqlite=True,
            backlog_sqlite_runs=10_000,
            backlog_create_budget=600,
            profile_seconds=30,
            profile_inline=False,
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
