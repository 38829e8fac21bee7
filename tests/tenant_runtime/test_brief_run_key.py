"""A brief's run key is ``brief:{brief_id}``, derived from the brief_id and nothing else, in one place."""

from __future__ import annotations

import ast
from pathlib import Path

from sqlmodel import select

from tenant_runtime.actions.briefs import BriefInput, submit_brief
from tenant_runtime.workflows import Workflow, WriteArticleParameters, spec
from tenant_runtime.workspace import SYSTEM, Operation, Workspace

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("control_plane", "dispatch", "flows", "tenant_runtime", "benchmarks")


def _parameters(**fields: object) -> WriteArticleParameters:
    base: dict[str, object] = {
        "tenant": "acme",
        "operation_id": "op_1",
        "brief_id": "b-1",
        "lane": "news",
        "pack_version": 1,
        "graph_digest": "d1",
    }
    return WriteArticleParameters.model_validate({**base, **fields})


def test_the_key_depends_on_the_brief_id_alone() -> None:
    article = spec(Workflow.WRITE_ARTICLE)
    key = article.idempotency_key(_parameters())
    assert key == "brief:b-1"
    for other in (
        {"operation_id": "op_2"},
        {"tenant": "other"},
        {"lane": "dev"},
        {"pack_version": 7},
        {"graph_digest": "d2"},
    ):
        assert article.idempotency_key(_parameters(**other)) == key
    assert article.idempotency_key(_parameters(brief_id="b-2")) == "brief:b-2"


def test_the_operation_a_brief_commits_carries_that_key(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        done = submit_brief(tx, workspace.tenant, SYSTEM, BriefInput(brief_id="b-7", lane="news", title="Seven"))
    with workspace.reader() as tx:
        operation = tx.exec(select(Operation).where(Operation.id == done.operation_id)).one()
    assert operation.idempotency_key == "brief:b-7" and operation.flow_name == "write_article"


def _builds_a_brief_key(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.startswith("brief:")
    if isinstance(node, ast.JoinedStr):
        template = "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values)
        return template.startswith(("brief:", "brief{}"))
    return False


def test_no_code_path_builds_a_brief_run_key_by_hand() -> None:
    # The one derivation is WorkflowSpec.idempotency_key over WriteArticleParameters.run_key (the brief_id):
    # a string literal or f-string starting "brief:" (or "brief{…}") anywhere in the code is another one.
    offenders = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(), filename=str(path))
            docstrings = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and node.body
                and isinstance(node.body[0], ast.Expr)
            }
            for node in ast.walk(tree):
                if id(node) not in docstrings and _builds_a_brief_key(node):
                    offenders.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}")
    assert offenders == []
    assert WriteArticleParameters.run_key is not WriteArticleParameters.__mro__[1].run_key  # type: ignore[attr-defined]
