"""Edge-cache seam: purge surrogate keys (tags) where pages are cached."""

from tenant_runtime.edge.purgers import HttpPurger, MemoryPurger, NullPurger, Purger, TenantCache, tenant_tags
from tenant_runtime.edge.tagged_cache import TaggedCache

__all__ = ["HttpPurger", "MemoryPurger", "NullPurger", "Purger", "TaggedCache", "TenantCache", "tenant_tags"]
