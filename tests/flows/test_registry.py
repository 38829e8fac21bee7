"""Every built workflow has its flow, taking its one parameters model; planned ones have none."""

from __future__ import annotations

import inspect
import typing

import pytest

from flows import FLOWS
from tenant_runtime.workflows import PLANNED, WORKFLOWS, RunOutcome, Workflow


@pytest.mark.parametrize("workflow", sorted(WORKFLOWS))
def test_each_built_workflow_has_a_flow_of_its_name_taking_its_model(workflow: Workflow) -> None:
    flow = FLOWS[workflow]
    assert flow.name == workflow.value
    parameters = inspect.signature(flow.fn).parameters
    assert list(parameters) == ["params"]
    hints = typing.get_type_hints(flow.fn)
    assert hints["params"] is WORKFLOWS[workflow].parameters
    assert hints["return"] is RunOutcome


def test_no_planned_workflow_has_a_flow_yet() -> None:
    assert set(FLOWS) == set(WORKFLOWS)
    assert not set(FLOWS) & set(PLANNED)
