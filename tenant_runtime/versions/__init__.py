"""Versions of a tenant's entities: their bodies (inline or spilled), diffs, what must be kept, retention.

bodies.py     a version's body wherever it lives; spilling large old bodies into the tenant's store
diff.py       a readable word-level diff of two document versions
pins.py       the versions nothing may prune: current, published, pending operations, backup restore points
retention.py  the retention policy of each entity type and which versions it lets go
"""

from tenant_runtime.versions.bodies import SPILL_PREFIX, SPILL_THRESHOLD, revision_body, spill_cold_bodies
from tenant_runtime.versions.diff import word_diff
from tenant_runtime.versions.retention import DEFAULT_POLICY, ENTITY_TYPES, Policy, policy_for

__all__ = [
    "DEFAULT_POLICY",
    "ENTITY_TYPES",
    "SPILL_PREFIX",
    "SPILL_THRESHOLD",
    "Policy",
    "policy_for",
    "revision_body",
    "spill_cold_bodies",
    "word_diff",
]
