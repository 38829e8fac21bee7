"""Why a site is suspended: the operator says it (API body or console field), its editors are told it in
every refusal and on every dashboard page, the audit keeps it, and resuming clears it."""

from __future__ import annotations

from tests.control_plane.test_operator_api import OPERATOR, Ops, _member, ops  # noqa: F401 (the fixture)
from tests.fixtures.http_errors import assert_error


def test_the_reason_reaches_the_refusal_and_the_audit_and_resume_clears_it(ops: Ops) -> None:  # noqa: F811
    owner = _member(ops, "acme")
    suspended = ops.api.post(
        "/ops/tenants/acme/suspend", json={"reason": "Invoice 1042 is unpaid\x07"}, headers=OPERATOR
    )
    assert_error(suspended, 400, "invalid_request")  # a control character is refused, nothing changes
    assert ops.api.get("/ops/tenants/acme", headers=OPERATOR).json()["status"] == "active"

    suspended = ops.api.post("/ops/tenants/acme/suspend", json={"reason": " Invoice 1042 is unpaid "}, headers=OPERATOR)
    assert suspended.status_code == 200, suspended.text
    assert (suspended.json()["status"], suspended.json()["status_reason"]) == ("suspended", "Invoice 1042 is unpaid")
    refused = ops.api.post("/api/tenants/acme/documents", json={"slug": "a", "title": "A"}, headers=owner)
    assert_error(refused, 423, "tenant_suspended")
    assert "Invoice 1042 is unpaid" in refused.json()["error"]["message"]
    assert refused.json()["error"]["details"]["reason"] == "Invoice 1042 is unpaid"
    (entry,) = ops.audit(action="tenant.suspend")
    assert entry["data"]["reason"] == "Invoice 1042 is unpaid"

    resumed = ops.api.post("/ops/tenants/acme/resume", headers=OPERATOR)
    assert (resumed.json()["status"], resumed.json()["status_reason"]) == ("active", None)
    again = ops.api.post("/ops/tenants/acme/suspend", headers=OPERATOR)  # no body: no reason, as before
    assert (again.json()["status"], again.json()["status_reason"]) == ("suspended", None)
    assert (
        ops.api.post("/api/tenants/acme/documents", json={"slug": "a", "title": "A"}, headers=owner).json()["error"][
            "message"
        ]
        == "This site is suspended by the platform's operator."
    )
