"""The tenant-runtime seam: what the control plane asks of a tenant's runtime, and the in-process runtime.

messages.py    queries and commands as plain data (msgspec structs)
views.py       what a runtime answers (documents, operations, …, CommandResult)
client.py      RuntimeClient (typed calls) over a RuntimeTransport (the one seam)
in_process.py  InProcessRuntime: the transport that runs requests in this process
reads.py       its query handlers; changes.py its command handlers; browse.py the dashboard's;
               media.py the media library's
               run_control.py pause, resume, terminate, restart, events and the operation record
handoff.py     RelayHandoff: the one place committed work goes to the relay
"""

from dispatch.runtime import messages
from dispatch.runtime.client import RuntimeClient, RuntimeTransport
from dispatch.runtime.handoff import RelayHandoff
from dispatch.runtime.in_process import InProcessRuntime
from dispatch.runtime.views import (
    AttemptOut,
    CommandResult,
    ControlOut,
    DeliveryOut,
    DocumentOut,
    DocumentPage,
    DocumentRow,
    MediaOut,
    MediaPolicyOut,
    OperationOut,
    OperationRecord,
    ReleaseContents,
    ResourceOut,
    SiteSettingsOut,
    StepOut,
    TenantFigures,
    TimelineEntry,
    WaitingOut,
    WebhookOut,
)

__all__ = [
    "AttemptOut",
    "CommandResult",
    "ControlOut",
    "DeliveryOut",
    "DocumentOut",
    "DocumentPage",
    "DocumentRow",
    "InProcessRuntime",
    "MediaOut",
    "MediaPolicyOut",
    "OperationOut",
    "OperationRecord",
    "RelayHandoff",
    "ReleaseContents",
    "ResourceOut",
    "RuntimeClient",
    "RuntimeTransport",
    "SiteSettingsOut",
    "StepOut",
    "TenantFigures",
    "TimelineEntry",
    "WaitingOut",
    "WebhookOut",
    "messages",
]
