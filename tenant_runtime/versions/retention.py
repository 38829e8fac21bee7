"""Retention policies: how many versions of each entity to keep, and for how long.

A version is kept when ANY of these holds: it is among its entity's last
``keep_last`` versions; it is younger than ``keep_days`` days; it is pinned
(``pins.py``: current, published, addressed by an unfinished operation such as
a scheduled release, or needed by a backup's restore point). Everything else
is beyond the cap, and ``prune_policies`` deletes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session

from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import as_utc
from tenant_runtime.workspace.version_models import RetentionPolicy

# The versioned entity types a policy can be set for.
ENTITY_TYPES = ("document", "site_resource")
MAX_KEEP_LAST = 10_000
MAX_KEEP_DAYS = 3650


@dataclass(frozen=True)
class Policy:
    keep_last: int
    keep_days: int

    def check(self) -> Policy:
        if not 1 <= self.keep_last <= MAX_KEEP_LAST:
            raise BadRequest(
                f"keep_last is 1-{MAX_KEEP_LAST}: the current version is always kept.",
                details={"field": "keep_last", "value": self.keep_last},
                code="invalid_retention_policy",
            )
        if not 0 <= self.keep_days <= MAX_KEEP_DAYS:
            raise BadRequest(
                f"keep_days is 0-{MAX_KEEP_DAYS}.",
                details={"field": "keep_days", "value": self.keep_days},
                code="invalid_retention_policy",
            )
        return self


# Without a policy of its own an entity type keeps its last 50 versions and all of the last 90 days.
DEFAULT_POLICY = Policy(keep_last=50, keep_days=90)


def check_entity_type(entity_type: str) -> str:
    if entity_type not in ENTITY_TYPES:
        raise BadRequest(
            "Unknown versioned entity type.",
            details={"entity_type": entity_type, "allowed": list(ENTITY_TYPES)},
            code="unknown_entity_type",
        )
    return entity_type


def policy_for(tx: Session, entity_type: str) -> tuple[Policy, bool]:
    """The policy in force for ``entity_type`` and whether it is the default."""
    row = tx.get(RetentionPolicy, check_entity_type(entity_type))
    if row is None:
        return DEFAULT_POLICY, True
    return Policy(keep_last=row.keep_last, keep_days=row.keep_days), False


def beyond_cap(versions: Iterable[tuple[int, datetime]], policy: Policy, pinned: set[int], now: datetime) -> list[int]:
    """The versions of ONE entity the policy lets go, oldest first. ``versions``: (version, created_at)."""
    newest_first = sorted(versions, key=lambda v: v[0], reverse=True)
    cutoff = as_utc(now) - timedelta(days=policy.keep_days)
    return sorted(
        version
        for rank, (version, created_at) in enumerate(newest_first)
        if rank >= policy.keep_last and as_utc(created_at) < cutoff and version not in pinned
    )


__all__ = ["DEFAULT_POLICY", "ENTITY_TYPES", "Policy", "beyond_cap", "check_entity_type", "policy_for"]
