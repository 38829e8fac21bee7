"""``TenantStore``: one tenant's window onto a shared object store."""

from __future__ import annotations

from tenant_runtime.errors import InvalidSlug
from tenant_runtime.ids import TENANT_SLUG, check_tenant_slug
from tenant_runtime.storage.base import ObjectStore, Readable, validate_key, validate_prefix


class TenantStore:
    """Every key lives under ``tenants/{tenant}/``; relative keys are validated before prefixing."""

    def __init__(self, store: ObjectStore, tenant: str) -> None:
        check_tenant_slug(tenant)
        # TENANT_SLUG ends in '$', which also matches before a trailing newline; fullmatch does not.
        if not TENANT_SLUG.fullmatch(tenant):
            raise InvalidSlug("Tenant slugs must not end with a newline.", details={"slug": tenant})
        self.store = store
        self.tenant = tenant
        self._prefix = f"tenants/{tenant}/"

    def __repr__(self) -> str:
        return f"TenantStore({self.store!r}, tenant={self.tenant!r})"

    @property
    def prefix(self) -> str:
        """The shared-store prefix that holds this tenant's objects."""
        return self._prefix

    def _full(self, key: str) -> str:
        # Validating the relative key is what keeps '../other/x' from ever reaching the store.
        return self._prefix + validate_key(key)

    def put(self, key: str, data: bytes, *, content_type: str = "application/octet-stream") -> None:
        """Store ``data`` under this tenant's ``key``."""
        self.store.put(self._full(key), data, content_type=content_type)

    def get(self, key: str) -> bytes | None:
        """This tenant's object under ``key``, or ``None``."""
        return self.store.get(self._full(key))

    def put_stream(self, key: str, source: Readable, *, content_type: str = "application/octet-stream") -> None:
        """Store everything ``source`` yields under this tenant's ``key``."""
        self.store.put_stream(self._full(key), source, content_type=content_type)

    def reader(self, key: str) -> Readable | None:
        """This tenant's object under ``key`` opened for reading, or ``None``."""
        return self.store.reader(self._full(key))

    def read_range(self, key: str, offset: int, length: int) -> bytes | None:
        """A slice of this tenant's object under ``key``, or ``None``."""
        return self.store.read_range(self._full(key), offset, length)

    def delete(self, key: str) -> bool:
        """Remove this tenant's ``key``; True if it existed."""
        return self.store.delete(self._full(key))

    def exists(self, key: str) -> bool:
        """Whether this tenant has an object under ``key``."""
        return self.store.exists(self._full(key))

    def list(self, prefix: str = "") -> list[str]:
        """Sorted keys of this tenant starting with ``prefix``, relative to the tenant prefix."""
        full = self._prefix + validate_prefix(prefix)
        return [key[len(self._prefix) :] for key in self.store.list(full) if key.startswith(full)]


__all__ = ["TenantStore"]
