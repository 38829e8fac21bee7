"""Sampling profiles with py-spy (attached by pid, non-blocking) and their summaries."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

_FRAME = re.compile(r"^(?P<func>.*) \((?P<path>[^()]*?)(?::(?P<line>\d+))?\)$")


def start(pid: int, seconds: float, output: Path, *, rate: int = 100) -> subprocess.Popen[bytes]:
    """Begin sampling ``pid`` for ``seconds``; collapsed stacks go to ``output`` (wait on the result)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    py_spy = Path(sys.executable).parent / "py-spy"
    return subprocess.Popen(
        [
            str(py_spy),
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(int(seconds)),
            "--rate",
            str(rate),
            "--format",
            "raw",
            "--output",
            str(output),
            "--nonblocking",
            "--subprocesses",
        ],
        # Not --gil: it hides native work that releases the GIL (loading CA bundles into SSL
        # contexts was the largest such cost), which is real CPU. Idle threads are left out.
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def finish(process: subprocess.Popen[bytes], timeout: float) -> str | None:
    """Wait for py-spy; returns an error message, or None when it wrote its profile."""
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return "py-spy did not finish in time"
    if process.returncode != 0:
        return (err or b"").decode(errors="replace").strip()[-500:] or f"py-spy exited {process.returncode}"
    return None


def _package(path: str) -> str:
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    match = re.search(r"/lib/python3\.\d+/([^/]+)", path)
    if match:
        return f"stdlib:{match.group(1).removesuffix('.py')}"
    return path.strip("/").split("/", 1)[0].removesuffix(".py") or "?"


def _parse(frame: str) -> tuple[str, str]:
    match = _FRAME.match(frame.strip())
    if not match:
        return frame.strip(), "?"
    return match.group("func"), match.group("path")


def _module(path: str) -> str:
    tail = path.split("site-packages/", 1)[1] if "site-packages/" in path else path.rsplit("/lib/python3.11/", 1)[-1]
    return tail.removesuffix(".py").replace("/", ".")


def summarize(raw: Path, *, top: int = 50) -> dict[str, Any]:
    """Self time by package and by function, inclusive time by function, from collapsed stacks."""
    self_pkg: Counter[str] = Counter()
    self_fn: Counter[str] = Counter()
    incl_fn: Counter[str] = Counter()
    incl_pkg: Counter[str] = Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [
            _parse(f) for f in stack.split(";") if f and not f.startswith("process ") and not f.startswith("thread ")
        ]
        if not frames:
            continue
        total += count
        func, path = frames[-1]
        self_pkg[_package(path)] += count
        self_fn[f"{_module(path)}:{func}"] += count
        for name in {f"{_module(p)}:{f}" for f, p in frames}:
            incl_fn[name] += count
        for pkg in {_package(p) for _, p in frames}:
            incl_pkg[pkg] += count

    def share(counter: Counter[str]) -> list[dict[str, Any]]:
        return [{"name": k, "samples": v, "share": v / total} for k, v in counter.most_common(top)]

    return {
        "samples": total,
        "self_by_package": share(self_pkg),
        "self_by_function": share(self_fn),
        "inclusive_by_function": share(incl_fn),
        "inclusive_by_package": share(incl_pkg),
    }


def compress(raw: Path) -> Path:
    """Gzip the collapsed stacks (they run to megabytes); returns the ``.gz`` path."""
    target = raw.with_name(raw.name + ".gz")
    with open(raw, "rb") as src, gzip.open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    raw.unlink()
    return target


def summarize_and_compress(raw: Path) -> dict[str, Any]:
    summary = summarize(raw)
    return {"raw": str(compress(raw)), **summary}
