"""``python -m benchmarks --fan-out-only``: backup_import's nightly fan-out alone, in this process, without the stack.

The fan-out is measured below the engine (``suites/backup_import.py``: the
``fan_out`` step's body over copies of one workspace): it needs no server, so
this runs the suite with ``PRESSROOM_BENCH_FAN_OUT_ONLY=1`` on a stand-in for
the stack that only gives it a scratch directory, and writes the suite's
result as the runner does (the backup and import runs carried over from the
last result, with when they were measured), then the report.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from benchmarks.config import Profile
from benchmarks.results import machine_info, now_iso, write_result
from benchmarks.suites import backup_import


def run_fan_out_only(profile: Profile, out: Path, docs: Path) -> int:
    from benchmarks.report import write_report

    root = Path(tempfile.mkdtemp(prefix="pressroom-fanout-"))
    os.environ[backup_import.FAN_OUT_ONLY] = "1"
    bench: Any = SimpleNamespace(
        profile=profile,
        out=out,
        partial={},
        stack=SimpleNamespace(root=root),
        log=lambda line: print(f"[bench {time.strftime('%H:%M:%S')}] {line}", flush=True),
    )
    result: dict[str, Any] = {
        "suite": "backup_import",
        "mode": profile.name,
        "started_at": now_iso(),
        "machine": machine_info(),
        "profile": profile.as_dict(),
    }
    t0 = time.monotonic()
    try:
        result.update(asyncio.run(backup_import.run(bench)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result["machine"]["loadavg_at_end"] = list(os.getloadavg())
    result["notes"] = ["fan-out only (python -m benchmarks --fan-out-only): no stack was started"]
    result["duration_s"] = round(time.monotonic() - t0, 1)
    print(f"wrote {write_result(out, result)}; {write_report(out, docs)}")
    return 0


__all__ = ["run_fan_out_only"]
