"""Closed-loop HTTP load from ``wrk`` (Debian's package; C, so the load costs the measured cores little).

``post_briefs`` runs ``benchmarks/wrk_briefs.lua`` against the control plane for a while with N connections
and returns what its ``done`` hook printed: requests, the 202 / 200 / other counts, errors and the latency
percentiles over every request. ``available`` says whether ``wrk`` is on the PATH (``apt-get install wrk``).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.pressroom_api import Tenant

SCRIPT = Path(__file__).with_name("wrk_briefs.lua")
MARK = "WRK_JSON "


def available() -> bool:
    return shutil.which("wrk") is not None


async def post_briefs(
    api_url: str, tenants: list[Tenant], run_id: str, *, connections: int, seconds: float, threads: int = 1
) -> dict[str, Any]:
    """``connections`` clients posting unique briefs (``{run_id}-{thread}-{n}``) over ``tenants`` for
    ``seconds``; rates per second and latencies in ms."""
    with tempfile.TemporaryDirectory(prefix="pressroom-wrk-") as scratch:
        listing = Path(scratch) / "tenants.txt"
        listing.write_text("".join(f"{t.slug} {t.token}\n" for t in tenants))
        process = await asyncio.create_subprocess_exec(
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "--timeout",
            "30s",
            "-s",
            str(SCRIPT),
            api_url,
            "--",
            str(listing),
            run_id,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
    lines = [line for line in out.decode().splitlines() if line.startswith(MARK)]
    if process.returncode != 0 or not lines:
        raise RuntimeError(f"wrk failed ({process.returncode}): {err.decode()[-500:]} {out.decode()[-500:]}")
    raw = json.loads(lines[-1].removeprefix(MARK))
    duration = raw["duration_us"] / 1e6
    latency = {k: v / 1000 for k, v in raw["latency_us"].items()}
    return {
        "connections": connections,
        "threads": threads,
        "seconds": round(duration, 3),
        "requests": raw["requests"],
        "accepted": raw["accepted"],
        "duplicates": raw["duplicates"],
        "other": raw["other"],
        "errors": raw["errors"],
        "accepted_per_s": round(raw["accepted"] / duration, 1),
        "duplicates_per_s": round(raw["duplicates"] / duration, 1),
        "latency_ms": {k: round(v, 2) for k, v in latency.items()},
        "stderr": err.decode()[-500:],
    }
