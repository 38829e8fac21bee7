"""``GET /metrics``: the control plane in Prometheus text format.

instruments.py   counters and histograms incremented where commands run (this process's registry)
figures.py       gauges computed at scrape time from what the control plane holds, bounded per scrape
controllers.py   the endpoint and its credential (a scrape token or an operator token)

Relay and sweep timings are ``dispatch/metrics.py``; step durations ``flows/metrics.py``.
Submodules are imported directly (the command layer imports ``instruments`` while the
container that ``controllers`` needs is still being built).
"""
