"""Summaries of latency samples: the numbers every suite reports."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation; None for no samples."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarize(values: Sequence[float]) -> dict[str, Any]:
    """n, min, p50, p90, p99, max, mean of ``values`` (p99 of few samples is close to the max)."""
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "min": min(values),
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": max(values),
        "mean": sum(values) / len(values),
    }


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def target(name: str, value: float | None, comparison: str, threshold: float, unit: str = "") -> dict[str, Any]:
    """One target line: ``value`` compared with ``threshold``; met is None when nothing was measured."""
    met: bool | None
    if value is None:
        met = None
    elif comparison == "<=":
        met = value <= threshold
    elif comparison == ">=":
        met = value >= threshold
    elif comparison == "==":
        met = value == threshold
    else:
        raise ValueError(f"unknown comparison {comparison!r}")
    return {"name": name, "value": value, "comparison": comparison, "threshold": threshold, "unit": unit, "met": met}


def ms(seconds: Sequence[float]) -> list[float]:
    return [round(s * 1000.0, 3) for s in seconds]
