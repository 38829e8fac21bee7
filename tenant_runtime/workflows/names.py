"""The name of every workflow Pressroom runs: its Prefect flow's name and its deployment's name."""

from __future__ import annotations

from enum import StrEnum


class Workflow(StrEnum):
    """Every workflow, by the name its flow and deployment carry in Prefect."""

    # The twelve workflows of DESIGN.md.
    PUBLISH_DOCUMENT = "publish_document"
    UNPUBLISH_DOCUMENT = "unpublish_document"
    SCHEDULED_PUBLISH = "scheduled_publish"
    IMPORT_CONTENT = "import_content"
    MIGRATE_FIELD = "migrate_field"
    EXPORT_BACKUP = "export_backup"
    INSTALL_PACKAGE = "install_package"
    RESTORE_VERSION = "restore_version"
    SEED_EXAMPLE_SITE = "seed_example_site"
    PRUNE_POLICIES = "prune_policies"
    SWEEP_MEDIA = "sweep_media"
    REBUILD_SEARCH_INDEX = "rebuild_search_index"
    # The deliveries the relay and the release commands start.
    PUBLISH_BATCH = "publish_batch"
    DELIVER_RELEASE = "deliver_release"
    # Lanes: one flow interprets every lane's step graph (DESIGN.md, "Lane graphs at run time").
    WRITE_ARTICLE = "write_article"
    # A platform run: one fire of a nightly chore, fanned out into tenants' outboxes (DESIGN.md,
    # "Nightly and periodic work"); each chore's deployment is named after it.
    FAN_OUT_CHORE = "fan_out_chore"


__all__ = ["Workflow"]
