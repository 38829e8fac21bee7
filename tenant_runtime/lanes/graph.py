"""Lane graphs: declarative step graphs over registered steps, checked before they are ever run.

A graph is a list of nodes ``{"id", "step", "after"?}``: ``step`` names a
registered step (``STEPS``), ``id`` is unique in the graph (a step may appear
twice, e.g. a second grounding round), ``after`` lists the nodes that must
run first (default: the node before it). Each step declares what it
``needs`` and what it ``gives``; a graph is accepted only if every step is
known, the order has no cycle, and every need is met by the brief itself
(``STARTS_WITH``) or by a node that runs before. The check runs when a lane
is installed, so a broken lane is refused with the node and the missing field
named, never found on a real article.

The flows package registers one implementation per step name; a test holds
the two registries equal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenant_runtime.errors import BadRequest


@dataclass(frozen=True)
class StepContract:
    """A registered step: the fields it needs and the fields it gives."""

    name: str
    needs: frozenset[str]
    gives: frozenset[str]
    paid: bool = False
    doc: str = ""


def _contract(name: str, needs: str, gives: str, doc: str, *, paid: bool = False) -> StepContract:
    return StepContract(name, frozenset(needs.split()), frozenset(gives.split()), paid, doc)


# What every run starts with: the brief (its id, lane, payload) and its pinned editorial pack.
STARTS_WITH = frozenset({"brief", "pack"})

STEPS: dict[str, StepContract] = {
    c.name: c
    for c in (
        _contract("validate", "brief", "slug", "schema and slug unique in the site"),
        _contract("ground", "brief", "sources", "fetch the cited sources (allow-list, no private addresses)"),
        _contract("generate", "brief pack sources", "draft", "the body, through the text provider", paid=True),
        _contract("fact_check", "draft sources", "checked", "each claim of the draft against the sources", paid=True),
        _contract("clean", "draft", "body", "validate the Markdown and its directives, sanitize"),
        _contract("persist", "brief slug body", "document", "the document and its revision"),
        _contract("index", "document", "related", "search, and related articles through embeddings", paid=True),
        _contract("cover", "document", "cover", "a cover image rendered to the tenant's store", paid=True),
        _contract("approve", "document", "approval", "wait for an editor's approval event (or its timeout)"),
        _contract("publish", "document", "published", "the normal publish path"),
    )
}

APPROVE = "approve"
BACKBONE: tuple[str, ...] = ("validate", "ground", "generate", "clean", "persist", "index", "cover", "publish")
# The reference rule: a lane gets its own graph only when it differs from the backbone by more than one step.
MIN_DIFFERENCE = 2


class GraphRefused(BadRequest):
    code = "lane_graph_invalid"


@dataclass(frozen=True)
class Node:
    id: str
    step: str
    after: tuple[str, ...]


def backbone_graph() -> list[dict[str, Any]]:
    """The backbone as graph data."""
    return [{"id": step, "step": step} for step in BACKBONE]


def parse(graph: Sequence[Mapping[str, Any]]) -> list[Node]:
    """Nodes of ``graph``, each with its ``after`` made explicit; malformed data is GraphRefused."""
    if not isinstance(graph, Sequence) or not graph:
        raise GraphRefused("A lane graph is a non-empty list of nodes.", details={})
    nodes: list[Node] = []
    previous: str | None = None
    for index, raw in enumerate(graph):
        if not isinstance(raw, Mapping):
            raise GraphRefused("Each graph node is an object.", details={"index": index})
        unknown = set(raw) - {"id", "step", "after"}
        step = raw.get("step")
        node_id = raw.get("id", step)
        if unknown or not isinstance(step, str) or not isinstance(node_id, str) or not node_id:
            raise GraphRefused(
                'A graph node is {"id", "step", "after"?}.', details={"index": index, "unknown": sorted(unknown)}
            )
        after = raw.get("after")
        if after is None:
            after = [previous] if previous else []
        if not isinstance(after, list) or not all(isinstance(a, str) for a in after):
            raise GraphRefused("A node's after is a list of node ids.", details={"node": node_id})
        nodes.append(Node(node_id, step, tuple(after)))
        previous = node_id
    return nodes


def check(graph: Sequence[Mapping[str, Any]], known: Mapping[str, StepContract] = STEPS) -> list[Node]:
    """The nodes of ``graph`` in run order, or GraphRefused naming the node and the missing field."""
    nodes = parse(graph)
    ids = [n.id for n in nodes]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise GraphRefused(f"Node {duplicate!r} appears twice.", details={"node": duplicate})
    by_id = {n.id: n for n in nodes}
    for node in nodes:
        if node.step not in known:
            raise GraphRefused(
                f"Node {node.id!r} uses an unknown step {node.step!r}.",
                details={"node": node.id, "step": node.step, "known": sorted(known)},
            )
        for before in node.after:
            if before not in by_id:
                raise GraphRefused(
                    f"Node {node.id!r} runs after {before!r}, which is not in the graph.",
                    details={"node": node.id, "after": before},
                )
    ordered = _order(nodes, by_id)
    # What is available before a node: the brief, and the outputs of every node it (transitively) follows.
    for node in ordered:
        have = set(STARTS_WITH)
        for before in _ancestors(node, by_id):
            have |= known[by_id[before].step].gives
        missing = sorted(known[node.step].needs - have)
        if missing:
            raise GraphRefused(
                f"Step {node.id!r} needs {', '.join(missing)}, which no earlier step gives.",
                details={"node": node.id, "step": node.step, "missing": missing},
            )
    return ordered


def _order(nodes: list[Node], by_id: dict[str, Node]) -> list[Node]:
    """Topological order, keeping the declared order among independent nodes; a cycle is GraphRefused."""
    done: set[str] = set()
    ordered: list[Node] = []
    pending = list(nodes)
    while pending:
        ready = next((n for n in pending if set(n.after) <= done), None)
        if ready is None:
            cycle = sorted(n.id for n in pending)
            raise GraphRefused("The graph has a cycle.", details={"nodes": cycle})
        ordered.append(ready)
        done.add(ready.id)
        pending.remove(ready)
    return ordered


def _ancestors(node: Node, by_id: dict[str, Node]) -> set[str]:
    seen: set[str] = set()
    stack = list(node.after)
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(by_id[current].after)
    return seen


def with_approval(graph: Sequence[Mapping[str, Any]], required: bool) -> list[dict[str, Any]]:
    """``graph`` with (or without) an ``approve`` node right before its ``publish`` node."""
    nodes = [dict(n) for n in graph if n.get("step") != APPROVE]
    if required:
        at = next((i for i, n in enumerate(nodes) if n.get("step") == "publish"), len(nodes))
        nodes.insert(at, {"id": APPROVE, "step": APPROVE})
    return nodes


def difference_from_backbone(graph: Sequence[Mapping[str, Any]]) -> int:
    """Steps added, removed or moved relative to the backbone (edit distance over step names); an approval
    step is a branch of any graph, not a difference."""
    steps = [n.step for n in parse(graph) if n.step != APPROVE]
    base = list(BACKBONE)
    rows = list(range(len(base) + 1))
    for i, step in enumerate(steps, 1):
        current = [i]
        for j, other in enumerate(base, 1):
            current.append(min(rows[j] + 1, current[j - 1] + 1, rows[j - 1] + (step != other)))
        rows = current
    return rows[-1]


def check_own_graph(graph: Sequence[Mapping[str, Any]], *, override: bool = False) -> list[Node]:
    """``check``, and the reference rule: a graph within one step of the backbone is refused unless overridden."""
    ordered = check(graph)
    if not override and difference_from_backbone(graph) < MIN_DIFFERENCE:
        steps = [n.step for n in ordered]
        raise GraphRefused(
            "This graph differs from the backbone by one step or less: an editorial pack or a branch serves it "
            "(an operator may override).",
            details={"steps": steps, "difference": difference_from_backbone(graph), "code": "lane_graph_too_close"},
            code="lane_graph_too_close",
        )
    return ordered


def digest(graph: Sequence[Mapping[str, Any]]) -> str:
    """The graph's content hash (canonical JSON): pinned on each brief, part of every step's cache key."""
    canonical = json.dumps([dict(n) for n in graph], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def step_names(graph: Sequence[Mapping[str, Any]]) -> list[str]:
    return [n.id for n in parse(graph)]


__all__ = [
    "APPROVE",
    "BACKBONE",
    "MIN_DIFFERENCE",
    "STARTS_WITH",
    "STEPS",
    "GraphRefused",
    "Node",
    "StepContract",
    "backbone_graph",
    "check",
    "check_own_graph",
    "difference_from_backbone",
    "digest",
    "parse",
    "step_names",
    "with_approval",
]
