"""The control-plane database: tenants, users, memberships, tokens, quotas."""

from control_plane.db.engine import make_engine, upgrade
from control_plane.db.models import ApiToken, ControlPlaneModel, Membership, OperatorAudit, Placement, Tenant, User

__all__ = [
    "ApiToken",
    "ControlPlaneModel",
    "Membership",
    "OperatorAudit",
    "Placement",
    "Tenant",
    "User",
    "make_engine",
    "upgrade",
]
