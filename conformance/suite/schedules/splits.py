"""Split shares on payments, subscriptions and x402 requirements, and the split template.

Per target, one request per rule of the profile's splits section: a share naming an unknown
merchant, the calling merchant, a merchant twice, shares summing over ``max_total_bps`` (each
refused with the business-rule status, unless the profile allows it), and distinct known
merchants summing to less than and to exactly ``max_total_bps`` (accepted). A refused payment
is looked up by its order number afterwards: it must not exist. The template answers with its
shares and ``updated_at``, refuses a ``bps`` outside the contract's range with the validation
status, and an empty list clears it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance.core.formats import parse_date_time
from conformance.core.profile import ErrorSpec, Profile
from conformance.judge.echoes import shares_problems
from conformance.judge.outcomes import status_problems, summary
from conformance.suite.factories import Factories
from conformance.suite.schedules.calls import Calls
from conformance.suite.schedules.payout_requests import unknown_id
from conformance.suite.stateful import MachineContext, compact

Shares = list[tuple[str, int]]
TEMPLATE = "replaceSplitTemplate"
ACCEPTED_IDS = ("SPLIT-005", "FIX-006", "OPS-004")
# A merchant made up for the case: the family knows no one has it; the judge, reading a request
# alone, cannot (a server may know merchants the profile does not list).
UNKNOWN_MERCHANT = ("SPLIT-001",)


@dataclass(frozen=True)
class SplitCase:
    name: str
    requirement_ids: tuple[str, ...]
    accepted: bool
    shares: st.SearchStrategy[Shares]


@dataclass(frozen=True)
class SplitTarget:
    """An operation that takes split shares: how to build its body around them."""

    name: str
    operation_id: str
    body: Callable[[Shares], dict[str, Any]]
    order_no: Callable[[dict[str, Any]], str | None] = lambda body: None


def _bounds(contract: Mapping[str, Any], schema_name: str) -> tuple[int, int]:
    schema = ((contract.get("components") or {}).get("schemas") or {}).get(schema_name) or {}
    bps = (schema.get("properties") or {}).get("bps") or {}
    return int(bps.get("minimum", 1)), int(bps.get("maximum", 10000))


@st.composite
def _partition(draw: st.DrawFn, merchants: list[str], total: int, low: int, high: int) -> Shares:
    """``total`` bps over ``merchants``, each share within ``low..high``."""
    shares: Shares = []
    remaining = total
    for index, merchant in enumerate(merchants):
        left = len(merchants) - index - 1
        lo = max(low, remaining - high * left)
        hi = min(high, remaining - low * left)
        bps = hi if left == 0 else draw(st.integers(lo, hi))
        shares.append((merchant, bps))
        remaining -= bps
    return shares


class SplitRules:
    """The profile's split rules for one merchant, as cases."""

    def __init__(self, profile: Profile, contract: Mapping[str, Any], caller: str) -> None:
        rules = profile.splits
        self.caller = caller
        self.max_total = rules.max_total_bps
        self.allow_self = rules.allow_self
        self.allow_repeated = rules.allow_repeated_merchant
        self.known = [m for m in dict.fromkeys(profile.split_merchants) if m != self.caller]
        self.low, self.high = _bounds(contract, "SplitEntry")
        self.template_low, self.template_high = _bounds(contract, "SplitTemplateShare")
        self.not_reached: dict[str, str] = {}

    def cases(self) -> list[SplitCase]:
        low, high, most = self.low, self.high, self.max_total
        known = self.known
        single = st.integers(low, max(low, min(high, most)))
        found = [
            SplitCase(
                "a share naming an unknown merchant",
                UNKNOWN_MERCHANT,
                False,
                single.map(lambda b: [(unknown_id("merchant"), b)]),
            )
        ]
        if self.allow_self:
            self.not_reached["SPLIT-002"] = "the profile allows a merchant in its own splits"
        else:
            found.append(
                SplitCase(
                    "a share naming the calling merchant",
                    ("SPLIT-002",),
                    False,
                    single.map(lambda b: [(self.caller, b)]),
                )
            )
        if self.allow_repeated:
            self.not_reached["SPLIT-003"] = "the profile allows a merchant twice in splits"
        elif known and most >= 2 * low:
            found.append(
                SplitCase(
                    "a merchant named twice",
                    ("SPLIT-003",),
                    False,
                    st.tuples(
                        st.sampled_from(known), st.integers(2 * low, min(most, 2 * high))
                    ).flatmap(lambda pair: _partition([pair[0], pair[0]], pair[1], low, high)),
                )
            )
        else:
            self.not_reached["SPLIT-003"] = "the profile lists no merchant to split with"
        if known and len(known) * high > most:
            found.append(
                SplitCase(
                    f"shares summing to more than {most} bps",
                    ("SPLIT-004",),
                    False,
                    st.integers(most + 1, len(known) * high).flatmap(
                        lambda total: _partition(known, total, low, high)
                    ),
                )
            )
        else:
            self.not_reached["SPLIT-004"] = (
                f"the profile's split merchants cannot hold more than {most} bps "
                f"({len(known)} merchants of at most {high} bps)"
            )
        if known and len(known) * low <= most:
            found.append(
                SplitCase(
                    f"every split merchant once, summing to at most {most} bps",
                    ACCEPTED_IDS,
                    True,
                    st.integers(len(known) * low, min(most, len(known) * high)).flatmap(
                        lambda total: _partition(known, total, low, high)
                    ),
                )
            )
            exact = [k for k in range(1, len(known) + 1) if k * low <= most <= k * high]
            if exact:
                found.append(
                    SplitCase(
                        f"distinct merchants summing to exactly {most} bps",
                        ACCEPTED_IDS,
                        True,
                        st.sampled_from(exact).flatmap(
                            lambda k: _partition(known[:k], most, low, high)
                        ),
                    )
                )
        else:
            self.not_reached.update(
                {i: "the profile lists no merchant to split with" for i in ACCEPTED_IDS}
            )
        return found


