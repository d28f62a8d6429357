"""Operations 17-19: x402 payment requirements, settlement and usage.

Requirements issue one ``accepts`` entry per deployment of the currency on the chain, each
with a fresh nonce and the EIP-712 domain of the asset in ``extra``. Settlement checks, in this
order, that the submitted requirements are ones issued for the payment, that the EIP-3009
authorization pays ``pay_to`` with the issued nonce inside its validity window for the right
value, and that its signature recovers to ``authorization.from``; a failure is 422 with the
x402 failure reason as ``code``. The reasons are those of the x402 reference implementation's
exact EVM scheme; ``upto`` uses the same names, its payload being the same EIP-3009
authorization. A ``payment_payload`` missing a field of the x402 exact-EVM shape or breaking
one of its formats (the profile's ``x402.payment_payload``) breaks the contract: 400, before
anything is looked up. Settling again with the identical payload returns the first result; any
other payload for a settled payment is 409. Usage is checked against what the payer authorised
(the settled authorization's value), not against ``max_amount_required``.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from eth_utils.address import to_checksum_address

from conformance.core import eip712
from conformance.core.contract import x402_payload_schemas
from conformance.core.profile import Currency, Profile
from conformance.reference import amounts, fixtures, ledger, payments, splits
from conformance.reference.context import RequestContext
from conformance.reference.errors import (
    ApiError,
    business_rule,
    invalid_state,
    not_found,
    validation_error,
)
from conformance.reference.operations import Reply, operation
from conformance.reference.states import states
from conformance.reference.timestamps import iso
from conformance.reference.validation import RequestInvalid, check_value

SCHEMA = """
CREATE TABLE IF NOT EXISTS x402_payments (
    payment_id TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL,
    scheme TEXT NOT NULL,
    currency_id TEXT NOT NULL,
    chain_id TEXT NOT NULL,
    max_raw TEXT NOT NULL,
    splits TEXT NOT NULL,
    status TEXT NOT NULL,
    settled_fingerprint TEXT,
    settled_result TEXT,
    settled_raw TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS x402_requirements (
    payment_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (payment_id, position)
);
CREATE TABLE IF NOT EXISTS x402_usage (
    payment_id TEXT NOT NULL,
    usage_id TEXT NOT NULL,
    actual_raw TEXT NOT NULL,
    evidence TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""

# EIP-155 chain ids of the chains the default profile names; any other chain of a profile gets
# a stable made-up id far from real ones.
KNOWN_CHAIN_IDS = {"ethereum": 1, "base": 8453}
TOKEN_DOMAIN_VERSION = "2"

REASON_REQUIREMENTS = "invalid_payment_requirements"
REASON_PAYLOAD = "invalid_payload"
REASON_RECIPIENT = "invalid_exact_evm_payload_recipient_mismatch"
REASON_NONCE = "invalid_exact_evm_payload_nonce_mismatch"
REASON_VALID_AFTER = "invalid_exact_evm_payload_authorization_valid_after"
REASON_VALID_BEFORE = "invalid_exact_evm_payload_authorization_valid_before"
REASON_VALUE = "invalid_exact_evm_payload_authorization_value"
REASON_SIGNATURE = "invalid_exact_evm_payload_signature"


# ----------------------------------------------------------------------------- derivations
def _derived_address(*parts: str) -> str:
    digest = hashlib.sha256("\n".join(("payment-conformance", *parts)).encode()).hexdigest()
    address: str = to_checksum_address("0x" + digest[:40])
    return address


def chain_number(chain_id: str) -> int:
    known = KNOWN_CHAIN_IDS.get(chain_id)
    if known is not None:
        return known
    digest = hashlib.sha256(f"chain\n{chain_id}".encode()).digest()
    return 1_000_000_000 + int.from_bytes(digest[:4], "big")


def token_address(currency_id: str, chain_id: str) -> str:
    """The (made-up, stable) contract address of a token deployment."""
    return _derived_address("token", currency_id, chain_id)


def pay_to_address(merchant_id: str) -> str:
    """The merchant's receiving address: one per merchant, stable across restarts."""
    return _derived_address("pay_to", merchant_id)


def asset_of(currency: Currency, chain_id: str) -> str:
    if currency.asset_kinds.get(chain_id) == "native":
        return "native"
    return token_address(currency.currency_id, chain_id)


def domain_of(currency: Currency, chain_id: str) -> eip712.Eip712Domain:
    # A native asset has no token contract; its authorizations name the settlement contract.
    if currency.asset_kinds.get(chain_id) == "native":
        contract = _derived_address("settlement", currency.currency_id, chain_id)
    else:
        contract = token_address(currency.currency_id, chain_id)
    return eip712.Eip712Domain(
        name=currency.name,
        version=TOKEN_DOMAIN_VERSION,
        chain_id=chain_number(chain_id),
        verifying_contract=contract,
    )


def to_raw(
    ctx: RequestContext, amount: str, currency: Currency, field: str, *, allow_zero: bool = False
) -> int:
    """A decimal string in the currency's smallest unit; 422 when it has too many decimals."""
    valid = amounts.is_decimal_string
    if ctx.fault("validation-amount-unicode-digits"):
        valid = amounts.is_decimal_by_isdecimal
    if not valid(amount):
        raise business_rule(ctx, "invalid_amount", f"{field} must be a decimal number")
    if amounts.fraction_digits(amount) > currency.decimals:
        raise business_rule(
            ctx,
            "too_many_decimals",
            f"{field} has more than {currency.decimals} decimals for {currency.currency_id}",
        )
    raw = amounts.to_raw(amount, currency.decimals)
    if raw == 0 and not allow_zero:
        raise business_rule(ctx, "invalid_amount", f"{field} must be greater than 0")
    if ctx.fault("x402-max-amount-wrong-decimals"):
        # The bug: every currency scaled like USDC, with 6 decimals.
        shift = currency.decimals - 6
        raw = raw // 10**shift if shift >= 0 else raw * 10**-shift
    too_large = ctx.config.profile.error("status", "amount_too_large")
    max_digits = ctx.config.profile.payments.raw_amount_max_digits
    if len(str(raw)) > max_digits:
        raise ApiError(
            too_large.status,
            too_large.code or "amount_too_large",
            f"{field} is too large: its raw value has more than {max_digits} digits",
        )
    return raw


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ----------------------------------------------------------------------------- requirements
def _currency_on_chain(ctx: RequestContext, currency_id: str, chain_id: str) -> Currency:
    currency = fixtures.currency(ctx, currency_id)
    fixtures.require_deployment(ctx, currency, chain_id)
    return currency


def _nonce(ctx: RequestContext, max_raw: int) -> str:
    if ctx.fault("x402-requirements-reuse-nonce"):
        # The bug: a nonce derived from what is being paid, so equal requests share it.
        seed = f"{ctx.merchant_id}\n{ctx.body['currency_id']}\n{ctx.body['chain_id']}\n{max_raw}"
        return "0x" + hashlib.sha256(seed.encode()).hexdigest()
    return "0x" + secrets.token_hex(32)


@operation("createX402Requirements")
def create_requirements(ctx: RequestContext) -> Reply:
    body = ctx.body
    scheme = str(body.get("scheme", "exact"))
    chain_id = str(body["chain_id"])
    currency = _currency_on_chain(ctx, str(body["currency_id"]), chain_id)
    max_raw = to_raw(ctx, str(body["amount"]), currency, "amount")
    shares = splits.validate_splits(ctx, body.get("splits") or [])
    payment_id = payments.new_payment_id()
    offset = ctx.config.profile.x402.valid_before_offset_secs
    if ctx.fault("x402-valid-before-offset-tenfold"):
        offset *= 10  # the bug: a stray zero in the configured offset
    details = {"scheme": scheme, "currency_id": currency.currency_id, "chain_id": chain_id}
    if "user_id" in body:
        details["user_id"] = str(body["user_id"])
    payments.insert_payment(
        ctx.conn,
        payment_id=payment_id,
        merchant_id=ctx.merchant_id,
        kind=payments.KIND_X402,
        status=ctx.config.profile.lifecycle("payments").initial_state,
        created_at=ctx.now,
        expires_at=ctx.now + timedelta(seconds=offset),
        quote_raw={currency.currency_id: max_raw},
        splits=shares,
        details=details,
    )
    own_url = f"{ctx.config.public_url}/v1/x402/{payment_id}"
    if ctx.fault("x402-resource-default-relative"):
        own_url = f"/v1/x402/{payment_id}"  # the bug: the path without the server's origin
    resource = body.get("resource") or own_url
    valid_before = int(ctx.now.timestamp()) + offset
    deployments = [c for c in currency.chains if c == chain_id]
    accepts: list[dict[str, Any]] = []
    for position, deployment_chain in enumerate(deployments):
        entry = {
            "scheme": scheme,
            "network": deployment_chain,
            "asset": asset_of(currency, deployment_chain),
            "pay_to": pay_to_address(ctx.merchant_id),
            "max_amount_required": str(max_raw),
            "resource": resource,
            "nonce": _nonce(ctx, max_raw),
            "valid_before": valid_before,
            "extra": domain_of(currency, deployment_chain).as_extra(),
        }
        ctx.conn.execute(
            "INSERT INTO x402_requirements (payment_id, position, entry) VALUES (?, ?, ?)",
            (payment_id, position, _canonical_json(entry)),
        )
        accepts.append(entry)
    ctx.conn.execute(
        "INSERT INTO x402_payments (payment_id, merchant_id, scheme, currency_id, chain_id,"
        " max_raw, splits, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'required', ?)",
        (
            payment_id,
            ctx.merchant_id,
            scheme,
            currency.currency_id,
            chain_id,
            str(max_raw),
            json.dumps(shares),
            iso(ctx.now),
        ),
    )
    body_out = {"payment_id": payment_id, "accepts": accepts}
    return Reply(ctx.config.profile.success_status(ctx.operation_id), body_out)


# ----------------------------------------------------------------------------- settlement
@dataclass(frozen=True)
class X402Payment:
    payment_id: str
    merchant_id: str
    scheme: str
    currency_id: str
    chain_id: str
    max_raw: int
    splits: list[tuple[str, int]]
    status: str
    settled_fingerprint: str | None
    settled_result: str | None
    settled_raw: int | None


def _payment(ctx: RequestContext, payment_id: str) -> X402Payment:
    row = ctx.conn.execute(
        "SELECT payment_id, merchant_id, scheme, currency_id, chain_id, max_raw, splits, status,"
        " settled_fingerprint, settled_result, settled_raw FROM x402_payments"
        " WHERE payment_id = ? AND (merchant_id = ? OR ?)",
        (payment_id, ctx.merchant_id, ctx.fault("isolation-x402-any-merchant")),
    ).fetchone()
    if row is None:
        raise not_found(ctx, "x402 payment")
    return X402Payment(
        payment_id=row[0],
        merchant_id=row[1],
        scheme=row[2],
        currency_id=row[3],
        chain_id=row[4],
        max_raw=int(row[5]),
        splits=[(str(m), int(b)) for m, b in json.loads(row[6])],
        status=row[7],
        settled_fingerprint=row[8],
        settled_result=row[9],
        settled_raw=None if row[10] is None else int(row[10]),
    )


def _issued(conn: sqlite3.Connection, payment_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT entry FROM x402_requirements WHERE payment_id = ? ORDER BY position",
        (payment_id,),
    ).fetchall()
    return [json.loads(r[0]) for r in rows]


class SettlementRejected(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def verify_settlement(
    ctx: RequestContext,
    payment: X402Payment,
    issued: list[dict[str, Any]],
    submitted: Any,
    payload: Any,
) -> tuple[dict[str, Any], eip712.TransferAuthorization]:
    """The requirement answered and the authorization, or SettlementRejected with the reason."""
    entry = next((e for e in issued if _canonical_json(e) == _canonical_json(submitted)), None)
    if entry is None:
        if not ctx.fault("x402-settle-trusts-submitted-requirements"):
            raise SettlementRejected(
                REASON_REQUIREMENTS, "payment_requirements are not ones issued for this payment"
            )
        entry = dict(submitted)
    if not isinstance(payload, dict) or not isinstance(payload.get("signature"), str):
        raise SettlementRejected(REASON_PAYLOAD, "payment_payload.signature must be a string")
    try:
        authorization = eip712.TransferAuthorization.from_payload(payload.get("authorization"))
        domain = eip712.Eip712Domain.from_extra(entry.get("extra"))
    except eip712.TypedDataError as exc:
        raise SettlementRejected(REASON_PAYLOAD, str(exc)) from None
    now = int(ctx.now.timestamp())
    if not eip712.same_address(authorization.to, str(entry["pay_to"])) and not ctx.fault(
        "x402-settle-ignores-recipient"
    ):
        raise SettlementRejected(REASON_RECIPIENT, "authorization.to is not the pay_to address")
    if authorization.nonce.lower() != str(entry["nonce"]).lower() and not ctx.fault(
        "x402-settle-ignores-nonce"
    ):
        raise SettlementRejected(REASON_NONCE, "authorization.nonce is not the issued nonce")
    if authorization.valid_after > now and not ctx.fault("x402-settle-ignores-valid-after"):
        raise SettlementRejected(REASON_VALID_AFTER, "the authorization is not valid yet")
    if now >= authorization.valid_before and not ctx.fault("x402-settle-accepts-expired"):
        raise SettlementRejected(REASON_VALID_BEFORE, "the authorization has expired")
    maximum = int(str(entry["max_amount_required"]))
    if payment.scheme == "exact":
        value_ok = authorization.value == maximum or ctx.fault("x402-exact-accepts-other-value")
    else:
        value_ok = authorization.value <= maximum or ctx.fault("x402-upto-accepts-over-max")
    if not value_ok:
        expected = "equal" if payment.scheme == "exact" else "be at most"
        raise SettlementRejected(
            REASON_VALUE, f"authorization.value must {expected} max_amount_required ({maximum})"
        )
    signer = eip712.recover_signer(domain, authorization, payload["signature"])
    verified = signer is not None and eip712.same_address(signer, authorization.from_address)
    if not verified and not ctx.fault("x402-settle-skips-signature-check"):
        raise SettlementRejected(
            REASON_SIGNATURE, "the signature does not recover to authorization.from"
        )
    return entry, authorization


def _payload_schema(profile: Profile) -> dict[str, Any] | None:
    """The profile's payment_payload schema, self-contained (authorization inlined)."""
    pinned = x402_payload_schemas(profile)
    if pinned is None:
        return None
    schema = dict(pinned["X402PaymentPayload"])
    schema["properties"] = {
        **schema["properties"],
        "authorization": pinned["X402Authorization"],
    }
    return schema


def check_payload_shape(ctx: RequestContext, payload: Any) -> None:
    """400 validation_error for a payload missing a field or breaking a format."""
    if ctx.fault("x402-malformed-payload-422"):
        return  # the bug: left to verification, which answers 422 invalid_payload
    if ctx.fault("x402-malformed-payload-500"):
        # The bug: the fields are read as if they were always there and well-formed.
        authorization = payload["authorization"]
        _ = int(authorization["value"]), int(authorization["valid_after"]), payload["signature"]
        return
    schema = _payload_schema(ctx.config.profile)
    if schema is None:
        return
    try:
        check_value(schema, payload, "payment_payload")
    except RequestInvalid as exc:
        raise validation_error(ctx, exc.details) from None


@operation("settleX402Payment")
def settle(ctx: RequestContext) -> Reply:
    payload = ctx.body["payment_payload"]
    check_payload_shape(ctx, payload)
    payment = _payment(ctx, str(ctx.body["payment_id"]))
    submitted = ctx.body["payment_requirements"]
    fingerprint = hashlib.sha256(
        _canonical_json({"payload": payload, "requirements": submitted}).encode()
    ).hexdigest()
    success = ctx.config.profile.success_status(ctx.operation_id)
    resettle = payment.settled_fingerprint != fingerprint and ctx.fault(
        "x402-settled-accepts-other-payload"
    )  # the bug: a settled payment is verified and settled again for any other payload
    if payment.status == "settled" and not resettle:  # x402_payments' own status
        if payment.settled_fingerprint == fingerprint and payment.settled_result is not None:
            result = json.loads(payment.settled_result)
            if ctx.fault("x402-settle-replay-new-tx-hash"):
                result["tx_hash"] = "0x" + secrets.token_hex(32)
            return Reply(success, result)
        raise ApiError(
            ctx.config.profile.x402.settled_conflict.status,
            ctx.config.profile.x402.settled_conflict.code
            or ctx.config.profile.error("status", "invalid_state").code
            or "invalid_state",
            "this payment is already settled with another payload",
        )
    try:
        _entry, authorization = verify_settlement(
            ctx, payment, _issued(ctx.conn, payment.payment_id), submitted, payload
        )
    except SettlementRejected as rejected:
        raise ApiError(
            ctx.config.profile.x402.settle_failure.status,
            ctx.config.profile.x402.settle_failure.code or rejected.reason,
            rejected.message,
        ) from None
    tx_hash = "0x" + secrets.token_hex(32)
    if ctx.fault("x402-tx-hash-without-prefix"):
        tx_hash = tx_hash.removeprefix("0x")
    result = {"success": True, "tx_hash": tx_hash, "payment_id": payment.payment_id}
    if ctx.fault("x402-settle-success-as-string"):
        result["success"] = "true"
    ctx.conn.execute(
        "UPDATE x402_payments SET status = 'settled', settled_fingerprint = ?,"
        " settled_result = ?, settled_raw = ? WHERE payment_id = ?",
        (fingerprint, json.dumps(result), str(authorization.value), payment.payment_id),
    )
    ctx.conn.execute(
        "UPDATE payments SET status = ?, received_currency = ?, received_chain = ?,"
        " received_raw = ? WHERE id = ? AND kind = ?",
        (
            states(ctx.config.profile).settled,
            payment.currency_id,
            payment.chain_id,
            str(authorization.value),
            payment.payment_id,
            payments.KIND_X402,
        ),
    )
    ledger.post_payment_income(
        ctx.conn,
        merchant_id=ctx.merchant_id,
        payment_id=payment.payment_id,
        merchant_order_no=None,
        currency_id=payment.currency_id,
        raw_amount=authorization.value,
        splits=payment.splits,
        now=ctx.now,
        business_type="x402_income",
        fault=ctx.fault,
    )
    ctx.emit(
        "settleX402Payment",
        {
            "payment_id": payment.payment_id,
            "scheme": payment.scheme,
            "network": payment.chain_id,
            "currency_id": payment.currency_id,
            "value_raw": str(authorization.value),
            "payer": authorization.from_address,
            "tx_hash": tx_hash,
        },
    )
    return Reply(success, result)


# ----------------------------------------------------------------------------- usage
@operation("reportX402Usage")
def report_usage(ctx: RequestContext) -> Reply:
    payment = _payment(ctx, ctx.path["payment_id"])
    is_upto = payment.scheme == "upto" or ctx.fault("x402-usage-on-exact-accepted")
    settled = payment.status == "settled" or ctx.fault("x402-usage-on-unsettled-accepted")
    if not settled or not is_upto:
        raise invalid_state(ctx, "usage can only be reported for a settled upto payment")
    currency = ctx.config.profile.currencies[payment.currency_id]
    actual_raw = to_raw(
        ctx, str(ctx.body["actual_amount"]), currency, "actual_amount", allow_zero=True
    )
    if ctx.fault("x402-usage-actual-raw-wrong-decimals"):
        # The bug: the usage amount scaled like USDC, with 6 decimals, whatever the currency.
        shift = currency.decimals - 6
        actual_raw = actual_raw // 10**shift if shift >= 0 else actual_raw * 10**-shift
    # What the payer authorised: the settled authorization's value.
    authorised = payment.settled_raw if payment.settled_raw is not None else payment.max_raw
    if ctx.fault("x402-usage-max-from-requirements"):
        authorised = payment.max_raw  # the bug: the requirement's maximum, not what was signed
    if actual_raw > authorised and not ctx.fault("x402-usage-over-max-accepted"):
        raise business_rule(
            ctx,
            "usage_exceeds_maximum",
            f"actual_amount is over the authorised maximum ({authorised} raw units)",
        )
    usage_id = str(ctx.body["usage_id"])
    ctx.conn.execute(
        "INSERT INTO x402_usage (payment_id, usage_id, actual_raw, evidence, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (
            payment.payment_id,
            usage_id,
            str(actual_raw),
            _canonical_json(ctx.body["evidence"]),
            iso(ctx.now),
        ),
    )
    body = {
        "payment_id": payment.payment_id,
        "scheme": payment.scheme,
        "max_raw": str(authorised),
        "actual_raw": str(actual_raw),
        "usage_id": usage_id,
    }
    if ctx.fault("x402-usage-response-without-usage-id"):
        del body["usage_id"]
    return Reply(ctx.config.profile.success_status(ctx.operation_id), body)
