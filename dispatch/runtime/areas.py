"""Every area's runtime handlers, imported once so the handler tables are complete."""

from dispatch.runtime import changes, reads, versions
from dispatch.runtime.handlers import CHANGES, READS

AREAS = (reads, changes, versions)

__all__ = ["AREAS", "CHANGES", "READS"]
