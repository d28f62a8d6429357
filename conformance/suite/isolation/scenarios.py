"""Deterministic isolation scenarios: webhook scopes, statements and the profile's credentials.

- Webhooks (TEN-005): the second merchant lists neither the first one's endpoints nor its
  deliveries, gets an unknown id's answer for rotate-secret and resend on them, and may PUT an
  endpoint under an id the first merchant uses: that makes its own endpoint, and the first
  merchant's stays as it wrote it.
- Statements and credentials (TEN-007, FIX-001, FIX-002): each credential of the profile is
  accepted and its statement carries the merchant id the profile gives it; after the first
  merchant settles a payment, the second merchant's statement names none of the first one's
  payments (split income excepted: that is the reader's own).
"""

from __future__ import annotations

from typing import Any

from conformance.judge.outcomes import summary
from conformance.suite.factories import Factories
from conformance.suite.isolation import requests, views
from conformance.suite.stateful import MachineContext, body_of, compact
from conformance.suite.tool_errors import PrerequisiteError

WEBHOOK_IDS = ("TEN-005",)
STATEMENT_IDS = ("TEN-007", "FIX-001", "FIX-002")
NO_OWNER_LINE = (
    "the first merchant's statement showed no line of the payment it had just settled, so "
    "there was nothing of it to look for in the second merchant's statement"
)


def _endpoint_view(endpoint: dict[str, Any]) -> dict[str, Any]:
    return {k: endpoint.get(k) for k in ("url", "event_types", "active", "created_at")}


def webhook_scopes(ctx: MachineContext) -> None:
    owner, other, verdicts = ctx.factories, ctx.other_factories, ctx.verdicts
    step = ctx.transcript.step
    not_found = ctx.profile.error("status", "not_found")

    def check(ok: bool, message: str) -> bool:
        return verdicts.check(WEBHOOK_IDS, ok, message, fatal=False)

    step(f"as {owner.merchant_id}: the run's webhook endpoint and one of its deliveries")
    endpoint_id = owner.webhook_endpoint()
    delivery_id = owner.delivery_id()
    endpoints_before, deliveries_before = views.endpoints(owner), views.deliveries(owner)
    for read in (endpoints_before, deliveries_before):
        if not read.ok:
            raise PrerequisiteError(f"could not read the first merchant's webhooks: {read.problem}")
    before = [_endpoint_view(e) for e in endpoints_before.find(endpoint_id)]

    step(f"as {other.merchant_id}: list webhook endpoints and deliveries")
    theirs = views.endpoints(other)
    if check(theirs.ok, f"listWebhookEndpoints: {theirs.problem}"):
        check(
            not theirs.find(endpoint_id),
            f"listWebhookEndpoints as {other.merchant_id} shows endpoint {endpoint_id} of "
            f"{owner.merchant_id}",
        )
    their_deliveries = views.deliveries(other)
    if check(their_deliveries.ok, f"listWebhookDeliveries: {their_deliveries.problem}"):
        owned = {views.delivery_key(d) for d in deliveries_before.items}
        foreign = [d for d in their_deliveries.items if views.delivery_key(d) in owned]
        check(
            not foreign,
            f"listWebhookDeliveries as {other.merchant_id} shows deliveries of "
            f"{owner.merchant_id}: {compact(foreign[:3])}",
        )

    for operation_id, ident in (
        ("rotateWebhookEndpointSecret", endpoint_id),
        ("resendWebhookDelivery", delivery_id),
    ):
        step(f"as {other.merchant_id}: {operation_id} on {ident} of the first merchant")
        response = other.send(requests.spec(other, operation_id, path_params={"id": ident}))
        verdicts.status(
            WEBHOOK_IDS,
            response,
            not_found,
            f"{operation_id} of another merchant's {ident}",
            fatal=False,
        )

    step(f"as {owner.merchant_id}: re-read endpoint {endpoint_id}")
    after = views.endpoints(owner)
    if check(after.ok, f"re-read: {after.problem}"):
        now = [_endpoint_view(e) for e in after.find(endpoint_id)]
        check(
            now == before,
            f"after another merchant's rotate-secret, endpoint {endpoint_id} reads "
            f"{compact(now)}; before: {compact(before)}",
        )
    _endpoint_ids_per_merchant(ctx)


