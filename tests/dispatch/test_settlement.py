"""Settlement reads the typed outcome strictly: a wrong shape or a missing member is a failure, never success."""

from __future__ import annotations

from dispatch.settlement import RunFailed, read_outcome, verdicts
from flows.steps import StepFailed
from tenant_runtime.workflows import DEAD, SUCCEEDED, SUPERSEDED, Failure, MemberOutcome, RunOutcome


def test_a_completed_run_gives_each_member_its_own_outcome() -> None:
    outcome = RunOutcome(members={"op_1": MemberOutcome(status=SUCCEEDED), "op_2": MemberOutcome(status=SUPERSEDED)})

    read = read_outcome(True, outcome)

    assert read == outcome
    assert verdicts(["op_1", "op_2"], read) == outcome.members
    assert read_outcome(True, outcome.model_dump(mode="json")) == outcome  # its JSON form reads the same


def test_a_member_missing_from_the_outcome_is_dead_not_succeeded() -> None:
    outcome = RunOutcome.of("op_1", SUCCEEDED)

    settled = verdicts(["op_1", "op_2"], read_outcome(True, outcome))

    assert settled["op_1"].status == SUCCEEDED  # type: ignore[union-attr]
    missing = settled["op_2"]
    assert isinstance(missing, MemberOutcome) and missing.status == DEAD
    assert missing.failure is not None and missing.failure.code == "missing_outcome"


def test_a_completed_run_with_an_outcome_of_the_wrong_shape_fails_every_member_permanently() -> None:
    for wrong in (None, {"outcome": "succeeded"}, {"members": {"op_1": {"status": "done"}}}, "succeeded"):
        read = read_outcome(True, wrong)

        assert isinstance(read, RunFailed) and read.permanent, wrong
        assert read.failure.code == "invalid_outcome"
        assert verdicts(["op_1", "op_2"], read) == {"op_1": read, "op_2": read}


def test_a_failed_run_passes_its_step_failure_on_and_anything_else_is_transient() -> None:
    permanent = read_outcome(False, StepFailed("render_page", "bad_input", "no", permanent=True), state_name="FAILED")
    assert permanent == RunFailed(Failure(step="render_page", code="bad_input", message="no"), permanent=True)

    crashed = read_outcome(False, RuntimeError("lost"), state_name="CRASHED", message="worker died")
    assert isinstance(crashed, RunFailed) and not crashed.permanent
    assert crashed.failure.code == "crashed" and crashed.failure.message == "worker died"
