"""The delivery state machine: the table of DESIGN.md, nothing else."""

from __future__ import annotations

import itertools

import pytest

from tenant_runtime.errors import IllegalTransition
from tenant_runtime.operation_states import STATUSES, TERMINAL, TRANSITIONS, check_transition

ALLOWED = {
    ("scheduled", "queued"),
    ("scheduled", "cancelled"),
    ("scheduled", "failed"),
    ("queued", "delivering"),
    ("delivering", "succeeded"),
    ("delivering", "superseded"),
    ("delivering", "failed"),
    ("delivering", "queued"),
    ("failed", "queued"),
    ("failed", "dead"),
    ("dead", "queued"),
    # run control
    ("queued", "paused"),
    ("queued", "cancelled"),
    ("delivering", "paused"),
    ("delivering", "waiting"),
    ("delivering", "cancelled"),
    ("paused", "queued"),
    ("paused", "cancelled"),
    ("waiting", "queued"),
    ("waiting", "cancelled"),
    ("failed", "cancelled"),
}


@pytest.mark.parametrize(("current", "new"), list(itertools.product(STATUSES, STATUSES)))
def test_every_pair_is_allowed_exactly_when_the_table_says(current: str, new: str) -> None:
    if (current, new) in ALLOWED:
        check_transition(current, new)
    else:
        with pytest.raises(IllegalTransition) as raised:
            check_transition(current, new)
        assert raised.value.status == 409 and raised.value.details["from"] == current


def test_terminal_statuses_have_no_way_out_and_the_table_covers_every_status() -> None:
    assert set(TRANSITIONS) == set(STATUSES)
    assert all(not TRANSITIONS[s] for s in TERMINAL if s != "dead")
    assert TRANSITIONS["dead"] == {"queued"}  # only an explicit replay


@pytest.mark.parametrize("status", STATUSES)
def test_only_a_settled_operation_can_be_restarted(status: str) -> None:
    from tenant_runtime.operation_states import check_restart

    if status in {"succeeded", "superseded", "dead", "cancelled", "failed"}:
        check_restart(status, None)
    else:
        with pytest.raises(IllegalTransition):
            check_restart(status, None)
    if status == "failed":  # a failure with a retry planned is not settled yet
        with pytest.raises(IllegalTransition):
            check_restart(status, object())
