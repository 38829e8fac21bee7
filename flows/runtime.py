"""How tasks reach tenant workspaces: one factory per process, set by the worker."""

from __future__ import annotations

from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.workspace import Workspace, WorkspaceFactory

_factory: WorkspaceFactory | None = None


def configure(factory: WorkspaceFactory) -> None:
    global _factory
    _factory = factory


def factory() -> WorkspaceFactory:
    global _factory
    if _factory is None:
        _factory = WorkspaceFactory(RuntimeSettings.from_env())
    return _factory


def workspace(tenant: str) -> Workspace:
    return factory().open(tenant)
