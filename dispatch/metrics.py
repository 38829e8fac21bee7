"""Prometheus instruments of dispatch: relay passes and the worker's sweep.

They live in the process that runs them (prometheus_client's default
registry): the control plane for the embedded shard's relay hand-off, the
worker or the shard runtime for the sweep and its relay passes. Each process
exposes its own registry (``GET /metrics`` on the control plane and on a shard
runtime); the figures computed at scrape time are in ``control_plane/metrics``.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

# Seconds: a relay pass is a few ms with nothing to send, a Prefect round trip or more with something.
PASS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
SWEEP_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

RELAY_PASS_SECONDS = Histogram(
    "pressroom_relay_pass_seconds", "One relay pass over a tenant's unsent operations.", buckets=PASS_BUCKETS
)
RELAY_SENDS = Counter(
    "pressroom_relay_sends_total",
    "Runs the relay handed to Prefect (sent) or could not (failed: left unsent for a later pass).",
    ["result"],
)
SWEEP_SECONDS = Histogram("pressroom_sweep_seconds", "One sweep of the worker over its tenants.", buckets=SWEEP_BUCKETS)
SWEEP_TENANTS = Counter(
    "pressroom_sweep_tenants_total",
    "Tenants a sweep looked at (relayed) or skipped because their workspace had not changed (quiet).",
    ["outcome"],
)
SWEEP_RESCHEDULED = Counter(
    "pressroom_sweep_rescheduled_total", "Deliveries whose lease expired, put back to Scheduled by a sweep."
)

__all__ = ["RELAY_PASS_SECONDS", "RELAY_SENDS", "SWEEP_RESCHEDULED", "SWEEP_SECONDS", "SWEEP_TENANTS"]
