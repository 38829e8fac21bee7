"""Placement: which shard's runtime holds each tenant, the router over it, and operator moves.

router.py   ShardRouter, the RuntimeTransport of the control plane: each tenant's request to its shard
services.py PlacementService: place new tenants, read placements, move a tenant between shards
"""

from control_plane.placement.router import ShardRouter
from control_plane.placement.services import PlacementService, ShardOut

__all__ = ["PlacementService", "ShardOut", "ShardRouter"]
