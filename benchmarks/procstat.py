"""CPU time, memory and process counts of process trees, read from /proc (Linux only)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class ProcStat:
    pid: int
    ppid: int
    cpu: float  # own utime+stime plus that of children it has reaped, seconds
    rss: int  # bytes


def _read(pid: int) -> ProcStat | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name may hold spaces and parentheses: split after the last ')'.
    fields = raw.rsplit(")", 1)[1].split()
    ppid = int(fields[1])
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    rss_pages = int(fields[21])
    return ProcStat(pid, ppid, (utime + stime + cutime + cstime) / _TICK, rss_pages * _PAGE)


def snapshot() -> dict[int, ProcStat]:
    """Every process on the machine, by pid."""
    stats: dict[int, ProcStat] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _read(int(entry))
            if stat is not None:
                stats[stat.pid] = stat
    return stats


def tree(root: int, stats: Mapping[int, ProcStat]) -> list[ProcStat]:
    """``root`` and all its live descendants."""
    children: dict[int, list[int]] = {}
    for stat in stats.values():
        children.setdefault(stat.ppid, []).append(stat.pid)
    out: list[ProcStat] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            out.append(stats[pid])
            todo.extend(children.get(pid, ()))
    return out


@dataclass(frozen=True)
class TreeSample:
    cpu: float
    rss: int
    processes: int


def sample_trees(roots: Mapping[str, int | None]) -> dict[str, TreeSample]:
    """CPU seconds, RSS and process count of each named tree (a missing root reads as zeros)."""
    stats = snapshot()
    out: dict[str, TreeSample] = {}
    for name, root in roots.items():
        members = tree(root, stats) if root is not None else []
        out[name] = TreeSample(sum(m.cpu for m in members), sum(m.rss for m in members), len(members))
    return out


class CpuWindow:
    """CPU seconds each named tree used between ``start()`` and ``stop()``."""

    def __init__(self, roots: Mapping[str, int | None]) -> None:
        self.roots = dict(roots)
        self._start: dict[str, TreeSample] = {}
        self._t0 = 0.0
        self.elapsed = 0.0
        self.cpu: dict[str, float] = {}

    def start(self) -> CpuWindow:
        self._start = sample_trees(self.roots)
        self._t0 = time.monotonic()
        return self

    def stop(self) -> dict[str, float]:
        end = sample_trees(self.roots)
        self.elapsed = time.monotonic() - self._t0
        # A process that exited inside the window takes its CPU with it unless its parent
        # reaped it (then it is in the parent's cutime); never report a negative delta.
        self.cpu = {name: max(0.0, end[name].cpu - self._start[name].cpu) for name in self.roots}
        return self.cpu

    def percent(self) -> dict[str, float]:
        """CPU use as percent of one core over the window."""
        return {name: 100.0 * cpu / self.elapsed for name, cpu in self.cpu.items()} if self.elapsed else {}


def rss_of(pids: Iterable[int]) -> int:
    stats = snapshot()
    return sum(stats[p].rss for p in pids if p in stats)