def _endpoint_ids_per_merchant(ctx: MachineContext) -> None:
    """The second merchant PUTs, and rotates, an endpoint under an id the first one uses."""
    owner, other, verdicts = ctx.factories, ctx.other_factories, ctx.verdicts
    step = ctx.transcript.step
    ident = owner.unique("we_isolation_")
    types = owner.rare_event_types[:1]  # few deliveries for the run
    urls = {owner.merchant_id: owner.webhook_url, other.merchant_id: owner.webhook_url + "/other"}

    step(f"as {owner.merchant_id}: PUT endpoint {ident}")
    response = owner.send(requests.put_endpoint(owner, ident, urls[owner.merchant_id], types))
    if response.status_code != ctx.profile.success_status("putWebhookEndpoint"):
        raise PrerequisiteError(f"could not create a webhook endpoint: {summary(response)}")

    for operation_id, spec in (
        ("putWebhookEndpoint", requests.put_endpoint(other, ident, urls[other.merchant_id], types)),
        (
            "rotateWebhookEndpointSecret",
            requests.spec(other, "rotateWebhookEndpointSecret", path_params={"id": ident}),
        ),
    ):
        step(f"as {other.merchant_id}: {operation_id} {ident} (an id the first merchant uses)")
        response = other.send(spec)
        expected = ctx.profile.success_status(operation_id)
        verdicts.status(
            WEBHOOK_IDS,
            response,
            expected,
            f"{operation_id} of an endpoint id another merchant also uses",
            fatal=False,
        )

    for reader in (owner, other):
        step(f"as {reader.merchant_id}: list webhook endpoints")
        listed = views.endpoints(reader)
        if not verdicts.check(
            WEBHOOK_IDS, listed.ok, f"listWebhookEndpoints: {listed.problem}", fatal=False
        ):
            continue
        found = [e.get("url") for e in listed.find(ident)]
        verdicts.check(
            WEBHOOK_IDS,
            found == [urls[reader.merchant_id]],
            f"as {reader.merchant_id}, endpoint {ident} (used by both merchants) lists with urls "
            f"{compact(found)}; expected its own, {urls[reader.merchant_id]!r}, once",
            fatal=False,
        )


def _statement_lines(ctx: MachineContext, factories: Factories) -> views.Read:
    ctx.transcript.step(f"as {factories.merchant_id}: read the statement (every page)")
    return views.statement(factories)


def statements_and_credentials(ctx: MachineContext) -> None:
    owner, other, verdicts = ctx.factories, ctx.other_factories, ctx.verdicts
    for factories in (owner, other):
        credential = factories.client.credential
        ctx.transcript.step(f"as {credential}: read a statement")
        page = views.read(factories, requests.statement(factories), "lines")
        verdicts.check(
            ("FIX-001",), page.ok, f"a request signed as {credential}: {page.problem}", fatal=False
        )
        if page.ok:
            merchant_id = page.body.get("merchant_id")
            verdicts.check(
                ("FIX-002",),
                merchant_id == credential.merchant_id,
                f"the statement read as {credential} has merchant_id {merchant_id!r}; the "
                f"profile gives that credential {credential.merchant_id!r}",
                fatal=False,
            )

    schemes = ctx.profile.x402.schemes or ("exact",)
    ctx.transcript.step(f"as {owner.merchant_id}: settle an x402 {schemes[0]} payment")
    created = owner.send(requests.x402_requirements(owner, str(schemes[0])))
    issued = body_of(created)
    if created.status_code != ctx.profile.success_status("createX402Requirements"):
        raise PrerequisiteError(f"could not create x402 requirements: {summary(created)}")
    settled = owner.send(requests.settle(owner, issued))
    if settled.status_code != ctx.profile.success_status("settleX402Payment"):
        raise PrerequisiteError(f"could not settle an x402 payment: {summary(settled)}")

    mine = _statement_lines(ctx, owner)
    if not mine.ok:
        raise PrerequisiteError(f"could not read the first merchant's statement: {mine.problem}")
    owned = {
        str(line["payment_id"])
        for line in mine.items
        if isinstance(line.get("payment_id"), str)
        and line.get("is_split_recipient_income") is not True
    }
    if issued.get("payment_id") not in owned:
        return  # TEN-007 stays "not exercised" with NO_OWNER_LINE
    theirs = _statement_lines(ctx, other)
    if verdicts.check(("TEN-007",), theirs.ok, f"getStatement: {theirs.problem}", fatal=False):
        foreign = views.foreign_statement_lines(theirs.items, owned)
        verdicts.check(
            ("TEN-007",),
            not foreign,
            f"the statement of {other.merchant_id} shows ledger entries of payments of "
            f"{owner.merchant_id}: {', '.join(foreign[:5])}",
            fatal=False,
        )
