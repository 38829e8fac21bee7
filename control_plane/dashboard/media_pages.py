"""The media library: a searchable grid, upload (drag and drop with progress, or the plain form), soft delete
into the trash and restore from it, and each file's page saying where it is used — the media service of the
tenant API (type told from the bytes, the tenant's size limit, nothing stored on a refusal; "where used" is
the reference scan the sweep trusts). The editor's media picker is the same search over the live files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body, Parameter

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.commands import command_redirect
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key
from control_plane.dashboard.paging import window
from control_plane.dashboard.views import error_message, flash_error, fragment, is_htmx, notice, page, see_other, url
from control_plane.http.guards import MULTIPART
from control_plane.media.schemas import MediaUpload
from tenant_runtime.errors import BadRequest, PressroomError
from tenant_runtime.media.references import embed_markdown

PAGE = 48
PICKER_PAGE = 12  # the picker is a panel beside the editor: a row or two of thumbnails


@dataclass
class MediaUploadForm(MediaUpload):
    """The dashboard's upload: the file and the page's form key, so a second submit of one page uploads once."""

    form_key: str = ""


class MediaPages(Controller):
    """``/dashboard/sites/{tenant}/media``."""

    path = "/sites/{tenant:str}/media"

    @get("/", sync_to_thread=True)
    def library(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        signed_in: Principal,
        services: Services,
        q: str = "",
        shown: Annotated[str, Parameter(query="state")] = "active",
        page_number: Annotated[int, Parameter(query="page", ge=1, le=100_000)] = 1,
    ) -> Response[str]:
        """Files newest first (the trash with ``state=deleted``), searched by name on the server."""
        return self._page(request, services, signed_in, tenant, q=q[:200], state=shown, number=page_number)

    @post("/", sync_to_thread=True, opt={"body": MULTIPART})
    def upload(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        data: Annotated[MediaUploadForm, Body(media_type=RequestEncodingType.MULTI_PART)],
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Upload one file; a refusal (type, size, role) is shown above the grid."""
        content = data.file.file.read()
        try:
            key = form_key({"form_key": data.form_key})  # the script's per-file uploads carry none: each is its own
            outcome = services.media.upload(signed_in, tenant, data.file.filename, content, idempotency_key=key)
        except PressroomError as exc:
            return self._page(
                request,
                services,
                signed_in,
                tenant,
                q="",
                state="active",
                number=1,
                errors=[error_message(exc)],
                status=exc.status,
            )
        added = outcome.body
        code = embed_markdown(added["id"], added["name"], added["content_type"])
        notice(request, f"Uploaded “{added['name']}”: embed it with {code}.")
        return see_other(url("sites", tenant, "media"))

    @post("/sweep", sync_to_thread=True)
    def sweep(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Run sweep_media now (it also runs nightly at 02:00 UTC): trashed files past retention that nothing
        references are deleted for good; the operation's outcome lists what was kept and why."""
        trash = url("sites", tenant, "media") + "?state=deleted"
        return command_redirect(
            request,
            trash,
            lambda: services.media.sweep(
                signed_in, tenant, confirm=checked(data, "confirm"), idempotency_key=form_key(data)
            ),
            lambda outcome: f"Sweep requested: operation {outcome.body.get('operation_id')}.",
            then=lambda outcome: url("sites", tenant, "operations", str(outcome.body["operation_id"])),
        )

    @get("/picker", sync_to_thread=True)
    def picker(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        signed_in: Principal,
        services: Services,
        q: str = "",
        page_number: Annotated[int, Parameter(query="page", ge=1, le=100_000)] = 1,
    ) -> Response[str]:
        """The editor's media picker: live files searched by name, each with its embed code; htmx swaps it into
        the editor as a panel whose buttons insert the code, a browser without JavaScript gets a page to copy
        the codes from. A viewer may not edit a body, so it is refused (``forbidden``)."""
        q = q[:200]
        found = services.media.embeddable(
            signed_in, tenant, q=q or None, limit=PICKER_PAGE + 1, offset=(page_number - 1) * PICKER_PAGE
        )
        path = url("sites", tenant, "media", "picker")
        rows, previous, following = window(found, page_number, PICKER_PAGE, {"q": q}, path=path)
        site = site_for(services, signed_in, tenant)
        shown: dict[str, Any] = {
            "site": site,
            "rows": rows,
            "q": q,
            "picker_url": path,
            "previous": previous,
            "next": following,
        }
        if is_htmx(request):
            return fragment("_media_picker.html", in_editor=True, **shown)
        return page(request, "media_picker.html", principal=signed_in, in_editor=False, **shown)

    @get("/{media_id:str}", sync_to_thread=True)
    def item(
        self, request: Request[Any, Any, Any], tenant: str, media_id: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """One file: its facts, how to embed it, and where it is used (documents now, versions still kept)."""
        media = services.media.get(signed_in, tenant, media_id)
        return page(
            request,
            "media_item.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            settings=services.site.settings(signed_in, tenant),
            item=media,
        )

    @post("/{media_id:str}/{change:str}", sync_to_thread=True)
    def change(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        media_id: str,
        change: str,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Move a file to the trash (still served until swept) or back out of it."""
        library = url("sites", tenant, "media")
        if change == "delete":
            return command_redirect(
                request,
                library,
                lambda: services.media.delete(signed_in, tenant, media_id),
                lambda _: f"{media_id} is in the trash; restore it before its retention ends.",
            )
        if change == "restore":
            return command_redirect(
                request,
                library + "?state=deleted",
                lambda: services.media.restore(signed_in, tenant, media_id),
                lambda _: f"{media_id} is restored.",
            )
        flash_error(request, BadRequest("Move to the trash or restore.", details={"change": change}))
        return see_other(library)

    @staticmethod
    def _page(
        request: Request[Any, Any, Any],
        services: Services,
        principal: Principal,
        tenant: str,
        *,
        q: str,
        state: str,
        number: int,
        errors: list[dict[str, Any]] | None = None,
        status: int = 200,
    ) -> Response[str]:
        chosen = "deleted" if state == "deleted" else "active"
        found = services.media.list(
            principal, tenant, q=q or None, state=chosen, limit=PAGE + 1, offset=(number - 1) * PAGE
        )
        keep = {"q": q, "state": "deleted" if chosen == "deleted" else ""}
        rows, previous, following = window(found, number, PAGE, keep, path=url("sites", tenant, "media"))
        return page(
            request,
            "media.html",
            status_code=status,
            errors=errors,
            principal=principal,
            site=site_for(services, principal, tenant),
            settings=services.site.settings(principal, tenant),
            rows=rows,
            policy=services.media.policy(principal, tenant),
            q=q,
            state=chosen,
            previous=previous,
            next=following,
            form_key=new_form_key(),
        )


__all__ = ["MediaPages"]
