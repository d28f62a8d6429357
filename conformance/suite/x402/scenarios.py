"""Deterministic x402 scenarios: every rule once, in the order a reader checks it.

- ``requirements``: every deployment of every profile currency, in every profile scheme, with
  an amount that uses all the currency's decimals; a request without scheme and resource; the
  same request twice (a fresh nonce each time); the business-rule refusals (unknown currency,
  a chain the currency is not on, too many decimals).
- ``settlement``: on one payment per scheme, every tampering and every malformed payload is
  refused, then a valid payload settles it (so the refusals changed nothing); the identical
  payload again gives the same result; another payload is 409 and changes nothing; a payload
  for an unknown payment is 404; requirements of another payment are refused.
- ``usage``: on every deployment, an upto payment settled for less than its maximum: usage up to
  the authorised value is accepted in raw units, above it (still within the maximum) refused;
  usage of a settled exact, of an unsettled upto and of an unknown payment refused.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.judge.x402_history import IssuedNonces
from conformance.suite.stateful import MachineContext, Verdicts
from conformance.suite.wire.judged_call import JudgedCall
from conformance.suite.x402 import flows
from conformance.suite.x402.api import RESOURCE, Requested, X402Api
from conformance.suite.x402.model import EXACT, Deployment, Issued, X402Profile, decimal_text
from conformance.suite.x402.payloads import (
    QUICK_MALFORMED,
    TAMPERINGS,
    Malformed,
    malformed_cases,
)


def full_decimals(deployment: Deployment, units: int = 1) -> str:
    """An amount that uses every decimal of the currency: ``1.000007`` for 6 decimals."""
    decimals = deployment.decimals
    return decimal_text(units * 10**decimals + 7, decimals) if decimals else str(units + 7)


class Scenarios:
    def __init__(self, ctx: MachineContext) -> None:
        self.ctx = ctx
        self.rules = X402Profile(ctx.profile, ctx.contract)
        self.api = X402Api(ctx.factories, self.rules)
        self.nonces = IssuedNonces()
        self.fatal = False

    @property
    def verdicts(self) -> Verdicts:
        return self.ctx.verdicts

    def step(self, title: str) -> None:
        self.ctx.transcript.step(title)

    def issue(self, deployment: Deployment, scheme: str | None, amount: str) -> Issued:
        resource = f"{RESOURCE}{self.ctx.factories.unique('r')}"
        self.step(
            f"issue {scheme or 'default-scheme'} requirements for {amount} {deployment.label}"
        )
        requested = Requested(deployment, scheme, amount, resource)
        return flows.issue(self.verdicts, self.api, requested, self.nonces, fatal=self.fatal)

    def reissue(self, issued: Issued) -> Issued:
        """A fresh payment like ``issued``, after the server settled ``issued`` for a payload
        it had to refuse (the later cases need a payment that is still payable)."""
        amount = decimal_text(issued.max_raw, issued.deployment.decimals)
        return self.issue(issued.deployment, issued.scheme, amount)

    # ------------------------------------------------------------------------ requirements
    def requirements(self) -> None:
        rules = self.rules
        for deployment in rules.deployments:
            for scheme in rules.schemes:
                self.issue(deployment, scheme, full_decimals(deployment))
        first = rules.deployments[0]
        self.step(f"issue requirements for {first.label} without scheme or resource")
        requested = Requested(first, None, full_decimals(first), None)
        flows.issue(self.verdicts, self.api, requested, self.nonces, fatal=self.fatal)
        self.step("issue the same requirements twice: two nonces")
        same = Requested(first, rules.schemes[0], full_decimals(first), RESOURCE + "same")
        for _ in range(2):
            flows.issue(self.verdicts, self.api, same, self.nonces, fatal=self.fatal)
        self.refused_requirements(first)

    def refused_requirements(self, first: Deployment) -> None:
        currency_id = first.currency.currency_id
        base = Requested(first, self.rules.schemes[0], full_decimals(first), None).body()
        # a currency made up for the case: the family knows no one has it; the judge, reading a
        # request alone, cannot (a server may know currencies the profile does not list)
        unknown = "an unknown currency"
        self.step(f"requirements for {unknown}")
        change = {"currency_id": self.ctx.factories.unique("cur_")}
        outcome = self.api.request_requirements({**base, **change})
        self.verdicts.status(
            ["X402-011"], outcome.response, self.rules.business_rule, unknown, fatal=self.fatal
        )
        cases: list[tuple[str, dict[str, str]]] = [
            (
                f"more decimals than {currency_id} has",
                {"amount": "1." + "0" * first.decimals + "1"},
            ),
        ]
        for currency, chain_id in self.rules.undeployed()[:1]:
            cases.append(
                (
                    f"{currency.currency_id} on {chain_id}, where it is not deployed",
                    {"currency_id": currency.currency_id, "chain_id": chain_id},
                )
            )
        for what, change in cases:
            self.step(f"requirements for {what}")
            outcome = self.api.request_requirements({**base, **change})
            call = JudgedCall(outcome.response, "createX402Requirements")
            self.ctx.refused(["X402-011"], call, what, fatal=self.fatal)

    # ------------------------------------------------------------------------ settlement
    def settlement(self) -> None:
        first = self.rules.deployments[0]
        for scheme in self.rules.schemes:
            issued = self.refusals(self.issue(first, scheme, full_decimals(first, 3)))
            value = None if scheme == EXACT else issued.max_raw - 1
            self.step(f"settle {issued.label} with a valid payload")
            flows.settle_valid(self.verdicts, self.api, issued, value, fatal=self.fatal)
            if not issued.settled:
                continue
            self.step("settle the identical payload again")
            flows.settle_again(self.verdicts, self.api, issued, fatal=self.fatal)
            self.step("settle another valid payload for the settled payment")
            flows.settle_other(self.verdicts, self.api, issued, None, fatal=self.fatal)
            self.step("settle a malformed payload for the settled payment")
            case = next(iter(self.malformed()))
            payload = self.api.factories.signed_payload(issued.entry)
            flows.settle_malformed(self.verdicts, self.api, issued, case, payload, fatal=self.fatal)
        self.other_payments(first)

    def malformed(self) -> Iterator[Malformed]:
        shape = self.rules.payload_shape
        if shape is None:
            return
        for case in malformed_cases(shape):
            if not self.ctx.quick or case.name in QUICK_MALFORMED:
                yield case

    def refusals(self, issued: Issued) -> Issued:
        """Every tampering and malformed payload on ``issued``; the payment still payable."""
        for tampering in TAMPERINGS:
            if tampering.applies(issued, self.rules.schemes):
                self.step(f"settle {issued.label}: {tampering.name}")
                if flows.settle_tampered(
                    self.verdicts, self.api, issued, tampering, fatal=self.fatal
                ):
                    issued = self.reissue(issued)
        shape = self.rules.payload_shape
        if shape is None:
            return issued
        payload = self.api.factories.signed_payload(issued.entry)
        for case in self.malformed():
            if case.applies(shape, payload):
                self.step(f"settle {issued.label}: a payload {case.name}")
                if flows.settle_malformed(
                    self.verdicts, self.api, issued, case, payload, fatal=self.fatal
                ):
                    issued = self.reissue(issued)
                    payload = self.api.factories.signed_payload(issued.entry)
        return issued

    def other_payments(self, first: Deployment) -> None:
        scheme = self.rules.schemes[0]
        one = self.issue(first, scheme, full_decimals(first))
        two = self.issue(first, scheme, full_decimals(first))
        self.step("settle one payment with the requirements issued for another")
        flows.settle_breaking(
            self.verdicts,
            self.api,
            one,
            self.api.pay(two) | {"payment_id": one.payment_id},
            "X402-014",
            "requirements issued for another payment",
            fatal=self.fatal,
        )
        self.step("settle a valid payload for an unknown payment")
        flows.settle_unknown(self.verdicts, self.api, one, fatal=self.fatal)

    # ------------------------------------------------------------------------ usage
    def usage(self) -> None:
        rules = self.rules
        upto = rules.usage_scheme
        if upto is None:
            return
        for deployment in rules.deployments:
            issued = self.issue(deployment, upto, full_decimals(deployment, 2))
            authorised = issued.max_raw - 3  # the payer signs for less than the maximum
            self.step(f"settle {issued.label} for {authorised} raw units")
            flows.settle_valid(self.verdicts, self.api, issued, authorised, fatal=self.fatal)
            if not issued.settled:
                continue
            for actual, what in (
                (authorised + 1, "just over the authorised value, within the maximum"),
                (authorised, "exactly the authorised value"),
            ):
                self.step(f"report usage of {what}")
                flows.usage(self.verdicts, self.api, issued, actual, fatal=self.fatal)
        first = rules.deployments[0]
        for scheme in rules.schemes:
            if scheme != upto:
                issued = self.issue(first, scheme, full_decimals(first))
                self.step(f"settle {issued.label}")
                flows.settle_valid(self.verdicts, self.api, issued, None, fatal=self.fatal)
                self.step(f"report usage of the settled {scheme} payment")
                flows.usage(self.verdicts, self.api, issued, 1, fatal=self.fatal)
        issued = self.issue(first, upto, full_decimals(first))
        self.step("report usage of an upto payment not settled yet")
        flows.usage(self.verdicts, self.api, issued, 1, fatal=self.fatal)
        self.step("report usage of an unknown payment")
        flows.usage_unknown(self.verdicts, self.api, first.decimals, fatal=self.fatal)