def targets(factories: Factories) -> list[SplitTarget]:
    entry_type = "percentage"
    schema = ((factories.contract.get("components") or {}).get("schemas") or {}).get(
        "SplitEntry"
    ) or {}
    types = ((schema.get("properties") or {}).get("type") or {}).get("enum") or []
    if types:
        entry_type = str(types[0])

    def entries(shares: Shares) -> list[dict[str, Any]]:
        return [{"type": entry_type, "merchant_id": m, "bps": b} for m, b in shares]

    return [
        SplitTarget(
            "payment",
            "createPayment",
            lambda shares: factories.payment_body(splits=entries(shares)),
            lambda body: str(body["merchant_order_no"]),
        ),
        SplitTarget(
            "subscription",
            "createSubscription",
            lambda shares: {**factories.subscription_body(), "splits": entries(shares)},
        ),
        SplitTarget(
            "x402 requirements",
            "createX402Requirements",
            lambda shares: {**factories.x402_requirements_body(), "splits": entries(shares)},
        ),
        SplitTarget(
            "split template",
            TEMPLATE,
            lambda shares: {"shares": [{"merchant_id": m, "bps": b} for m, b in shares]},
        ),
    ]


class SplitChecks:
    """Sends split requests for one test and checks every answer."""

    def __init__(self, ctx: MachineContext) -> None:
        self.ctx = ctx
        self.calls = Calls(ctx)
        self.rules = SplitRules(ctx.profile, ctx.contract, ctx.client.credential.merchant_id)
        self.business_rule = ctx.profile.error("status", "business_rule")
        self.validation = ctx.profile.error("status", "validation")

    def check(self, ids: tuple[str, ...], ok: bool, message: str) -> bool:
        return self.ctx.verdicts.check(list(ids), ok, message, fatal=False)

    def expect(self, ids: tuple[str, ...], response: Any, spec: ErrorSpec, what: str) -> bool:
        problems = status_problems(response, spec)
        return self.check(ids, not problems, f"{what}: " + "; ".join(problems))

    def run(self, data: st.DataObject) -> None:
        """Every case on every target (the template last), then the template cleared."""
        self.template_bounds()
        cases = self.rules.cases()
        for target in targets(self.ctx.factories):
            for case in cases:
                self.ctx.transcript.restart()
                shares = data.draw(case.shares, label=f"{target.name}: {case.name}")
                self.send(target, case, shares)
        self.clear_template()  # right after the template's last accepted case

    def send(self, target: SplitTarget, case: SplitCase, shares: Shares) -> bool:
        body = target.body(shares)
        verb = "accepted" if case.accepted else "refused"
        self.ctx.transcript.step(f"{target.name} with {case.name}: {shares} ({verb})")
        answer = self.calls.send(target.operation_id, body=body)
        response = answer.response
        what = f"{target.name} with {case.name} {compact(shares)}"
        if not case.accepted:
            if case.requirement_ids == UNKNOWN_MERCHANT:
                ok = self.expect(case.requirement_ids, response, self.business_rule, what)
            else:
                call = self.calls.judged(answer)
                ok = self.ctx.refused(case.requirement_ids, call, what, fatal=False)
            order_no = target.order_no(body)
            if order_no is not None:
                self.ctx.transcript.step(f"re-read: payments with order number {order_no}")
                found = self.ctx.factories.payments_with_order_no(order_no)
                self.check(
                    case.requirement_ids,
                    not found,
                    f"the refused payment {order_no} exists: {compact(found)}",
                )
            return ok
        expected = self.ctx.profile.success_status(target.operation_id)
        ok = self.check(
            case.requirement_ids,
            response.status_code == expected,
            f"{what}: expected {expected}, got {summary(response)}",
        )
        if ok and target.operation_id == TEMPLATE:
            self.template_answer(answer.body, shares)
        return ok

    def template_answer(self, found: dict[str, Any], shares: Shares) -> None:
        sent = [{"merchant_id": merchant, "bps": bps} for merchant, bps in shares]
        problems = shares_problems(sent, found.get("shares")) or []
        self.check(("SPLIT-007",), not problems, "; ".join(problems))
        self.check(
            ("SPLIT-007",),
            parse_date_time(found.get("updated_at")) is not None,
            f"the template answer has updated_at {compact(found.get('updated_at'))}",
        )

    def template_bounds(self) -> None:
        """A template share's bps one beyond each end of the contract's range."""
        merchant = self.rules.known[0] if self.rules.known else unknown_id("merchant")
        for bps in (self.rules.template_low - 1, self.rules.template_high + 1):
            self.ctx.transcript.restart()
            self.ctx.transcript.step(f"split template with a share of {bps} bps (refused)")
            body = {"shares": [{"merchant_id": merchant, "bps": bps}]}
            answer = self.calls.send(TEMPLATE, body=body)
            self.expect(
                ("SPLIT-006", "STATUS-008"),
                answer.response,
                self.validation,
                f"a template share of {bps} bps",
            )

    def clear_template(self) -> None:
        self.ctx.transcript.step("split template with an empty list of shares")
        answer = self.calls.send(TEMPLATE, body={"shares": []})
        expected = self.ctx.profile.success_status(TEMPLATE)
        if not self.check(
            ("SPLIT-008",),
            answer.status_code == expected,
            f"an empty template: expected {expected}, got {summary(answer.response)}",
        ):
            return
        found = answer.body
        problems = shares_problems([], found.get("shares")) or []
        self.check(("SPLIT-008",), not problems, "; ".join(problems))
        self.check(
            ("SPLIT-007",),
            parse_date_time(found.get("updated_at")) is not None,
            f"the template answer has updated_at {compact(found.get('updated_at'))}",
        )
