"""dashboard_pages: every list page of a tenant with 10,000 documents and 50,000 operations, server-side.

The dashboard app (``create_app`` over ``Services.build``, as ``pressroom serve`` runs it) in this process
on a private data directory, the recording twin in place of Prefect (no page reads Prefect). Tenant ``big``
is made real through the API (a published document, a media file, a brief, a member) and then bulk-filled
(``benchmarks.dashboard_site.fill``) to the issue's size, plus media, briefs and audit rows; tenant
``empty`` has only the rows made through the API. Each page is requested by a signed-in owner through
Litestar's TestClient (the ASGI app called in-process: the time is the server's, with no socket), in
rounds that visit every page of both tenants in a shuffled order, so the machine's noise falls on all
alike. Pages: documents (first page, a deep page, each filter, a search, search with filters), operations
(first, deep, by status, a search matching many, a search matching a few), media (first, deep, search,
trash), briefs (first, deep, by lane, search), audit (first, an old page by cursor, by action), and the
other pages of a site. Baseline in the same run: the same page on ``empty``; the ratio says what the size
costs.
Target: every page's median and p95 on ``big`` ≤ 100 ms (wall time). Also recorded: the process's CPU time per
request, less exposed to the shared machine's load than wall time.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.dashboard_site import dashboard_site, fill, make_real
from benchmarks.runner import Bench
from benchmarks.stats import percentile, ratio, summarize, target

LIMIT_MS = 100.0


def _pages(slug: str, counts: dict[str, int], ids: dict[str, str]) -> dict[str, str]:
    """Name → path of each page measured on tenant ``slug`` (deep pages from the counts of ``big``)."""
    t = f"/dashboard/sites/{slug}"
    # A deep page: four fifths of the way down (a full page; the last one may hold a single row).
    deep = {name: max(1, count // 50 * 4 // 5) for name, count in counts.items()}
    return {
        "documents": f"{t}/",
        "documents deep page": f"{t}/?page={deep['documents']}",
        "documents search": f"{t}/?q=harbour",
        "documents search + filters": f"{t}/?q=river&status=published&kind=post",
        "documents changed since publish": f"{t}/?status=changed",
        "documents scheduled": f"{t}/?status=scheduled",
        "documents drafts, deep page": f"{t}/?status=draft&page={max(1, deep['documents'] // 3)}",
        "document editor": f"{t}/documents/{ids['document']}",
        "operations": f"{t}/operations",
        "operations deep page": f"{t}/operations?page={deep['operations']}",
        "operations failed": f"{t}/operations?status=failed",
        # A word in about a quarter of the titles (a page fills from the newest at once), and a number at most
        # one title holds (a few operations among all the others, or none: nothing ends the scan early).
        "operations search": f"{t}/operations?q=harbour",
        "operations search, few matches": f"{t}/operations?q=1234",
        "operation": f"{t}/operations/{ids['operation']}",
        "media": f"{t}/media",
        "media deep page": f"{t}/media?page={deep['media']}",
        "media search": f"{t}/media?q=harbour",
        "media trash": f"{t}/media?state=deleted",
        # The editor's "Insert media" panel (12 a page): its first page, a search, a deep page.
        "media picker": f"{t}/media/picker",
        "media picker search": f"{t}/media/picker?q=harbour",
        "media picker deep page": f"{t}/media/picker?page={max(1, counts['media'] // 12 * 4 // 5)}",
        "briefs": f"{t}/briefs",
        "briefs deep page": f"{t}/briefs?page={deep['briefs']}",
        "briefs by lane": f"{t}/briefs?lane=news",
        "briefs search": f"{t}/briefs?q=brief-1234",
        "audit": f"{t}/audit",
        "audit old page": f"{t}/audit?before={max(1, counts['audit'] // 10)}.{2**62}",
        "audit by action": f"{t}/audit?action=content.publish",
        "releases": f"{t}/releases",
        "release new": f"{t}/releases/new",
        "approvals": f"{t}/approvals",
        "health": f"{t}/health",
        "lanes": f"{t}/lanes",
        "fields": f"{t}/fields",
        "site": f"{t}/site",
        "members": f"{t}/members",
    }


def _ids(site: Any, slug: str) -> dict[str, str]:
    from tenant_runtime import queries

    with site.factory.open(slug).reader() as tx:
        return {
            "document": queries.list_documents(tx, limit=1)[0].id,
            "operation": queries.list_operations(tx, limit=1)[0].id,
        }


def _measure(bench: Bench, root: Path) -> dict[str, Any]:
    profile = bench.profile
    with dashboard_site(root) as site:
        tokens = {slug: site.tenant(slug) for slug in ("big", "empty")}
        for slug, token in tokens.items():
            make_real(site, slug, token)
        t0 = time.monotonic()
        counts = fill(
            site,
            "big",
            documents=profile.pages_documents,
            operations=profile.pages_operations,
            media=profile.pages_media,
            briefs=profile.pages_briefs,
            audit=profile.pages_audit,
        )
        seed_seconds = time.monotonic() - t0
        bench.log(f"  filled tenant big in {seed_seconds:.1f} s: {counts}")
        browsers = {slug: site.browser(token) for slug, token in tokens.items()}
        pages = {slug: _pages(slug, counts, _ids(site, slug)) for slug in tokens}
        samples: dict[str, dict[str, list[float]]] = {slug: {name: [] for name in pages[slug]} for slug in tokens}
        cpu: dict[str, dict[str, list[float]]] = {slug: {name: [] for name in pages[slug]} for slug in tokens}
        sizes: dict[tuple[str, str], int] = {}
        visits = [(slug, name) for slug in tokens for name in pages[slug]]
        rng = random.Random(15)
        load_before = os.getloadavg()
        for round_number in range(profile.pages_rounds + 1):  # round 0 warms up (templates, statement caches)
            rng.shuffle(visits)
            for slug, name in visits:
                c1, t1 = time.process_time(), time.perf_counter()
                response = browsers[slug].get(pages[slug][name])
                seconds, cpu_seconds = time.perf_counter() - t1, time.process_time() - c1
                if response.status_code != 200:
                    raise RuntimeError(f"{pages[slug][name]}: {response.status_code} {response.text[:300]}")
                if round_number:
                    samples[slug][name].append(seconds * 1000.0)
                    cpu[slug][name].append(cpu_seconds * 1000.0)
                sizes[slug, name] = len(response.content)
        load_after = os.getloadavg()
    summary = {slug: {name: summarize(values) for name, values in by_page.items()} for slug, by_page in samples.items()}
    per_page = {}
    for name, values in samples["big"].items():
        big, empty = summary["big"][name], summary["empty"][name]
        per_page[name] = {
            "path": pages["big"][name],
            "p50_ms": big["p50"],
            "p95_ms": percentile(values, 95),
            "empty_p50_ms": empty["p50"],
            "empty_p95_ms": percentile(samples["empty"][name], 95),
            "ratio_p50": ratio(big["p50"], empty["p50"]),
            # This process's CPU time over the request (every thread: the app, its worker thread, the test
            # transport): what the page costs, less exposed than wall time to the other sessions' load.
            "cpu_p50_ms": percentile(cpu["big"][name], 50),
            "empty_cpu_p50_ms": percentile(cpu["empty"][name], 50),
            "bytes": sizes["big", name],
        }
    worst_p50 = max(per_page.items(), key=lambda item: item[1]["p50_ms"])
    worst_p95 = max(per_page.items(), key=lambda item: item[1]["p95_ms"])
    return {
        "settings": {
            "counts": counts,
            "rounds": profile.pages_rounds,
            "seed_seconds": round(seed_seconds, 1),
            "loadavg_during": {"before": list(load_before), "after": list(load_after)},
            "how": "in-process TestClient (ASGI, no socket), owner session, shuffled rounds over both tenants",
        },
        "pages": per_page,
        "summary_ms": {f"big: {name}": s for name, s in summary["big"].items()}
        | {f"empty: {name}": s for name, s in summary["empty"].items()},
        "ratios": {f"{name} big/empty p50": page["ratio_p50"] for name, page in per_page.items()},
        "headline": {
            "metric": "slowest page's median on a tenant of "
            f"{counts['documents']:,} documents and {counts['operations']:,} operations (ms)",
            "value": round(worst_p50[1]["p50_ms"], 1),
            "page": worst_p50[0],
            "pressroom": worst_p50[1]["p50_ms"],
            "baseline": worst_p50[1]["empty_p50_ms"],
            "unit": "ms",
        },
        "targets": [
            target(
                f"every page's median ≤ 100 ms (slowest: {worst_p50[0]})", worst_p50[1]["p50_ms"], "<=", LIMIT_MS, "ms"
            ),
            target(
                f"every page's p95 ≤ 100 ms (slowest: {worst_p95[0]})", worst_p95[1]["p95_ms"], "<=", LIMIT_MS, "ms"
            ),
        ],
    }


async def run(bench: Bench) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="pressroom-pages-") as root:
        return await asyncio.to_thread(_measure, bench, Path(root))
