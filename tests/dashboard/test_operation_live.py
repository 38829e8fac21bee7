"""An open operation page follows its run: the facts every poll, the actions only when what they offer
changed (so Resume appears the moment a run pauses, and a ticked box is never wiped); and times can be
picked to the second in the site's timezone."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from control_plane.dashboard.local_time import local_and_utc, parse_local
from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.workflows import Carried
from tests.dashboard.conftest import Dashboard
from tests.dashboard.test_dashboard import _create
from tests.dashboard.test_document_pages import _publish

_POLL = re.compile(r'id="op-live" hx-get="([^"]+)" hx-trigger="every (\d+)s"')


def test_the_poll_gets_the_actions_only_when_they_change(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    _publish(browser, "acme", _create(browser, "acme"))
    dashboard.services.handoff.flush()
    (operation,) = dashboard.operations("acme")
    path = f"/dashboard/sites/acme/operations/{operation.id}"

    opened = browser.get(path)
    poll = _POLL.search(opened.text)
    assert poll is not None and poll.group(2) == "1", opened.text
    assert 'id="op-actions"' in opened.text and 'data-control="pause"' in opened.text
    polled_url = poll.group(1).replace("&amp;", "&")
    assert polled_url.startswith(f"{path}?actions=queued.")
    same = browser.get(polled_url, headers={"HX-Request": "true"})
    assert 'id="op-live"' in same.text and 'id="op-actions"' not in same.text  # unchanged: left as they are
    assert 'id="op-actions"' in browser.get(polled_url).text  # a plain visit of that address is the whole page

    with dashboard.factory.open("acme").transaction() as tx:
        carried = Carried(operation_id=operation.id, workflow=operation.flow_name, fields={})
        operation_actions.claim(tx, carried, flow_run_id=operation.flow_run_id or "")
        operation_actions.finish(tx, operation.id, "succeeded", step="purge_aggregates")
    landed = browser.get(polled_url, headers={"HX-Request": "true"})
    assert 'data-status="succeeded"' in landed.text
    assert 'id="op-actions"' in landed.text and 'data-control="restart"' in landed.text  # changed: swapped in
    assert 'data-control="pause"' not in landed.text
    assert _POLL.search(landed.text) is None  # ended: nothing more to follow


def test_a_time_to_the_second_is_read_and_shown_with_its_seconds() -> None:
    now = datetime(2027, 1, 5, 8, 0, 0, tzinfo=UTC)
    when = parse_local("2027-01-05T09:00:07", "Europe/Berlin", now=now)
    assert when == datetime(2027, 1, 5, 8, 0, 7, tzinfo=UTC)
    assert parse_local("2027-01-05T09:01", "Europe/Berlin", now=now) == datetime(2027, 1, 5, 8, 1, tzinfo=UTC)
    assert local_and_utc(when, "Europe/Berlin") == "2027-01-05 09:00:07 Europe/Berlin (08:00:07 UTC)"
    assert local_and_utc(when.replace(second=0), "Europe/Berlin") == "2027-01-05 09:00 Europe/Berlin (08:00 UTC)"
