"""Subscriptions over time: create with generated requests, then the profile's transitions
(cancel) from every state, allowed and refused, with a model of what the server must hold.

A create answers with the profile's initial state, an absolute ``authorize_url``,
``next_bill_at`` = creation + ``interval_secs`` and ``currency_chain_id`` (the last two judged
by ``judge.schedule_rules``, as the validator judges them); a cancel answers
with the subscription (no ``authorize_url``) in the transition's target state, or, where the
profile allows no cancel, with 409 ``invalid_state`` and a re-read (the cancel again) shows the
subscription still in that state. Unknown currencies and chains are refused with 422, intervals
outside the profile's range with the validation status.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, multiple, rule

from conformance.core.profile import ErrorSpec
from conformance.judge.lifecycle import StateMachine
from conformance.judge.outcomes import status_problems
from conformance.judge.schedule_rules import ScheduleRules
from conformance.suite.schedules.amounts import Amount, amounts
from conformance.suite.schedules.calls import Answer, Calls
from conformance.suite.schedules.payout_requests import Deployment, deployments, unknown_id
from conformance.suite.stateful import ConformanceMachine, MachineContext, compact

RESOURCE = "subscriptions"
# what, requirement ids, expected error (None: the judge's), fields changed
SubscriptionRefusal = tuple[str, tuple[str, ...], ErrorSpec | None, dict[str, Any]]
CREATE = "createSubscription"


@dataclass(frozen=True)
class SubscriptionRequest:
    deployment: Deployment
    amount: Amount
    interval_secs: int
    splits: tuple[tuple[str, int], ...] = ()

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "currency_id": self.deployment.currency_id,
            "chain_id": self.deployment.chain_id,
            "amount": self.amount.text,
            "interval_secs": self.interval_secs,
        }
        if self.splits:
            body["splits"] = [
                {"type": "percentage", "merchant_id": m, "bps": b} for m, b in self.splits
            ]
        return body

    def describe(self) -> str:
        return (
            f"{self.amount.text} {self.deployment.currency_id} on {self.deployment.chain_id} "
            f"every {self.interval_secs} s"
        )


@dataclass
class SubscriptionModel:
    id: str
    request: SubscriptionRequest
    status: str

    def __repr__(self) -> str:
        return f"subscription {self.id} ({self.status})"


class SubscriptionDriver:
    """Sends subscription operations for one test and checks every answer."""

    def __init__(self, ctx: MachineContext, *, fatal: bool) -> None:
        self.ctx = ctx
        self.fatal = fatal
        self.calls = Calls(ctx)
        profile = ctx.profile
        self.machine = StateMachine.of(profile, RESOURCE)
        self.deployments = deployments(profile)
        self.interval = profile.range(RESOURCE, "interval_secs")
        merchant = ctx.client.credential.merchant_id
        self.split_merchants = [m for m in profile.split_merchants if m != merchant]
        self.business_rule = profile.error("status", "business_rule")
        self.validation = profile.error("status", "validation")
        self.rules = ScheduleRules(profile)

    # -- requests -------------------------------------------------------------------------
    def requests(self, deployment: Deployment | None = None) -> st.SearchStrategy[Any]:
        """Valid creates (on ``deployment``, or any); made once per test."""
        cache: dict[Deployment | None, st.SearchStrategy[Any]]
        cache = self.ctx.extra.setdefault("schedules.subscriptions.requests", {})
        if deployment not in cache:
            cache[deployment] = self._build_requests(deployment)
        return cache[deployment]

    def _build_requests(self, deployment: Deployment | None) -> st.SearchStrategy[Any]:
        splits: st.SearchStrategy[tuple[tuple[str, int], ...]] = st.just(())
        if self.split_merchants:
            splits = splits | st.tuples(
                st.tuples(st.sampled_from(self.split_merchants), st.integers(1, 1000))
            )

        @st.composite
        def build(draw: st.DrawFn) -> SubscriptionRequest:
            chosen = deployment or draw(st.sampled_from(self.deployments))
            return SubscriptionRequest(
                chosen,
                draw(amounts(chosen.decimals)),
                draw(st.integers(self.interval.min, self.interval.max)),
                draw(splits),
            )

        return build()

    def refusals(self) -> list[SubscriptionRefusal]:
        """(what, requirement ids, expected error, fields changed) per refused create; the
        expected error None: a rule the judge reads from the request (``judge.admission``)."""
        found: list[SubscriptionRefusal]
        found = self.ctx.extra.setdefault("schedules.subscriptions.refusals", [])
        if not found:
            found += self._build_refusals()
        return found

    def _build_refusals(
        self,
    ) -> list[SubscriptionRefusal]:
        found: list[SubscriptionRefusal] = [
            (
                "an unknown currency_id",
                ("SUB-001",),
                self.business_rule,
                {"currency_id": unknown_id("currency")},
            ),
            ("an unknown chain_id", ("SUB-001",), None, {"chain_id": unknown_id("chain")}),
        ]
        for currency in self.ctx.profile.currencies.values():
            for chain in self.ctx.profile.chains:
                if chain not in currency.chains:
                    found.append(
                        (
                            f"{currency.currency_id} on {chain}, where it is not deployed",
                            ("SUB-001",),
                            None,
                            {"currency_id": currency.currency_id, "chain_id": chain},
                        )
                    )
        for interval in (self.interval.min - 1, self.interval.max + 1):
            found.append(
                (
                    f"interval_secs {interval}",
                    ("SUB-002",),
                    self.validation,
                    {"interval_secs": interval},
                )
            )
        return found

    # -- recording ------------------------------------------------------------------------
    def check(self, ids: tuple[str, ...] | list[str], ok: bool, message: str) -> bool:
        return self.ctx.verdicts.check(list(ids), ok, message, fatal=self.fatal)

    def expect(self, ids: tuple[str, ...], answer: Answer, spec: ErrorSpec, what: str) -> bool:
        problems = status_problems(answer.response, spec)
        return self.check(ids, not problems, f"{what}: " + "; ".join(problems))

    # -- operations -----------------------------------------------------------------------
    def create(self, request: SubscriptionRequest) -> SubscriptionModel | None:
        self.ctx.transcript.step(f"create a subscription: {request.describe()}")
        answer = self.calls.send(CREATE, body=request.body())
        expected = self.ctx.profile.success_status(CREATE)
        if not self.ctx.verdicts.status(
            ["OPS-002"], answer.response, expected, "create a subscription", fatal=self.fatal
        ):
            return None
        found = answer.body
        if not self.check(["OPS-002"], isinstance(found.get("id"), str), "no string id"):
            return None
        model = SubscriptionModel(str(found["id"]), request, self.machine.initial)
        self.check(
            ["SUB-STATE-001"],
            found.get("status") == self.machine.initial,
            f"a new subscription has status {compact(found.get('status'))}, "
            f"expected {self.machine.initial!r}",
        )
        url = found.get("authorize_url")
        parts = urlsplit(url) if isinstance(url, str) else None
        self.check(
            ["SUB-003"],
            parts is not None and bool(parts.scheme) and bool(parts.netloc),
            f"authorize_url {compact(url)} is not an absolute URL",
        )
        self.judge(answer)
        return model

    def refuse_create(
        self,
        request: SubscriptionRequest,
        what: str,
        ids: tuple[str, ...],
        spec: ErrorSpec | None,
        changes: dict[str, Any],
    ) -> None:
        self.ctx.transcript.step(f"create a subscription with {what}: refused")
        answer = self.calls.send(CREATE, body={**request.body(), **changes})
        what = f"a subscription with {what}"
        if spec is None:
            self.ctx.refused(ids, self.calls.judged(answer), what, fatal=self.fatal)
        else:
            self.expect(ids, answer, spec, what)

    def perform(self, model: SubscriptionModel, operation: str, *, reread: bool = False) -> None:
        source = model.status
        target = self.machine.target(operation, source)
        verb = "re-read: " if reread else ""
        self.ctx.transcript.step(f"{verb}{operation} of the {source} {model.id}")
        answer = self.calls.send(operation, path_id=model.id)
        if target is None:
            what = f"subscription {model.id}"
            self.ctx.verdicts.refusal(
                self.machine, source, self.calls.judged(answer), what, fatal=self.fatal
            )
            if not reread:  # the same operation again: refused again, nothing changed
                self.perform(model, operation, reread=True)
            return
        ids = self.machine.move_ids(operation, source) or ("OPS-002",)
        expected = self.ctx.profile.success_status(operation)
        if not self.ctx.verdicts.status(
            [*ids, "OPS-002"], answer.response, expected, operation, fatal=self.fatal
        ):
            return
        found = answer.body
        model.status = target
        self.check(
            ids,
            found.get("status") == target,
            f"{operation} of a {source} subscription: status {compact(found.get('status'))}, "
            f"expected {target!r}",
        )
        self.check(
            ["SHAPE-021"],
            "authorize_url" not in found,
            f"{operation} answered with authorize_url {compact(found.get('authorize_url'))}",
        )
        problems = self.subscription_problems(found, model)
        self.check(
            ["OPS-021"], not problems, "the answer is not the subscription: " + "; ".join(problems)
        )
        self.judge(answer)

    # -- checks ---------------------------------------------------------------------------
    def judge(self, answer: Answer) -> None:
        """The answer against its own request (``judge.schedule_rules``)."""
        call = self.calls.judged(answer)
        self.ctx.verdicts.findings(self.rules.subscription(call), fatal=self.fatal)

    def subscription_problems(self, found: dict[str, Any], model: SubscriptionModel) -> list[str]:
        request = model.request
        expected = {
            "id": model.id,
            "currency_id": request.deployment.currency_id,
            "chain_id": request.deployment.chain_id,
            "interval_secs": request.interval_secs,
        }
        problems = [
            f"{key} {compact(found.get(key))}, expected {compact(value)}"
            for key, value in expected.items()
            if found.get(key) != value or isinstance(found.get(key), bool)
        ]
        try:
            same = Decimal(str(found.get("amount"))) == Decimal(request.amount.text)
        except InvalidOperation:
            same = False
        if not same:
            shown = compact(found.get("amount"))
            problems.append(f"amount {shown}, expected {request.amount.text}")
        if found.get("status") not in self.machine.states:
            problems.append(f"status {compact(found.get('status'))} is not a subscription state")
        return problems


class SubscriptionMachine(ConformanceMachine):
    """Subscriptions created and canceled in generated orders."""

    subscriptions = Bundle("subscriptions")

    def __init__(self) -> None:
        super().__init__()
        self.driver = SubscriptionDriver(self.ctx, fatal=True)

    @rule(target=subscriptions, data=st.data())
    def create(self, data: st.DataObject) -> Any:
        model = self.driver.create(data.draw(self.driver.requests(), label="request"))
        return multiple() if model is None else model

    @rule(subscription=subscriptions, data=st.data())
    def operate(self, subscription: SubscriptionModel, data: st.DataObject) -> None:
        operation = data.draw(st.sampled_from(self.driver.machine.operations), label="operation")
        self.driver.perform(subscription, operation)

    @rule(data=st.data())
    def refuse_create(self, data: st.DataObject) -> None:
        what, ids, spec, changes = data.draw(
            st.sampled_from(self.driver.refusals()), label="refusal"
        )
        request = data.draw(self.driver.requests(), label="request")
        self.driver.refuse_create(request, what, ids, spec, changes)


def walk_and_refuse(ctx: MachineContext, data: st.DataObject) -> None:
    """Every operation in every reachable state; one create per deployment; every refusal."""
    driver = SubscriptionDriver(ctx, fatal=False)
    for deployment in driver.deployments:
        ctx.transcript.restart()
        driver.create(data.draw(driver.requests(deployment)))
    for state, path in driver.machine.paths().items():
        for operation in driver.machine.operations:
            ctx.transcript.restart()
            model = driver.create(data.draw(driver.requests()))
            if model is None:
                continue
            for step in path:
                driver.perform(model, step)
            if model.status == state:
                driver.perform(model, operation)
    for what, ids, spec, changes in driver.refusals():
        ctx.transcript.restart()
        driver.refuse_create(data.draw(driver.requests()), what, ids, spec, changes)
