"""Lanes: step graphs over registered steps (graph.py), the reference lanes and their packs (reference.py)."""

from tenant_runtime.lanes.graph import BACKBONE, STEPS, GraphRefused, StepContract, backbone_graph, check, digest
from tenant_runtime.lanes.reference import REFERENCE_LANES

__all__ = ["BACKBONE", "REFERENCE_LANES", "STEPS", "GraphRefused", "StepContract", "backbone_graph", "check", "digest"]
