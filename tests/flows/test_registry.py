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


def _step_names() -> set[str]:
    """Every task name in the flows package, and every name a flow waits under (wait_for_event)."""
    import importlib
    import pkgutil
    import re
    from pathlib import Path

    from prefect import Task

    import flows

    names: set[str] = set()
    for module_info in pkgutil.walk_packages(flows.__path__, "flows."):
        module = importlib.import_module(module_info.name)
        names |= {value.name for value in vars(module).values() if isinstance(value, Task)}
    for path in Path(flows.__path__[0]).rglob("*.py"):
        names |= set(re.findall(r"wait_for_event\(\s*\"([a-z_]+)\"", path.read_text()))
    return names


def test_every_declared_step_is_a_task_or_a_wait_of_the_flows() -> None:
    # describe lists these and a restart counts from them: a misspelt one would never match a task run.
    known = _step_names()
    declared = {step for spec in WORKFLOWS.values() for step in spec.steps}
    assert declared, "no workflow declares its steps"
    assert declared <= known, sorted(declared - known)
