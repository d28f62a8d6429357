"""One x402 action and everything the profile says about its answer, given the model.

Shared by the scenarios and the state machine: each function sends one request (or a request
and the re-read that shows a refusal changed nothing), records its checks under their
requirement ids in the ``Verdicts`` and updates the ``Issued`` model. ``fatal`` is False in the
scenarios (go on after a failed check) and True in the machine (hypothesis shrinks the
sequence).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx

from conformance.judge.outcomes import json_object
from conformance.judge.x402_history import IssuedNonces, Settlement, result_digest
from conformance.judge.x402_settlements import IssuedEntry, contradictions, settlement_findings
from conformance.suite.stateful import Verdicts, body_of
from conformance.suite.tool_errors import CaseError
from conformance.suite.wire.judged_call import JudgedCall, judged
from conformance.suite.x402.api import REQUIREMENTS, SETTLE, USAGE, IssueOutcome, Requested, X402Api
from conformance.suite.x402.checks import shape_problems, string_field_problems
from conformance.suite.x402.model import EXACT, Issued, decimal_text
from conformance.suite.x402.payloads import Malformed, Tampering

SETTLE_RESULT = "X402SettleResult"
USAGE_RESULT = "X402UsageResult"
USAGE_FIELDS = ("payment_id", "scheme", "max_raw", "actual_raw", "usage_id")


# ---------------------------------------------------------------------------- requirements
def issue(
    verdicts: Verdicts,
    api: X402Api,
    requested: Requested,
    nonces: IssuedNonces,
    *,
    fatal: bool,
) -> Issued:
    """Requirements as asked, every rule on them checked; the nonces must be new (X402-007)."""
    outcome, issued = api.issue(requested)
    check_issued(verdicts, api, requested, outcome, nonces, fatal=fatal)
    return issued


def check_issued(
    verdicts: Verdicts,
    api: X402Api,
    requested: Requested,
    outcome: IssueOutcome,
    nonces: IssuedNonces,
    *,
    fatal: bool,
) -> None:
    verdicts.findings(judged(api.answers, outcome.response, REQUIREMENTS), fatal=fatal)
    body = body_of(outcome.response)
    payment_id, accepts = body.get("payment_id"), body.get("accepts")
    if isinstance(payment_id, str) and isinstance(accepts, list):
        verdicts.findings(nonces.issued(payment_id, accepts, "an earlier call"), fatal=fatal)


# ---------------------------------------------------------------------------- settlement
def settle_valid(
    verdicts: Verdicts, api: X402Api, issued: Issued, value: int | None, *, fatal: bool
) -> None:
    """A payload the server must accept (or, once settled, refuse as another payload)."""
    if issued.settled:
        settle_other(verdicts, api, issued, value, fatal=fatal)
        return
    body = api.pay(issued) if value is None else api.pay(issued, value=value)
    response = api.settle(body)
    ids = ["X402-012", "X402-030"]
    if issued.scheme != EXACT and value is not None:
        ids.append("X402-020")  # an upto value at most the maximum is accepted
    accepted = verdicts.status(
        ids, response, api.rules.success("settleX402Payment"), "a valid payload", fatal=fatal
    )
    if accepted:
        verdicts.findings(judged(api.answers, response, SETTLE), fatal=fatal)
        verdicts.problems(
            ["OPS-033"], shape_problems(api.rules.contract, SETTLE_RESULT, response), fatal=fatal
        )
        issued.settle_body = body
        result = result_digest(json_object(response), response.content)
        issued.settlement = Settlement.of(body, response.status_code, result, "the settlement")
        issued.authorised = int(body["payment_payload"]["authorization"]["value"])
        issued.settled_at = time.time()


def settle_again(verdicts: Verdicts, api: X402Api, issued: Issued, *, fatal: bool) -> None:
    """The identical settle request again: the same result (X402-023)."""
    assert issued.settle_body is not None
    response = api.settle(issued.settle_body)
    _later(verdicts, api, issued, issued.settle_body, response, "X402-023", fatal=fatal)


def _later(
    verdicts: Verdicts,
    api: X402Api,
    issued: Issued,
    body: dict[str, Any],
    response: httpx.Response,
    rule: str,
    *,
    fatal: bool,
) -> None:
    """The judge's verdict on a settle request ``body`` for the settled ``issued``, built to
    come under ``rule``."""
    assert issued.settlement is not None
    call = JudgedCall(response, SETTLE)
    result = result_digest(call.answer, response.content)
    found = api.history.settle(
        issued.settlement, body, call.status, call.code, result, known_valid=True
    )
    if not any(rule in f.ids for f in found):
        raise CaseError(f"the judge does not see this settle request of {issued.label} as {rule}'s")
    verdicts.findings(found, fatal=fatal)


def _unchanged(verdicts: Verdicts, api: X402Api, issued: Issued, *, fatal: bool) -> None:
    """Re-read after a refusal on a settled payment: the statement shows as many lines for it
    as after its settlement (the refused payload booked nothing)."""
    if issued.ledger_lines is None:
        return
    lines = api.ledger_lines(issued)
    if lines is None:
        return
    verdicts.check(
        ["X402-024"],
        lines == issued.ledger_lines,
        f"after the refusal the statement shows {lines} line(s) for the payment, "
        f"{issued.ledger_lines} after its settlement: the refused payload was booked",
        fatal=fatal,
    )


def _baseline(api: X402Api, issued: Issued) -> None:
    """The statement lines of a settled payment, read once before its first refusal."""
    if issued.ledger_lines is None:
        issued.ledger_lines = api.ledger_lines(issued)


def settle_other(
    verdicts: Verdicts, api: X402Api, issued: Issued, value: int | None, *, fatal: bool
) -> None:
    """Another valid payload for a settled payment: 409 (X402-024), nothing changed."""
    # Another authorization than the settled one: a different start of validity.
    settled = issued.settle_body
    assert settled is not None
    valid_after = int(settled["payment_payload"]["authorization"]["valid_after"]) - 1
    changes: dict[str, Any] = {"valid_after": valid_after}
    if value is not None:
        changes["value"] = value
    _baseline(api, issued)
    body = api.pay(issued, **changes)
    _later(verdicts, api, issued, body, api.settle(body), "X402-024", fatal=fatal)
    _unchanged(verdicts, api, issued, fatal=fatal)


def settle_breaking(
    verdicts: Verdicts,
    api: X402Api,
    issued: Issued,
    body: dict[str, Any],
    breaks: str,
    what: str,
    *,
    fatal: bool,
    forged: bool = False,
) -> bool:
    """A settlement built to break ``breaks`` of the requirements issued for ``issued``: the
    judge's verdict (``x402_settlements``), then the failure's reason as code (X402-022). A
    ``forged`` signature is the case's own to name: the judge verifies none. True when the
    server settled it."""
    sent = time.time()
    response = api.settle(body)
    payload = body.get("payment_payload")
    authorization = payload.get("authorization") if isinstance(payload, dict) else None
    entry = IssuedEntry.of(issued.entry)
    assert entry is not None
    broken = contradictions(
        [entry],
        body.get("payment_requirements"),
        authorization if isinstance(authorization, dict) else {},
        sent,
    )
    if breaks not in {rid for rid, _ in broken}:
        if not forged:
            raise CaseError(f"the judge does not see {what!r} break {breaks}")
        broken = [(breaks, "the signature is not the payer's")]
    found = settlement_findings(
        broken,
        JudgedCall(response, SETTLE),
        api.rules.settle_failure,
        known_valid=True,
        what=what,
    )
    if verdicts.findings(found, fatal=fatal):
        verdicts.findings(judged(api.answers, response, SETTLE), fatal=fatal)
    return response.status_code == api.rules.success(SETTLE)


def settle_tampered(
    verdicts: Verdicts, api: X402Api, issued: Issued, tampering: Tampering, *, fatal: bool
) -> bool:
    """A payload that does not verify: the profile's settlement failure with its reason as
    code; on a settled payment, 409 is as good an answer. True when the server settled it
    anyway (the payment can show nothing else after that)."""
    body = tampering.build(api, issued)
    if not issued.settled:
        return settle_breaking(
            verdicts,
            api,
            issued,
            body,
            tampering.requirement_id,
            tampering.name,
            fatal=fatal,
            forged=tampering.forged,
        )
    _baseline(api, issued)
    assert issued.settlement is not None
    response = api.settle(body)
    call = JudgedCall(response, SETTLE)
    history = api.history
    found = history.settle(
        issued.settlement,
        body,
        call.status,
        call.code,
        result_digest(call.answer, response.content),
        known_valid=True,
        also=(history.failure,),
    )
    # none when the payload is the settled one, signed again in the same second, and only the
    # requirements sent with it differ: no rule of a settled payment judges that request
    verdicts.findings(found, tampering.name, fatal=fatal)
    _unchanged(verdicts, api, issued, fatal=fatal)
    return False


def settle_malformed(
    verdicts: Verdicts,
    api: X402Api,
    issued: Issued,
    case: Malformed,
    payload: dict[str, Any],
    *,
    fatal: bool,
) -> bool:
    """A payload missing a field or breaking a format: 400 validation_error. True when the
    server settled it anyway."""
    body = api.settle_body(issued.payment_id, issued.entry, case.apply(payload))
    response = api.settle(body)
    verdicts.status(
        ["X402-PAYLOAD-001"], response, api.rules.validation, f"a payload {case.name}", fatal=fatal
    )
    return response.status_code == api.rules.success("settleX402Payment")


def settle_unknown(verdicts: Verdicts, api: X402Api, issued: Issued, *, fatal: bool) -> None:
    """A valid payload for an unknown payment_id: 404 (X402-013)."""
    body = {**api.pay(issued), "payment_id": api.unknown_id()}
    response = api.settle(body)
    verdicts.status(
        ["X402-013"], response, api.rules.not_found, "settle of an unknown payment", fatal=fatal
    )


# ---------------------------------------------------------------------------- usage
def usage(
    verdicts: Verdicts, api: X402Api, issued: Issued, actual_raw: int, *, fatal: bool
) -> None:
    """Usage of ``actual_raw`` raw units, judged against the payment's history
    (``judge.x402_history``): refused unless settled upto or over the authorised value, else
    accepted in raw units with max_raw the authorised value."""
    rules = api.rules
    amount = decimal_text(actual_raw, issued.deployment.decimals)
    usage_id = f"usage_{uuid.uuid4().hex[:16]}"
    response = api.usage(issued.payment_id, amount, usage_id)
    call = JudgedCall(response, USAGE, {"payment_id": issued.payment_id})
    found = api.history.usage(issued.payment, call, known_valid=True)
    if not found:
        raise CaseError(f"the judge has no verdict on a usage report of {amount} on {issued.label}")
    if response.status_code != rules.success(USAGE):
        verdicts.findings(found, fatal=fatal)
        return
    issued.used_raw += actual_raw
    verdicts.findings(api.answers.judge(call), fatal=fatal)
    verdicts.findings(found, fatal=fatal)
    verdicts.problems(
        ["OPS-034"], shape_problems(rules.contract, USAGE_RESULT, response), fatal=fatal
    )
    verdicts.problems(["SHAPE-024"], string_field_problems(response, USAGE_FIELDS), fatal=fatal)


def usage_unknown(verdicts: Verdicts, api: X402Api, decimals: int, *, fatal: bool) -> None:
    response = api.usage(api.unknown_id(), decimal_text(1, decimals))
    verdicts.status(
        ["X402-028"], response, api.rules.not_found, "usage of an unknown payment", fatal=fatal
    )
