"""Number formatting shared by the report's table and its details."""

from __future__ import annotations

from typing import Any


def fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        v = float(value)
        if v.is_integer() and abs(v) < 1e6:
            return f"{int(v):,} {unit}".strip() if unit and unit != "×" else f"{int(v):,}{unit}"
        text = (
            f"{v:,.0f}"
            if abs(v) >= 100
            else f"{v:,.1f}"
            if abs(v) >= 10
            else f"{v:.2f}"
            if abs(v) >= 0.1
            else f"{v:.3f}"
        )
        return f"{text} {unit}".strip() if unit and unit not in ("×",) else f"{text}{unit}"
    return str(value)
