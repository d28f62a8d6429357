"""Payout schedules and subscriptions: an accepted answer against its own request (profile 5),
for the schedules family and the validator alike.

A schedule's answer:

- carries the fields of its create or replace (the create under OPS-003, a replace under
  PAYOUT-010, which also names the path's schedule);
- ``currency_chain_id`` is ``currency_id:target_chain_id`` (PAYOUT-001) and ``min_send_raw`` is
  ``min_send_amount`` in the currency's raw units (PAYOUT-002): of the request for a create or a
  replace, of the answer's own fields for a pause or a retire;
- ``next_run_at`` is the requested ``first_run_at`` (PAYOUT-004, after a replace PAYOUT-010),
  or, without one, ``created_at`` + ``interval_secs`` (PAYOUT-006);
- ``enabled`` exactly when active (PAYOUT-011); ``retired_at`` null until retired, a date-time
  from then on (PAYOUT-012).

A subscription's answer: ``next_bill_at`` is the time of the create + ``interval_secs``
(SUB-004), ``currency_chain_id`` is ``currency_id:chain_id`` (SUB-005).

What needs earlier answers (``updated_at`` moving on, the fields kept by a pause, ``retired_at``
being the time of the retire) is the schedules family's, which keeps a model of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from conformance.core.profile import Currency, Profile
from conformance.judge.findings import ANSWER, Finding, seconds, verdict
from conformance.judge.payment_rules import decimal_value, scaled_raw
from conformance.judge.times import RequestClock
from conformance.judge.values import json_int

if TYPE_CHECKING:
    from conformance.judge.answers import Call

CREATE = "createPayoutSchedule"
REPLACE = "replacePayoutSchedule"
RETIRE = "retirePayoutSchedule"
CREATE_SUBSCRIPTION = "createSubscription"
SCHEDULE_OPERATIONS = frozenset({CREATE, REPLACE, "pausePayoutSchedule", RETIRE})
SUBSCRIPTION_OPERATIONS = frozenset({CREATE_SUBSCRIPTION, "cancelSubscription"})
SCHEDULE_FIELDS = ("currency_id", "target_chain_id", "withdraw_address_id", "interval_secs", "mode")
CREATED_SECS = 5
"""Allowed between ``next_run_at`` and ``created_at`` + ``interval_secs``: a server may read
its clock twice while it handles the create."""
SAME_SECOND = 1
"""Allowed between ``next_run_at`` and the requested ``first_run_at``: a server may keep whole
seconds of a ``first_run_at`` with a fraction."""


class ScheduleRules:
    """The profile's choices these rules read: currencies, the active and retired states, the
    window around a request's time."""

    def __init__(self, profile: Profile) -> None:
        self._currencies: dict[str, Currency] = profile.currencies
        self._active = profile.lifecycle("payout_schedules").initial_state
        self._retired = frozenset(
            t.target for t in profile.transitions("payout_schedules") if t.operation == RETIRE
        )
        self._clock = RequestClock(profile)

    # -- payout schedules ------------------------------------------------------------------
    def payout(self, call: Call) -> Iterator[Finding]:
        """The findings of an accepted payout schedule operation."""
        oid, answer = call.operation_id, call.answer
        yield from self._state(answer)
        # a create or a replace sets the fields; a pause or a retire answers with them
        given: Callable[[str], Any] = call.field if oid in (CREATE, REPLACE) else answer.get
        currency_id, amount = given("currency_id"), given("min_send_amount")
        currency = self._currencies.get(currency_id) if isinstance(currency_id, str) else None
        want = scaled_raw(amount, currency)
        too_precise = currency is not None and decimal_value(amount) is not None and want is None
        if oid in (CREATE, REPLACE) and too_precise:
            return  # a request to be refused, accepted: PAYOUT-003 (admission) names that
        yield from _currency_chain(answer, currency_id, given("target_chain_id"), "PAYOUT-001")
        if currency is not None and want is not None:
            yield from _min_send_raw(answer, currency, amount, want)
        if oid == CREATE:
            yield verdict(ANSWER, ("OPS-003",), _shown(field_problems(call.request, answer)))
            yield from self._next_run(call)
        elif oid == REPLACE:
            yield verdict(ANSWER, ("PAYOUT-010",), _shown(self._replace_problems(call)))

    def _state(self, answer: dict[str, Any]) -> Iterator[Finding]:
        status = answer.get("status")
        if not isinstance(status, str):
            return  # the schema check's
        if "enabled" in answer:
            enabled = answer["enabled"]
            problem = (
                None
                if enabled is (status == self._active)
                else f"status {status!r} with enabled {enabled!r}"
            )
            yield verdict(ANSWER, ("PAYOUT-011",), problem)
        if not self._retired:
            return
        retired_at = answer.get("retired_at")
        if status in self._retired:
            ok = seconds(retired_at) is not None
        else:
            ok = "retired_at" in answer and retired_at is None
        shown = repr(retired_at) if "retired_at" in answer else "absent"
        problem = None if ok else f"retired_at {shown} with status {status!r}"
        yield verdict(ANSWER, ("PAYOUT-012",), problem)

    def _next_run(self, call: Call) -> Iterator[Finding]:
        """A create's ``next_run_at``: its ``first_run_at``, or creation + interval."""
        answer = call.answer
        next_run = answer.get("next_run_at")
        first = call.field("first_run_at")
        if first is not None:
            if seconds(first) is not None:  # else a request to be refused
                yield verdict(ANSWER, ("PAYOUT-004",), _first_run_problem(first, next_run))
            return
        interval = json_int(call.field("interval_secs"))
        if interval is None:
            return
        created = seconds(answer.get("created_at"))
        if created is None:  # without created_at, the time the server handled the create
            yield from self._clock.derived(
                call,
                ANSWER,
                ("PAYOUT-006",),
                "next_run_at",
                next_run,
                interval,
            )
            return
        moment = seconds(next_run)
        problem = (
            None
            if moment is not None and abs(moment - created - interval) <= CREATED_SECS
            else f"next_run_at {next_run!r} is not created_at {answer.get('created_at')!r} "
            f"+ {interval} s (within {CREATED_SECS} s)"
        )
        yield verdict(ANSWER, ("PAYOUT-006",), problem)

    def _replace_problems(self, call: Call) -> list[str]:
        answer = call.answer
        problems = field_problems(call.request, answer)
        path_id = call.path_params.get("id")
        if path_id is not None and answer.get("id") != path_id:
            problems.insert(0, f"id {answer.get('id')!r}, the path's {path_id!r}")
        first = call.field("first_run_at")
        if seconds(first) is not None:
            # the replaced first_run_at is when the schedule runs next, as on a create
            problem = _first_run_problem(first, answer.get("next_run_at"))
            if problem is not None:
                problems.append(problem)
        return problems

    # -- subscriptions ---------------------------------------------------------------------
    def subscription(self, call: Call) -> Iterator[Finding]:
        """The findings of an accepted subscription operation."""
        answer = call.answer
        if call.operation_id != CREATE_SUBSCRIPTION:  # a cancel answers with the fields
            yield from _currency_chain(
                answer, answer.get("currency_id"), answer.get("chain_id"), "SUB-005"
            )
            return
        interval = json_int(call.field("interval_secs"))
        if interval is not None:
            yield from self._clock.derived(
                call,
                ANSWER,
                ("SUB-004",),
                "next_bill_at",
                answer.get("next_bill_at"),
                interval,
            )
        yield from _currency_chain(
            answer, call.field("currency_id"), call.field("chain_id"), "SUB-005"
        )


