"""The one typed outcome every workflow's run returns, read by settlement.

A run names an outcome for every operation it carries (one, or each member of
a batch). Its statuses are the operation statuses they become, so there is one
vocabulary: ``succeeded``, ``superseded`` (a newer version is public, or the
document was withdrawn since), ``failed`` (a final business outcome, e.g. a
scheduled release whose versions changed: no automatic retry) and ``dead`` (a
permanent failure of that operation alone, replayable). A transient failure is
not an outcome: the run fails, and every operation it carries retries.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, JsonValue, model_validator

from tenant_runtime.workflows.parameters import Frozen


class MemberStatus(StrEnum):
    SUCCEEDED = "succeeded"
    SUPERSEDED = "superseded"
    FAILED = "failed"
    DEAD = "dead"


class Failure(Frozen):
    """Why an operation failed: the step, a stable code and a message for people."""

    step: str | None = None
    code: str
    message: str = ""


class MemberOutcome(Frozen):
    """What one operation learns from the run that carried it."""

    status: MemberStatus
    failure: Failure | None = None

    @model_validator(mode="after")
    def _failure_iff_failed(self) -> MemberOutcome:
        failing = self.status in (MemberStatus.FAILED, MemberStatus.DEAD)
        if failing != (self.failure is not None):
            raise ValueError("a failed or dead outcome carries its failure, and only those do")
        return self


class RunOutcome(Frozen):
    """Every operation the run carried, with its outcome; ``facts`` is a small JSON summary for people."""

    members: dict[str, MemberOutcome] = Field(min_length=1)
    facts: dict[str, JsonValue] = Field(default_factory=dict)

    @classmethod
    def of(
        cls, operation_id: str, status: MemberStatus, failure: Failure | None = None, **facts: JsonValue
    ) -> RunOutcome:
        """The outcome of a run that carries one operation."""
        return cls(members={operation_id: MemberOutcome(status=status, failure=failure)}, facts=facts)


SUCCEEDED, SUPERSEDED, FAILED, DEAD = (
    MemberStatus.SUCCEEDED,
    MemberStatus.SUPERSEDED,
    MemberStatus.FAILED,
    MemberStatus.DEAD,
)

__all__ = ["DEAD", "FAILED", "SUCCEEDED", "SUPERSEDED", "Failure", "MemberOutcome", "MemberStatus", "RunOutcome"]
