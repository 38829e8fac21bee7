"""Pressroom's Prefect flows. A flow orchestrates; its tasks call tenant-runtime actions."""

from flows.publish_document import publish_document
from flows.seed_example_site import seed_example_site
from flows.unpublish_document import unpublish_document

FLOWS = {
    "publish_document": publish_document,
    "unpublish_document": unpublish_document,
    "seed_example_site": seed_example_site,
}

__all__ = ["FLOWS", "publish_document", "seed_example_site", "unpublish_document"]
