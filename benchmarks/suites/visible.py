"""visible: publish returns → the public URL serves the new version.

Each sample edits a document so its body carries a unique marker, publishes
it, and polls ``GET /{tenant}/{slug}`` on the site server until the marker
shows. The runtime worker is running (delivery happens in the background, as
in production); the page is expected from live rendering before any flow runs.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

from benchmarks.runner import Bench
from benchmarks.stats import ms, ratio, summarize, target

POLL_TIMEOUT = 30.0


async def run(bench: Bench) -> dict[str, Any]:
    await bench.ready_worker()
    tenant, [doc] = await bench.warm_tenant("vis")
    version = doc["version"]
    samples: dict[str, list[float]] = {"ack": [], "visible_after_ack": [], "publish_to_visible": []}
    polls: list[int] = []
    sources: dict[str, int] = {}
    for _ in range(bench.profile.visible_samples):
        marker = f"marker-{secrets.token_hex(8)}"
        updated = await bench.api.update_document(tenant, doc["id"], version, f"Benchmark body {marker}.")
        version = updated["version"]
        published = await bench.api.publish(tenant, doc["id"])
        deadline = published.acked_at + POLL_TIMEOUT
        count = 0
        while True:
            response = await bench.api.page(tenant.slug, doc["slug"])
            count += 1
            if response.status_code == 200 and marker in response.text:
                seen = time.monotonic()
                source = response.headers.get("x-pressroom-source", "?")
                sources[source] = sources.get(source, 0) + 1
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{marker} not visible {POLL_TIMEOUT:.0f} s after the publish returned")
        samples["ack"].append(published.latency)
        samples["visible_after_ack"].append(seen - published.acked_at)
        samples["publish_to_visible"].append(seen - published.sent_at)
        polls.append(count)
        # Let the delivery of this version finish so samples do not pile up runs behind each other.
        await bench.outbox.wait_final(tenant.slug, published.operation_id, timeout=60)
        await asyncio.sleep(0.05)

    summary = {k: summarize(ms(v)) for k, v in samples.items()}
    vis, ack = summary["visible_after_ack"], summary["ack"]
    vis_ratio = ratio(vis["p50"], ack["p50"])
    return {
        "settings": {
            "samples": bench.profile.visible_samples,
            "worker": "running",
            "poll": "back-to-back GETs until the marker shows",
        },
        "samples_ms": {k: ms(v) for k, v in samples.items()},
        "summary_ms": summary,
        "polls_per_sample": summarize(polls),
        "served_from": sources,
        "ratios": {"visible_after_ack_p50_over_ack_p50": vis_ratio},
        "headline": {
            "metric": "visible-after-ack p50 / ack p50",
            "value": vis_ratio,
            "pressroom": vis["p50"],
            "baseline": ack["p50"],
            "unit": "ms",
        },
        "targets": [target("visible p50 no slower than the ack p50", vis_ratio, "<=", 1.0, "×")],
    }
