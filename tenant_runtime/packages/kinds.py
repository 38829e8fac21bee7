"""What each kind of package may contain and what installing it does: a registry of content kinds.

A ``ContentKind`` has three callables:

- ``validate(check)`` runs while the package is verified, before anything of it is
  written (in the request, and again in the install run's ``verify_package``
  step): raise ``PackageRejected`` with a stable code and details naming what is
  wrong (a lane's graph: the step and the missing field). ``check`` holds the
  verified manifest, the files' bytes and the install options.
- ``install(tx, ws, package)`` runs inside the one activation transaction, after
  the package's row is written and before it commits: register what it
  contributes (a lane's graph, a plugin's hooks). Raising rolls everything back.
- ``uninstall(tx, ws, package)`` undoes ``install`` in the uninstall (or the
  switch to another version) transaction.

Kinds register with ``register_kind``; the modules in ``PROVIDERS`` are imported
the first time a kind is looked up, so a provider registers itself on import.
``theme`` and ``plugin`` are built in; ``lane`` starts as a placeholder that
refuses every package (``lane_graph_unchecked``) and is replaced by the lanes
area's kind with its graph check (``tenant_runtime.lanes.package_kind``, in
``PROVIDERS``).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tenant_runtime.errors import PackageRejected
from tenant_runtime.packages.manifest import Manifest

if TYPE_CHECKING:
    from sqlmodel import Session

    from tenant_runtime.workspace import Workspace
    from tenant_runtime.workspace.package_models import InstalledPackage

# Modules that register content kinds when imported (each calls register_kind).
PROVIDERS: tuple[str, ...] = (
    "tenant_runtime.packages.themes",
    "tenant_runtime.packages.plugins",
    "tenant_runtime.lanes.package_kind",
)


@dataclass(frozen=True)
class PackageCheck:
    """What a kind's ``validate`` sees: the verified manifest, every file's bytes, the install options."""

    manifest: Manifest
    files: Mapping[str, bytes]
    options: Mapping[str, Any] = field(default_factory=dict)
    allow_private_webhooks: bool = False  # the operator's PRESSROOM_WEBHOOK_ALLOW_PRIVATE


Validate = Callable[[PackageCheck], None]
Hook = Callable[["Session", "Workspace", "InstalledPackage"], None]


def _nothing(tx: Session, ws: Workspace, package: InstalledPackage) -> None:
    return None


@dataclass(frozen=True)
class ContentKind:
    name: str
    validate: Validate
    install: Hook = _nothing
    uninstall: Hook = _nothing


def _unchecked_lane(check: PackageCheck) -> None:
    raise PackageRejected(
        "Lane packages cannot be installed yet: no lane graph check is registered.",
        details={"package": check.manifest.ref},
        code="lane_graph_unchecked",
    )


_KINDS: dict[str, ContentKind] = {"lane": ContentKind("lane", _unchecked_lane)}
_lock = threading.Lock()
_loaded = False


def register_kind(kind: ContentKind, *, replace: bool = False) -> ContentKind:
    """Register ``kind``; registering a name twice is an error unless ``replace``."""
    with _lock:
        if kind.name in _KINDS and not replace and _KINDS[kind.name] is not kind:
            raise RuntimeError(f"package kind {kind.name!r} is registered already")
        _KINDS[kind.name] = kind
    return kind


def _load_providers() -> None:
    global _loaded
    if _loaded:
        return
    for module in PROVIDERS:
        importlib.import_module(module)
    _loaded = True


def kind_of(name: str) -> ContentKind:
    """The registered kind ``name``; an unknown one is ``package_kind_unknown``."""
    _load_providers()
    try:
        return _KINDS[name]
    except KeyError:
        raise PackageRejected(
            "No such package kind.", details={"kind": name, "known": sorted(_KINDS)}, code="package_kind_unknown"
        ) from None


def kinds() -> dict[str, ContentKind]:
    _load_providers()
    return dict(_KINDS)


__all__ = ["PROVIDERS", "ContentKind", "Hook", "PackageCheck", "Validate", "kind_of", "kinds", "register_kind"]
