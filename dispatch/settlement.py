"""From a finished flow run to what each operation it carried learns: the typed outcome, read strictly.

A run that completed must return a ``RunOutcome`` naming every operation it
carried. An outcome of the wrong shape, or one that leaves out a claimed
operation, is a failure of that operation (``invalid_outcome``,
``missing_outcome``: dead, replayable once the flow is fixed), never a silent
success. A run that failed gives every operation it carried the same failure:
permanent (dead at once) or transient (retried within the operation's budget).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from flows.steps import StepFailed
from tenant_runtime.workflows import DEAD, Failure, MemberOutcome, RunOutcome


@dataclass(frozen=True)
class RunFailed:
    """The run did not complete: why, and whether retrying could help."""

    failure: Failure
    permanent: bool


Verdict = MemberOutcome | RunFailed


def read_outcome(
    completed: bool, result: Any, *, state_name: str = "", message: str | None = None
) -> RunOutcome | RunFailed:
    """What a final run state says: its typed outcome if it completed, else its failure."""
    if completed:
        try:
            return RunOutcome.model_validate(result)
        except ValidationError as exc:
            return RunFailed(
                Failure(
                    code="invalid_outcome",
                    message=f"The run completed with an outcome of the wrong shape: {exc}"[:2000],
                ),
                permanent=True,
            )
    if isinstance(result, StepFailed):
        return RunFailed(result.failure(), permanent=result.permanent)
    return RunFailed(Failure(code=state_name.lower() or "failed", message=message or str(result)), permanent=False)


def verdicts(claimed: list[str], outcome: RunOutcome | RunFailed) -> dict[str, Verdict]:
    """The verdict for each claimed operation."""
    if isinstance(outcome, RunFailed):
        return dict.fromkeys(claimed, outcome)
    missing = MemberOutcome(
        status=DEAD,
        failure=Failure(code="missing_outcome", message="The run completed without an outcome for this operation."),
    )
    return {operation_id: outcome.members.get(operation_id, missing) for operation_id in claimed}


__all__ = ["RunFailed", "Verdict", "read_outcome", "verdicts"]
