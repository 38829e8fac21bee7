"""Every area's runtime handlers, imported once so the handler tables are complete."""

from dispatch.runtime import (
    audit,
    backups,
    browse,
    changes,
    fields,
    lanes,
    media,
    packages,
    reads,
    retention,
    run_control,
    versions,
)
from dispatch.runtime.handlers import CHANGES, READS

AREAS = (audit, reads, changes, versions, backups, browse, lanes, media, packages, retention, run_control, fields)

__all__ = ["AREAS", "CHANGES", "READS"]
