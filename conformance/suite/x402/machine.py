"""The x402 state machine: requirements -> settle attempts -> usage, against a model.

Rules issue requirements (any deployment of any profile currency, any scheme or none, an
amount drawn within the currency's decimals, with or without a resource), try to settle them
(a valid payload, the identical one again, another one, each kind of tampering, each kind of
malformed payload) and report usage (within and over the authorised value, on every kind of
payment). ``Issued`` records which payment is settled with which payload, its result and
the value the payer authorised; every answer is compared with what the model says the profile
requires. A failure is shrunk to the shortest sequence of steps that shows it.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, precondition, rule

from conformance.judge.x402_history import IssuedNonces
from conformance.suite.stateful import ConformanceMachine
from conformance.suite.x402 import flows
from conformance.suite.x402.api import RESOURCE, Requested, X402Api
from conformance.suite.x402.model import EXACT, Issued, X402Profile, decimal_text
from conformance.suite.x402.payloads import TAMPERINGS, malformed_cases

NONCES = "x402 nonces"  # MachineContext.extra: every nonce seen in the test, across examples
LARGEST_UNITS = 10**3  # amounts up to this many whole units
# Payments one sequence works on: few enough that the later rules (settle, replay, usage)
# reach every state of each.
PAYMENTS_PER_SEQUENCE = 3


def raw_amounts(decimals: int) -> st.SearchStrategy[int]:
    """Raw amounts of at least 2 units (so that one below the maximum still pays something)."""
    return st.integers(min_value=2, max_value=LARGEST_UNITS * 10**decimals)


class X402Machine(ConformanceMachine):
    payments = Bundle("x402_payments")

    def __init__(self) -> None:
        super().__init__()
        self.x402 = X402Profile(self.ctx.profile, self.ctx.contract)
        self.api = X402Api(self.ctx.factories, self.x402)
        self.nonces: IssuedNonces = self.ctx.extra.setdefault(NONCES, IssuedNonces())
        self.issued = 0

    @precondition(lambda self: self.issued < PAYMENTS_PER_SEQUENCE)
    @rule(target=payments, data=st.data())
    def issue(self, data: st.DataObject) -> Issued:
        deployment = data.draw(st.sampled_from(self.x402.deployments), label="deployment")
        scheme = data.draw(st.sampled_from([*self.x402.schemes, None]), label="scheme")
        amount = decimal_text(data.draw(raw_amounts(deployment.decimals)), deployment.decimals)
        resource = data.draw(st.sampled_from([None, f"{RESOURCE}{self.ctx.factories.unique('m')}"]))
        self.step(
            f"issue {scheme or 'default-scheme'} requirements for {amount} {deployment.label}"
            + (" (no resource)" if resource is None else "")
        )
        requested = Requested(deployment, scheme, amount, resource)
        self.issued += 1
        return flows.issue(self.verdicts, self.api, requested, self.nonces, fatal=True)

    @rule(issued=payments, data=st.data())
    def settle(self, issued: Issued, data: st.DataObject) -> None:
        if issued.settled and data.draw(st.booleans(), label="identical"):
            self.step(f"settle {issued.label} again with the identical payload")
            flows.settle_again(self.verdicts, self.api, issued, fatal=True)
            return
        value = None
        if issued.scheme != EXACT:
            value = data.draw(st.integers(1, issued.max_raw), label="authorised value")
        what = "another" if issued.settled else "a valid"
        self.step(
            f"settle {issued.label} with {what} payload"
            + ("" if value is None else f" authorising {value} raw units")
        )
        flows.settle_valid(self.verdicts, self.api, issued, value, fatal=True)

    @rule(issued=payments, data=st.data())
    def tamper(self, issued: Issued, data: st.DataObject) -> None:
        kinds = [t for t in TAMPERINGS if t.applies(issued, self.x402.schemes)]
        tampering = data.draw(st.sampled_from(kinds), label="tampering")
        self.step(f"settle {issued.label}: {tampering.name}")
        flows.settle_tampered(self.verdicts, self.api, issued, tampering, fatal=True)

    @rule(issued=payments, data=st.data())
    def malformed(self, issued: Issued, data: st.DataObject) -> None:
        shape = self.x402.payload_shape
        if shape is None:
            return
        payload = self.api.factories.signed_payload(issued.entry)
        cases = [c for c in malformed_cases(shape) if c.applies(shape, payload)]
        case = data.draw(st.sampled_from(cases), label="malformed")
        self.step(f"settle {issued.label}: a payload {case.name}")
        flows.settle_malformed(self.verdicts, self.api, issued, case, payload, fatal=True)

    @rule(issued=payments, data=st.data())
    def report_usage(self, issued: Issued, data: st.DataObject) -> None:
        authorised = issued.authorised if issued.settled else None
        if authorised is not None and issued.scheme == self.x402.usage_scheme:
            within = st.integers(1, max(1, authorised))
            over = st.integers(authorised + 1, issued.max_raw + authorised + 1)
            actual = data.draw(st.one_of(within, over), label="actual raw")
        else:
            actual = data.draw(st.integers(1, issued.max_raw), label="actual raw")
        amount = decimal_text(actual, issued.deployment.decimals)
        self.step(f"report usage of {amount} on {issued.label}")
        flows.usage(self.verdicts, self.api, issued, actual, fatal=True)

    @rule(issued=payments, usage=st.booleans())
    def unknown_payment(self, issued: Issued, usage: bool) -> None:
        if usage:
            self.step("report usage of an unknown payment")
            flows.usage_unknown(self.verdicts, self.api, issued.deployment.decimals, fatal=True)
        else:
            self.step(f"settle a valid payload of {issued.label} under an unknown payment_id")
            flows.settle_unknown(self.verdicts, self.api, issued, fatal=True)
