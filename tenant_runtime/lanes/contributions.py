"""A lane as a package contributes it: ``{"name", "graph", "pack"?}``, checked before anything is installed.

``check_lane_contribution`` is what a package's content-kind hook for ``lane``
calls at install (the packages issue): a graph that breaks a contract is
refused with the node and the missing field named, so a broken lane never
reaches a real article. ``install_lane`` (``tenant_runtime.actions.lanes``)
runs the same check again inside its transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tenant_runtime.actions.lanes import check_lane_name
from tenant_runtime.lanes.graph import GraphRefused, check_own_graph

PACK_FIELDS = frozenset({"voice", "audience", "avoid", "guidance"})


@dataclass(frozen=True)
class LaneContribution:
    name: str
    graph: list[dict[str, Any]]
    pack: dict[str, Any] = field(default_factory=dict)


def check_lane_contribution(data: Any, *, override: bool = False) -> LaneContribution:
    """The contribution, checked (name, graph contracts, the one-step rule, pack fields); else GraphRefused."""
    if not isinstance(data, Mapping) or set(data) - {"name", "graph", "pack"} or "graph" not in data:
        raise GraphRefused('A lane contribution is {"name", "graph", "pack"?}.', details={})
    name = check_lane_name(data.get("name", ""))
    check_own_graph(data["graph"], override=override)
    pack = data.get("pack") or {}
    if not isinstance(pack, Mapping) or set(pack) - PACK_FIELDS:
        raise GraphRefused(
            "A lane's pack holds voice, audience, avoid and guidance.", details={"lane": name}, code="invalid_pack"
        )
    return LaneContribution(name, [dict(node) for node in data["graph"]], dict(pack))


__all__ = ["LaneContribution", "check_lane_contribution"]
