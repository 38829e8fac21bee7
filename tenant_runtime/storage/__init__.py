"""Object-store seam: a protocol, key rules, a memory twin, filesystem and S3 adapters, a tenant view."""

from tenant_runtime.storage.base import MAX_KEY_LENGTH, ObjectStore, Readable, validate_key, validate_prefix
from tenant_runtime.storage.factory import StorageSettings, build_object_store
from tenant_runtime.storage.filesystem import FilesystemStore
from tenant_runtime.storage.memory import MemoryStore
from tenant_runtime.storage.s3 import S3Store
from tenant_runtime.storage.tenant_view import TenantStore

__all__ = [
    "MAX_KEY_LENGTH",
    "FilesystemStore",
    "MemoryStore",
    "ObjectStore",
    "Readable",
    "S3Store",
    "StorageSettings",
    "TenantStore",
    "build_object_store",
    "validate_key",
    "validate_prefix",
]
