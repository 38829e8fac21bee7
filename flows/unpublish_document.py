"""unpublish_document: after the request removed the page, the pipeline's withdrawal and site steps."""

from __future__ import annotations

from prefect import flow

from flows.pipeline import Withdrawal, deliver
from tenant_runtime.workflows import RunOutcome, UnpublishDocumentParameters


@flow(name="unpublish_document", flow_run_name="unpublish {params.tenant}/{params.document_id}", persist_result=False)
async def unpublish_document(params: UnpublishDocumentParameters) -> RunOutcome:
    """verify still withdrawn → page, record and index entry gone → home, purge, aggregates (see pipeline)."""
    withdrawal = Withdrawal(operation_id=params.operation_id, document_id=params.document_id, slug=params.slug)
    return await deliver(
        params.tenant,
        params.operation_id,
        [params.operation_id],
        withdrawals=(withdrawal,),
        generation=params.generation,
    )
