"""Prometheus instruments of steps: how long each step's tenant-runtime call took, and how it ended.

Observed in ``flows/steps.py`` (``run_step``) in the process that runs the
flow (the worker or a shard runtime), which exposes its default registry.
"""

from __future__ import annotations

from prometheus_client import Histogram

STEP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

# Labels are bounded: step names are fixed strings, outcomes ok | failed | permanent. No tenant label:
# per-tenant figures come from the control plane's scrape (queue depth, lateness), not from every step.
STEP_SECONDS = Histogram(
    "pressroom_step_seconds", "One call of a step (one attempt).", ["step", "outcome"], buckets=STEP_BUCKETS
)

__all__ = ["STEP_SECONDS"]
