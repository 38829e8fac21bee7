"""Debounced aggregates: one regeneration per burst, the newest delivery leaves them current."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace

import pytest

from tenant_runtime import aggregates, queries
from tenant_runtime.actions.publishing import bump_generation
from tenant_runtime.storage import MemoryStore
from tenant_runtime.workspace import Operation, Workspace
from tests.tenant_runtime.content import publish

ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


@dataclass
class FakeClock:
    """A sleep that advances fake time and lets a test land publishes 'during' the settle delay."""

    now: float = 0.0
    slept: list[float] = field(default_factory=list)
    during_sleep: list[object] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        while self.during_sleep:
            action = self.during_sleep.pop(0)
            action()  # type: ignore[operator]


def _refresh(ws: Workspace, operation: Operation, clock: FakeClock | None = None) -> dict[str, object]:
    clock = clock or FakeClock()
    return aggregates.refresh_aggregates(ws, operation.id, settle_seconds=0.25, sleep=clock.sleep)


def _state(ws: Workspace) -> tuple[int, int, int]:
    with ws.reader() as tx:
        state = queries.aggregate_state(tx)
        return state.generation, state.builds, state.changes


def _finish(ws: Workspace, *operations: Operation, status: str = "succeeded") -> None:
    """Mark operations as done, as dispatch would after their runs (their aggregates step is behind them)."""
    with ws.transaction() as tx:
        for operation in operations:
            row = tx.get(Operation, operation.id)
            assert row is not None
            row.status = status
            tx.add(row)


def test_a_build_writes_four_valid_documents_at_deterministic_keys(workspace: Workspace) -> None:
    _, operation = publish(workspace, "hello-world", title="Hello <World> & co", kind="post")

    result = _refresh(workspace, operation)

    assert result == {"outcome": "built", "generation": 1, "changed": ["feeds", "home", "sitemap"]}
    store = workspace.store.store
    assert isinstance(store, MemoryStore)
    types = {key: store.content_type(f"tenants/acme/{spec.key}") for key, spec in aggregates.AGGREGATES.items()}
    assert types == {
        "home": "text/html; charset=utf-8",
        "sitemap": "application/xml; charset=utf-8",
        "atom": "application/atom+xml; charset=utf-8",
        "rss": "application/rss+xml; charset=utf-8",
    }
    url = "http://site.test/acme/hello-world"
    sitemap = ET.fromstring(workspace.store.get("site/sitemap.xml") or b"")
    assert url in [loc.text for loc in sitemap.iter(f"{SITEMAP}loc")]
    atom = ET.fromstring(workspace.store.get("site/feed.xml") or b"")
    assert [e.findtext(f"{ATOM}title") for e in atom.iter(f"{ATOM}entry")] == ["Hello <World> & co"]
    rss = ET.fromstring(workspace.store.get("site/rss.xml") or b"")
    assert [i.findtext("link") for i in rss.iter("item")] == [url]
    assert _state(workspace) == (1, 1, 1)


def test_a_second_call_at_the_same_generation_does_nothing(workspace: Workspace) -> None:
    _, operation = publish(workspace, "once")
    _refresh(workspace, operation)

    assert _refresh(workspace, operation)["outcome"] == "current"
    store = workspace.store.store
    assert isinstance(store, MemoryStore) and store.writes["tenants/acme/site/feed.xml"] == 1
    assert _state(workspace) == (1, 1, 1)


@pytest.mark.parametrize("order", ["oldest-first", "newest-first", "interleaved"])
def test_a_burst_of_publishes_regenerates_once_whatever_the_order(workspace: Workspace, order: str) -> None:
    operations = [publish(workspace, f"post-{n}")[1] for n in range(5)]
    sequence = {
        "oldest-first": operations,
        "newest-first": operations[::-1],
        "interleaved": [operations[2], operations[4], operations[0], operations[3], operations[1]],
    }[order]

    outcomes = []
    for operation in sequence:
        outcomes.append(_refresh(workspace, operation)["outcome"])
        _finish(workspace, operation)

    assert outcomes.count("built") == 1
    assert _state(workspace) == (5, 1, 1)
    rss = ET.fromstring(workspace.store.get("site/rss.xml") or b"")
    assert len(list(rss.iter("item"))) == 5  # the one build saw the whole burst


def test_publishes_landing_during_the_settle_delay_are_covered_by_the_same_build(workspace: Workspace) -> None:
    # A burst under way: another delivery of the tenant is still due when this one reaches its aggregates.
    publish(workspace, "busy")
    _, first = publish(workspace, "first")
    clock = FakeClock(
        during_sleep=[lambda: _finish(workspace, *[publish(workspace, f"late-{n}")[1] for n in range(3)])]
    )

    result = _refresh(workspace, first, clock)

    assert clock.slept == [0.25] and clock.now == 0.25
    assert result["outcome"] == "built" and result["generation"] == 5
    assert _state(workspace) == (5, 1, 1)


def test_a_lone_publish_decides_at_once_without_the_settle_delay(workspace: Workspace) -> None:
    _, lone = publish(workspace, "lone")
    clock = FakeClock()

    result = _refresh(workspace, lone, clock)

    assert clock.slept == [] and result["outcome"] == "built" and result["generation"] == 1
    # A publish after it has its own delivery, which builds again: nothing is lost, one more build.
    _finish(workspace, lone)
    _, next_ = publish(workspace, "next")
    assert _refresh(workspace, next_, clock)["outcome"] == "built" and clock.slept == []
    assert _state(workspace) == (2, 2, 2)


def test_the_settle_delay_can_still_apply_to_a_lone_publish(workspace: Workspace) -> None:
    _, lone = publish(workspace, "lone")
    clock = FakeClock()
    settings = workspace.settings.model_copy(update={"aggregate_settle_lone": True})

    result = aggregates.refresh_aggregates(
        replace(workspace, settings=settings), lone.id, settle_seconds=0.25, sleep=clock.sleep
    )

    assert clock.slept == [0.25] and result["outcome"] == "built"


def test_the_work_is_left_to_a_newer_delivery_only_while_it_is_still_due(workspace: Workspace) -> None:
    _, older = publish(workspace, "older")
    _, newer = publish(workspace, "newer")

    deferred = _refresh(workspace, older)
    assert deferred["outcome"] == "deferred" and deferred["deferred_to"] == newer.id
    _finish(workspace, older)
    _finish(workspace, newer, status="dead")  # the newer run died before its aggregates step

    # Nothing is due any more: the next delivery builds instead of waiting on a dead one.
    _, later = publish(workspace, "later")
    assert _refresh(workspace, later)["outcome"] == "built"
    assert _state(workspace) == (3, 1, 1)


def test_an_unchanged_output_is_not_reported_and_bytes_are_not_rewritten(workspace: Workspace) -> None:
    _, post = publish(workspace, "a-post", kind="post")
    _refresh(workspace, post)
    _finish(workspace, post)
    _, page = publish(workspace, "a-page", kind="page")  # pages are not in the feeds

    assert _refresh(workspace, page)["changed"] == ["home", "sitemap"]
    _finish(workspace, page)
    with workspace.transaction() as tx:
        bump_generation(tx)  # a change that alters no aggregate
    result = aggregates.refresh_aggregates(workspace, "op_other", settle_seconds=0)

    assert result == {"outcome": "built", "generation": 3, "changed": []}
    assert _state(workspace) == (3, 3, 2)
    store = workspace.store.store
    assert isinstance(store, MemoryStore) and store.writes["tenants/acme/site/feed.xml"] == 1
    # Same bytes, newer generation: the stored objects count as current again.
    assert aggregates.serve_aggregate(workspace, "atom")[2] is True


def test_a_stale_aggregate_is_served_live_with_the_new_content(workspace: Workspace) -> None:
    _, operation = publish(workspace, "first")
    _refresh(workspace, operation)
    assert aggregates.serve_aggregate(workspace, "sitemap")[2] is True

    publish(workspace, "second")
    data, content_type, stored = aggregates.serve_aggregate(workspace, "sitemap")

    assert stored is False and content_type.startswith("application/xml")
    assert b"http://site.test/acme/second" in data
