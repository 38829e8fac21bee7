"""Pressroom's benchmark harness: Pressroom and its baseline, measured side by side in one run.

``python -m benchmarks [--quick] [--suite NAME ...]`` starts a private stack on
loopback (embedded PostgreSQL, Prefect server, control plane, public site
server, runtime worker), runs the suites, writes one JSON file per suite to
``benchmarks/results/`` and regenerates ``docs/performance.md`` with its plots.
Nothing under ``tests/`` depends on these numbers: they are measurements, not
assertions.
"""
