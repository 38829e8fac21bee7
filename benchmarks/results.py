"""Result files: one JSON per suite with the machine, the settings, raw samples and the verdicts."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.stack import REPO


def git_sha(repo: Path = REPO) -> str | None:
    """HEAD's commit, read from .git without running git."""
    git = repo / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: …"
            git = Path(git.read_text().split(":", 1)[1].strip())
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head
        ref = head.split(" ", 1)[1]
        for base in (git, Path(str(git).split("/worktrees/")[0]) if "/worktrees/" in str(git) else git):
            loose = base / ref
            if loose.exists():
                return loose.read_text().strip()
            packed = base / "packed-refs"
            if packed.exists():
                for line in packed.read_text().splitlines():
                    if line.endswith(" " + ref):
                        return line.split(" ", 1)[0]
    except (OSError, IndexError):
        return None
    return None


def source_digest(repo: Path = REPO) -> str:
    """A hash of the measured code as it is on disk (the working tree may be ahead of HEAD)."""
    digest = hashlib.sha256()
    for package in ("control_plane", "dispatch", "flows", "tenant_runtime"):
        for path in sorted((repo / package).rglob("*.py")):
            digest.update(str(path.relative_to(repo)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine_info() -> dict[str, Any]:
    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    try:
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        mem_kb = 0
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_mb": mem_kb // 1024,
        "loadavg_at_start": list(os.getloadavg()),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "prefect": version("prefect"),
        "litestar": version("litestar"),
        "git_sha": git_sha(),
        "source_digest": source_digest(),
    }


def write_result(out: Path, result: dict[str, Any]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{result['suite']}.json"
    path.write_text(json.dumps(result, indent=1, default=str, sort_keys=False) + "\n")
    return path


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def load_results(out: Path) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    if not out.exists():
        return results
    for path in sorted(out.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(data, dict) and "suite" in data:
            results[data["suite"]] = data
    return results
