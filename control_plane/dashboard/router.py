"""The dashboard router: its pages, its session cookie, its form guard, its HTML errors.

Everything dashboard-specific is scoped to this router, so the JSON API beside it
sees no session middleware, no cookies and no HTML.
"""

from __future__ import annotations

from litestar import Router
from litestar.datastructures import ResponseHeader
from litestar.di import Provide

from control_plane.dashboard.approval_pages import ApprovalPages
from control_plane.dashboard.auth_pages import AuthPages
from control_plane.dashboard.context import provide_signed_in
from control_plane.dashboard.document_pages import DocumentPages
from control_plane.dashboard.errors import EXCEPTION_HANDLERS
from control_plane.dashboard.field_pages import FieldPages
from control_plane.dashboard.health_pages import HealthPages
from control_plane.dashboard.lane_pages import BriefPages, LanePages
from control_plane.dashboard.media_pages import MediaPages
from control_plane.dashboard.member_pages import MemberPages
from control_plane.dashboard.operation_pages import OperationPages
from control_plane.dashboard.ops_key_pages import OperatorKeyPages
from control_plane.dashboard.ops_pages import OperatorPages
from control_plane.dashboard.package_pages import PackagePages
from control_plane.dashboard.release_pages import ReleasePages
from control_plane.dashboard.revision_pages import RevisionPages
from control_plane.dashboard.schedule_pages import SchedulePages
from control_plane.dashboard.security import SECURITY_HEADERS, protect_forms
from control_plane.dashboard.session import session_middleware
from control_plane.dashboard.site_pages import SitePages
from control_plane.dashboard.views import PREFIX
from control_plane.settings import ControlPlaneSettings


def build_dashboard(settings: ControlPlaneSettings) -> Router:
    """The ``/dashboard`` router, its session cookie keyed by the configured session secret."""
    return Router(
        path=PREFIX,
        route_handlers=[
            AuthPages,
            DocumentPages,
            SchedulePages,
            OperationPages,
            ReleasePages,
            SitePages,
            OperatorPages,
            OperatorKeyPages,
            RevisionPages,
            MediaPages,
            BriefPages,
            LanePages,
            ApprovalPages,
            HealthPages,
            MemberPages,
            FieldPages,
            PackagePages,
        ],
        middleware=[session_middleware(settings)],
        guards=[protect_forms],
        dependencies={"signed_in": Provide(provide_signed_in, sync_to_thread=True)},
        exception_handlers=EXCEPTION_HANDLERS,
        response_headers=[ResponseHeader(name=name, value=value) for name, value in SECURITY_HEADERS.items()],
        include_in_schema=False,
    )


__all__ = ["build_dashboard"]
