"""Pressroom's Prefect flows, one per built workflow. A flow orchestrates; its tasks call tenant-runtime code."""

from typing import Any

from prefect import Flow

from flows.export_backup import export_backup
from flows.fan_out_chore import fan_out_chore
from flows.import_content import import_content
from flows.install_package import install_package
from flows.lanes.write_article import write_article
from flows.migrate_field import migrate_field
from flows.prune_policies import prune_policies
from flows.publish import deliver_release, publish_batch, publish_document, scheduled_publish
from flows.rebuild_search_index import rebuild_search_index
from flows.restore_version import restore_version
from flows.seed_example_site import seed_example_site
from flows.sweep_media import sweep_media
from flows.unpublish_document import unpublish_document
from tenant_runtime.workflows import Workflow

FLOWS: dict[Workflow, Flow[Any, Any]] = {
    Workflow.PUBLISH_DOCUMENT: publish_document,
    Workflow.PUBLISH_BATCH: publish_batch,
    Workflow.UNPUBLISH_DOCUMENT: unpublish_document,
    Workflow.DELIVER_RELEASE: deliver_release,
    Workflow.SCHEDULED_PUBLISH: scheduled_publish,
    Workflow.SEED_EXAMPLE_SITE: seed_example_site,
    Workflow.REBUILD_SEARCH_INDEX: rebuild_search_index,
    Workflow.EXPORT_BACKUP: export_backup,
    Workflow.WRITE_ARTICLE: write_article,
    Workflow.INSTALL_PACKAGE: install_package,
    Workflow.IMPORT_CONTENT: import_content,
    Workflow.PRUNE_POLICIES: prune_policies,
    Workflow.SWEEP_MEDIA: sweep_media,
    Workflow.RESTORE_VERSION: restore_version,
    Workflow.FAN_OUT_CHORE: fan_out_chore,
    Workflow.MIGRATE_FIELD: migrate_field,
}

__all__ = ["FLOWS"]
