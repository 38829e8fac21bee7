"""Site resources (navigation, redirects, theme), the search index, the example content."""

from __future__ import annotations

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from control_plane.site.schemas import ResourceUpdate, SettingsUpdate
from dispatch.runtime import CommandResult, ResourceOut, RuntimeClient, SiteSettingsOut
from dispatch.runtime import messages as m


class SiteService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.gate = gate
        self.runtime = runtime

    def resource(self, principal: Principal, tenant: str, name: str) -> ResourceOut:
        """Navigation, redirects or theme: draft and published versions."""
        return self.runtime.resource(tenant, self.gate.reader(principal, tenant), name)

    def update_resource(
        self, principal: Principal, tenant: str, name: str, data: ResourceUpdate, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """A new draft version (publish it with a release)."""
        message = m.UpdateSiteResource(name=name, version=data.version, content=data.content)
        return self.gate.execute(
            principal, Command(tenant, "content.edit", f"site.update:{name}", message, idempotency_key=idempotency_key)
        )

    def settings(self, principal: Principal, tenant: str) -> SiteSettingsOut:
        """The site's title, description, language and timezone (dates are entered and shown in it)."""
        return self.runtime.site_settings(tenant, self.gate.reader(principal, tenant))

    def configure(
        self, principal: Principal, tenant: str, data: SettingsUpdate, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """Set the site's title, description, language and timezone (an IANA name); what is not given stays.

        The runtime purges, inside the request, every cached response that shows the settings."""
        message = m.ConfigureSite(
            title=data.title, timezone=data.timezone, description=data.description, language=data.language
        )
        return self.gate.execute(
            principal, Command(tenant, "site.admin", "site.configure", message, idempotency_key=idempotency_key)
        )

    def rebuild_search(
        self, principal: Principal, tenant: str, *, force: bool, idempotency_key: str | None = None
    ) -> CommandResult:
        """Replay every published document into a fresh index (a no-op if populated unless forced)."""
        message = m.RebuildSearch(force=force)
        return self.gate.execute(
            principal, Command(tenant, "site.admin", "search.rebuild", message, idempotency_key=idempotency_key)
        )

    def seed(self, principal: Principal, tenant: str) -> CommandResult:
        """Fill the site with example content through the seed_example_site flow."""
        return self.gate.execute(principal, Command(tenant, "site.admin", "site.seed", m.SeedSite()))


__all__ = ["SiteService"]