def field_problems(sent: object, found: Mapping[str, Any]) -> list[str]:
    """The fields of a schedule's create or replace (``sent``) that ``found`` does not carry."""
    if not isinstance(sent, Mapping):
        return []
    problems = []
    for name in SCHEDULE_FIELDS:
        if name not in sent:
            continue
        want, have = sent[name], found.get(name)
        same = have == want and not isinstance(have, bool)
        number = json_int(want)
        if number is not None:
            same = json_int(have) == number
        if not same:
            problems.append(f"{name} {have!r}, requested {want!r}")
    amount = decimal_value(sent.get("min_send_amount"))
    if amount is not None and decimal_value(found.get("min_send_amount")) != amount:
        problems.append(
            f"min_send_amount {found.get('min_send_amount')!r}, requested "
            f"{sent.get('min_send_amount')!r}"
        )
    return problems


def _first_run_problem(first: object, next_run: object) -> str | None:
    """None when ``next_run_at`` is the requested ``first_run_at`` (a date-time), else why not."""
    wanted, moment = seconds(first), seconds(next_run)
    if wanted is not None and moment is not None and abs(moment - wanted) < SAME_SECOND:
        return None
    return f"next_run_at {next_run!r}, requested first_run_at {first!r}"


def _currency_chain(
    answer: dict[str, Any], currency_id: object, chain_id: object, rid: str
) -> Iterator[Finding]:
    if not isinstance(currency_id, str) or not isinstance(chain_id, str):
        return
    want = f"{currency_id}:{chain_id}"
    got = answer.get("currency_chain_id")
    problem = None if got == want else f"currency_chain_id {got!r}, expected {want!r}"
    yield verdict(ANSWER, (rid,), problem)


def _shown(problems: list[str]) -> str | None:
    return "the schedule has " + "; ".join(problems) if problems else None


def _min_send_raw(
    answer: dict[str, Any], currency: Currency, amount: object, want: str
) -> Iterator[Finding]:
    """PAYOUT-002: ``min_send_raw`` is ``amount`` in the currency's raw units (``want``)."""
    got = answer.get("min_send_raw")
    problem = (
        None
        if got == want
        else f"min_send_raw {got!r} for {amount} {currency.code} ({currency.decimals} "
        f"decimals): expected {want}"
    )
    yield verdict(ANSWER, ("PAYOUT-002",), problem)
