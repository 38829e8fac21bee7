"""Every area's runtime handlers, imported once so the handler tables are complete."""

from dispatch.runtime import changes, reads
from dispatch.runtime.handlers import CHANGES, READS

AREAS = (reads, changes)

__all__ = ["AREAS", "CHANGES", "READS"]
