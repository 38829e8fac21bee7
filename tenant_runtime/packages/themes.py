"""Theme packages: their check when installed, and the theme a site renders with.

A theme package carries Jinja templates under ``templates/`` (``page.html`` and
``home.html`` at least; any of ``TEMPLATES`` it leaves out are the default
theme's, and ``default/…`` names a default template to extend). Installing one
makes its name selectable for the site's theme pin (a release, or ``pin_theme``
on the install); the pin names the theme, the active version of its package
renders it, so an upgrade or a rollback of the pinned theme changes the pages.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import UTC, datetime

from jinja2 import TemplateError
from sqlmodel import Session, select

from tenant_runtime.errors import PackageRejected
from tenant_runtime.packages.kinds import ContentKind, PackageCheck, register_kind
from tenant_runtime.packages.staging import read_staged
from tenant_runtime.rendering import DocumentView, ListingItem, SearchHit, SiteView, render_home, render_page
from tenant_runtime.rendering.theme import DEFAULT_THEME, TEMPLATES, PackageTheme, render_search
from tenant_runtime.workspace import Workspace
from tenant_runtime.workspace.models import SiteResource, SiteResourceRevision
from tenant_runtime.workspace.package_models import ACTIVE, InstalledPackage

PREFIX = "templates/"
REQUIRED = ("page.html", "home.html")
_CACHE_SIZE = 64


def templates_of(files: dict[str, bytes] | PackageCheck) -> dict[str, str]:
    """The package's templates by name (``page.html``), decoded; a non-UTF-8 one is ``package_invalid``."""
    source = files.files if isinstance(files, PackageCheck) else files
    templates: dict[str, str] = {}
    for path, content in source.items():
        if path.startswith(PREFIX):
            try:
                templates[path.removeprefix(PREFIX)] = content.decode("utf-8")
            except UnicodeDecodeError:
                raise PackageRejected(
                    "A theme template is not UTF-8.", details={"path": path}, code="package_invalid"
                ) from None
    return templates


def _sample() -> tuple[SiteView, DocumentView, list[ListingItem]]:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    site = SiteView(tenant="sample", title="Sample", base_url="http://sample.invalid/sample")
    doc = DocumentView("doc_sample", "sample", "Sample", "Some *text*.", "post", 1, at, at)
    return site, doc, [ListingItem("sample", "Sample", "post", at, "Some text.")]


def validate_theme(check: PackageCheck) -> None:
    """The templates are there, compile, and render a sample page, home and search (else refused)."""
    templates = templates_of(check)
    missing = [name for name in REQUIRED if name not in templates]
    unknown = sorted(name for name in templates if name not in TEMPLATES and not name.startswith("partials/"))
    if missing or unknown:
        raise PackageRejected(
            "A theme provides templates/page.html and templates/home.html, and only known templates "
            "(or templates/partials/…).",
            details={"missing": missing, "unknown": unknown, "known": list(TEMPLATES)},
            code="theme_invalid",
        )
    theme = PackageTheme(check.manifest.name, templates)
    site, doc, items = _sample()
    for name, render in (
        ("page.html", lambda: render_page(site, doc, theme=theme)),
        ("home.html", lambda: render_home(site, items, theme=theme)),
        ("search.html", lambda: render_search(site, "sample", [SearchHit("sample", "Sample")], theme=theme)),
    ):
        try:
            render()
        except TemplateError as exc:
            raise PackageRejected(
                f"The theme's {name} does not render: {exc}",
                details={"template": name, "line": getattr(exc, "lineno", None), "error": str(exc)[:300]},
                code="theme_invalid",
            ) from None


register_kind(ContentKind("theme", validate_theme))


def installed_themes(tx: Session) -> list[str]:
    """Names the theme pin may take: the default and every active theme package."""
    rows = tx.exec(
        select(InstalledPackage.name).where(InstalledPackage.kind == "theme", InstalledPackage.status == ACTIVE)
    ).all()
    return [DEFAULT_THEME, *sorted(rows)]


def pinned_theme(tx: Session) -> str:
    """The theme name the public site uses now (the published pin), or the default."""
    resource = tx.get(SiteResource, "theme")
    if resource is None or not resource.published_version:
        return DEFAULT_THEME
    revision = tx.exec(
        select(SiteResourceRevision).where(
            SiteResourceRevision.name == "theme", SiteResourceRevision.version == resource.published_version
        )
    ).first()
    content = revision.content if revision is not None else None
    return str(content.get("name") or DEFAULT_THEME) if isinstance(content, dict) else DEFAULT_THEME


_themes: OrderedDict[tuple[str, str, str, str], PackageTheme] = OrderedDict()
_lock = threading.Lock()


def site_theme(ws: Workspace, tx: Session) -> str | PackageTheme:
    """What the site renders with: the default theme, or the active version of the pinned theme package."""
    name = pinned_theme(tx)
    if name == DEFAULT_THEME:
        return DEFAULT_THEME
    row = tx.exec(
        select(InstalledPackage).where(
            InstalledPackage.name == name, InstalledPackage.kind == "theme", InstalledPackage.status == ACTIVE
        )
    ).first()
    if row is None:  # uninstall refuses a pinned theme; this is only a workspace restored without its package
        return DEFAULT_THEME
    return load_theme(ws, row)


def load_theme(ws: Workspace, row: InstalledPackage) -> PackageTheme:
    """The package's theme from its staged files (checked against the manifest), cached per version."""
    cache_key = (ws.tenant, row.name, row.version, row.manifest_sha256)
    with _lock:
        theme = _themes.get(cache_key)
        if theme is not None:
            _themes.move_to_end(cache_key)
            return theme
    files: dict[str, bytes] = {}
    for entry in row.manifest.get("files", []):
        path = str(entry["path"])
        if path.startswith(PREFIX):
            files[path] = read_staged(ws, row.name, row.version, entry)
    theme = PackageTheme(row.name, templates_of(files))
    with _lock:
        _themes[cache_key] = theme
        while len(_themes) > _CACHE_SIZE:
            _themes.popitem(last=False)
    return theme


__all__ = ["installed_themes", "load_theme", "pinned_theme", "site_theme", "templates_of", "validate_theme"]
