"""Pressroom's Prefect flows. A flow orchestrates; its tasks call tenant-runtime actions."""

from flows.deliver_release import deliver_release
from flows.publish_batch import publish_batch
from flows.publish_document import publish_document
from flows.rebuild_search_index import rebuild_search_index
from flows.scheduled_publish import scheduled_publish
from flows.seed_example_site import seed_example_site
from flows.unpublish_document import unpublish_document

FLOWS = {
    "publish_document": publish_document,
    "publish_batch": publish_batch,
    "unpublish_document": unpublish_document,
    "deliver_release": deliver_release,
    "scheduled_publish": scheduled_publish,
    "seed_example_site": seed_example_site,
    "rebuild_search_index": rebuild_search_index,
}

__all__ = [
    "FLOWS",
    "deliver_release",
    "publish_batch",
    "publish_document",
    "rebuild_search_index",
    "scheduled_publish",
    "seed_example_site",
    "unpublish_document",
]
