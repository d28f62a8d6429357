"""Checks of a request against what the profile decides of it: refused or accepted (profile 3, 5).

The effective contract's request schemas (patterns, ranges, the profile's pinned limits) are
judged elsewhere (the validator's ``checks``, the suite's schema phase); this module judges what a
request shows that no schema can say, from the profile's rules and fixtures, and only where the
request alone decides it. The validator asks ``judge`` of every recorded exchange; a suite family
that built a request to break a rule asks ``refusal``, which also fails a refusal other than the
profile's (the family knows its request is valid but for that rule; a recording does not).

- business rules (profile 5), answered with the profile's ``business_rule`` status: split
  shares over ``max_total_bps``, a repeated merchant, the calling merchant itself (SPLIT-002 to
  SPLIT-004); an amount with more decimals than its currency (PAY-004, PAYOUT-003, X402-011), a
  chain the currency is not deployed on (PAY-002, SUB-001, PAYOUT-009, X402-011), an empty
  ``quotes`` map (PAY-003), another merchant's withdraw address (PAYOUT-008), a
  ``first_run_at`` in the past (PAYOUT-005), a webhook url of another scheme (WH-008) or an
  event type the profile does not list (WH-009). Accepted (2xx): a failure; refused with the
  profile's status: a pass; a server error: a failure; another refusal is not judged by
  ``judge`` (the server may have refused for a reason the recording cannot see).
- statements whose ``from`` is not before ``to`` (STMT-014): the profile's validation error.
- a query or path parameter that is no text (STATUS-011): escapes of bytes that are not UTF-8,
  and a "%" not followed by two hex digits unless the profile's ``malformed_percent_escape``
  lets the server read it literally (then the literal value is judged like any other; under
  "either" a refusal of it is not judged).
- refusals of requests the contract and profile allow, judged only when the refusal's own code
  says it was a validation refusal: an integer written ``60.0`` (STATUS-016 and the success
  status's requirement, as the boundary cases name such a refusal), and any other
  request the effective contract allows answered with the validation error (STATUS-001,
  STATUS-002: the success status), except where the profile leaves the server a reason the
  recording cannot check (a cursor, a query parameter the operation does not have).

Currencies, chains, merchants and withdraw addresses come from the profile's fixtures; an id the
fixtures do not list is not judged (the server may know more than the profile names).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from conformance.core.catalogue import load_catalogue
from conformance.core.formats import epoch_seconds, has_malformed_escape, unreadable
from conformance.core.hosts import is_loopback
from conformance.core.profile import Currency, ErrorSpec, Profile
from conformance.core.redaction import REDACTED
from conformance.core.results import Outcome
from conformance.judge import statements as statement
from conformance.judge.answers import Call
from conformance.judge.boundary_requirements import RequirementMap
from conformance.judge.findings import NOT_JSON, Finding
from conformance.judge.outcomes import media_type
from conformance.judge.payment_rules import decimal_value
from conformance.judge.times import LATENCY_SECS

SPLIT_OPERATIONS = {
    "createPayment": "splits",
    "createSubscription": "splits",
    "createX402Requirements": "splits",
    "replaceSplitTemplate": "shares",
}
# STATUS-016's operations: those whose request bodies have integer fields.
FLOAT_FORM_OPERATIONS = frozenset(
    {
        "createPayment",
        "createSubscription",
        "createPayoutSchedule",
        "replacePayoutSchedule",
        "replaceSplitTemplate",
        "createX402Requirements",
    }
)
CURSOR = "cursor"
MALFORMED_PARAMETER = "STATUS-011"  # profile 3: a malformed query or path parameter is refused
UNKNOWN_ID = "STATUS-013"
# A malformed parameter is refused with the validation error; a malformed path id of an
# operation that answers an unknown id with 404 may be refused as one (the ids the catalogue
# lists for the operation are its requirements).
MALFORMED_IDS = {"query": (MALFORMED_PARAMETER,), "path": (MALFORMED_PARAMETER, UNKNOWN_ID)}
CONTROL_ESCAPE = re.compile(r"%[01][0-9A-Fa-f]|%7[Ff]")  # a control character, percent-encoded
# A JSON number with a fraction or an exponent (after ":", "[" or ","; inside a string it is
# preceded by a quote or a letter): a cheap test before walking the document for one.
FLOAT_NUMBER = re.compile(rb"[:\[,]\s*-?[0-9]+(?:\.|[eE])")

CHECK = "admission"


class Broken(NamedTuple):
    """A rule a request breaks: its requirement ids, what the request shows, and the request
    member it read ("" for a parameter)."""

    ids: tuple[str, ...]
    what: str
    field: str = ""
    answer: ErrorSpec | None = None  # the profile's answer to it (None: the business rule's)


Rule = Callable[[Call], Iterator[Broken]]


def _places(text: str) -> int:
    return len(text.partition(".")[2])


def _integral_float(value: Any) -> bool:
    """Whether a JSON document holds an integer written in float form (``60.0``)."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_integral_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_integral_float(v) for v in value)
    return False


class AdmissionChecks:
    """Judges whether a request the profile refuses (or allows) was refused (or accepted)."""

    def __init__(self, profile: Profile) -> None:
        self._business = profile.error("status", "business_rule")
        self._validation = profile.error("status", "validation")
        self._creates = frozenset(profile.status.create_operations)
        self._boundary_ids = RequirementMap.load()
        self._empty_quotes = profile.payments.empty_quotes
        self._currencies: dict[str, Currency] = profile.currencies
        self._merchants = {c.api_key: c.merchant_id for c in profile.credentials}
        self._address_owner = {
            address: merchant
            for merchant, addresses in profile.withdraw_addresses_by_merchant.items()
            for address in addresses
        }
        splits = profile.splits
        self._max_bps = splits.max_total_bps
        self._allow_self = splits.allow_self
        self._allow_repeated = splits.allow_repeated_merchant
        hooks = profile.webhooks
        self._url_schemes = frozenset(hooks.url_schemes)
        self._loopback_http = hooks.loopback_http
        self._event_types = frozenset(hooks.event_types)
        auth = profile.auth
        self._past_margin = auth.clock_window_secs + LATENCY_SECS
        self._unix_timestamps = auth.timestamp_format == "unix-seconds"
        # A "%" not followed by two hex digits: refused ("refuse"), read as text ("literal"),
        # or either (then a refusal of it is not judged, nor its acceptance: the literal value
        # is judged like any other, by the other checks).
        self._escape_reading = profile.status.malformed_percent_escape
        self._rules: dict[str, list[Rule]] = {
            "createPayment": [self._splits, self._quotes],
            "createSubscription": [self._splits, self._subscription],
            "createX402Requirements": [self._splits, self._x402],
            "replaceSplitTemplate": [self._splits],
            "createPayoutSchedule": [self._schedule, self._first_run],
            "replacePayoutSchedule": [self._schedule],
            "putWebhookEndpoint": [self._webhook],
            "getStatement": [self._window],
        }

    def judge(
        self,
        call: Call,
        *,
        contract_problems: bool,
        query_names: frozenset[str],
    ) -> tuple[list[Finding], frozenset[str]]:
        """The findings of one exchange whose request the contract's schemas judged already
        (``contract_problems``: it broke them), and the request members of the rules it broke
        that the server accepted (an answer echoing them is that same fault). ``query_names``:
        the operation's parameters. A refusal other than the profile's is not judged: the
        server may have had a reason the recording does not show."""
        if contract_problems or call.status >= 500:
            return [], frozenset()
        found: list[Finding] = []
        broken = self._broken(call)
        for rule in broken:
            judged = self._verdict(call, rule, known_valid=False)
            found += [judged] if judged is not None else []
        if not broken:
            found += self._escape_refused(call)
            found += self._allowed(call, query_names)
        accepted = frozenset(rule.field for rule in broken if call.success and rule.field)
        return found, accepted

    def refusal(
        self, call: Call, ids: Iterable[str], also: Iterable[ErrorSpec] = ()
    ) -> list[Finding]:
        """The verdicts on a request built to break the rules ``ids`` and valid otherwise (a
        suite case): a refusal other than the profile's fails too, but for the answers ``also``
        lists (another rule the request breaks on purpose: the profile does not say which is
        checked first). ``ValueError`` when the request breaks none of ``ids`` as this judge
        reads it (the case is not what it says)."""
        wanted = set(ids)
        broken = [rule for rule in self._broken(call) if wanted & set(rule.ids)]
        if not broken:
            raise ValueError(f"the request breaks none of {sorted(wanted)} as the judge reads it")
        if not call.success and any(spec.matches(call.status, call.code) for spec in also):
            return []
        return [
            judged
            for rule in broken
            if (judged := self._verdict(call, rule, known_valid=True)) is not None
        ]

    def server_error(self, call: Call) -> list[Finding]:
        """A request a rule says the server must refuse, answered with a server error (a rate
        limit is judged before): the refusal the profile gives did not come. A malformed escape
        counts whatever the profile's reading: read literally, the request had to succeed."""
        return [
            Finding(CHECK, rule.ids, Outcome.FAILED, f"{rule.what}; answered {call.status}")
            for rule in self._broken(call, literal=False)
        ]

    def _broken(self, call: Call, literal: bool | None = None) -> list[Broken]:
        """The rules the request breaks, parameters first. ``literal``: whether a malformed
        escape may be read as text (None: as the profile says)."""
        broken = [*self._query_text(call, literal), *self._path_text(call, literal)]
        for rule in self._rules.get(call.operation_id, ()):
            broken += rule(call)
        return broken

    # -- verdicts ----------------------------------------------------------------------------
    def _verdict(self, call: Call, rule: Broken, *, known_valid: bool) -> Finding | None:
        """Accepted: a failure; refused as the profile says: a pass; refused otherwise: a
        failure when the request is ``known_valid`` but for the rule, else None."""
        want = rule.answer or self._business
        if call.success:
            return Finding(
                CHECK, rule.ids, Outcome.FAILED, f"{rule.what}; accepted ({call.status})"
            )
        if want.matches(call.status, call.code):
            message = f"{rule.what}; refused with {call.status}"
            return Finding(CHECK, rule.ids, Outcome.PASSED, message)
        if not known_valid:
            return None
        wanted = f"{want.status}" + (f" {want.code}" if want.code else "")
        message = f"{rule.what}; answered {call.status} {call.code or ''}".rstrip()
        return Finding(CHECK, rule.ids, Outcome.FAILED, f"{message}, not the profile's {wanted}")

    def _allowed(self, call: Call, query_names: frozenset[str]) -> Iterator[Finding]:
        """A request nothing in the contract or profile refuses must not get the validation
        error; only a refusal that says it is one is judged."""
        if call.operation_id.startswith("test"):
            return
        refused = self._validation.matches(call.status, call.code)
        float_form = (
            call.operation_id in FLOAT_FORM_OPERATIONS
            and FLOAT_NUMBER.search(call.request_body) is not None
            and _integral_float(call.request)
        )
        # The success status it should have had (a create's or any other's), as the boundary
        # cases that must be accepted name it.
        success = (
            self._boundary_ids.success_created
            if call.operation_id in self._creates
            else self._boundary_ids.success_other
        )
        if float_form:
            if call.success:
                yield Finding(CHECK, ("STATUS-016",), Outcome.PASSED, "60.0 taken as 60")
            elif refused:
                message = f"an integer in float form (60.0) refused with {call.status} {call.code}"
                yield Finding(CHECK, (*success, "STATUS-016"), Outcome.FAILED, message)
            return
        if not refused or not self._decidable(call, query_names):
            return
        message = (
            f"a request the contract and profile allow was refused with {call.status} {call.code}"
        )
        yield Finding(CHECK, success, Outcome.FAILED, message)

    def _escape_refused(self, call: Call) -> Iterator[Finding]:
        """Under "either", a malformed escape refused with the validation error is the
        profile's answer; accepted, it was read literally, which only the value's own checks
        judge."""
        if self._escape_reading != "either" or call.success:
            return
        in_query = has_malformed_escape(call.raw_query)
        if not (in_query or has_malformed_escape(call.raw_path)):
            return
        if self._validation.matches(call.status, call.code):
            ids = self._malformed("query" if in_query else "path", call)
            yield Finding(CHECK, ids, Outcome.PASSED, "a malformed percent-escape refused")

    def _decidable(self, call: Call, query_names: frozenset[str]) -> bool:
        query = call.query
        raw_query, body = call.raw_query, call.request_body
        if CURSOR in query or set(query) - query_names:
            return False  # a cursor may be unknown; an extra parameter may be refused
        if len(query) != raw_query.count("&") + 1 and raw_query:
            return False  # a repeated parameter
        if self._escape_reading == "either" and (
            has_malformed_escape(raw_query) or has_malformed_escape(call.raw_path)
        ):
            return False  # refused, or read as text: either is allowed
        if REDACTED.encode() in body:
            return False  # a value the recorder masked (a signature) may be what was refused
        if b"\\" in body or CONTROL_ESCAPE.search(raw_query):
            # An escaped or control character ("https://a.example\n"): where the contract's
            # formats and patterns are read more strictly than the validator reads them.
            return False
        if body:
            media = media_type(call.header("Content-Type"))
            if media != "application/json" or call.request is NOT_JSON:
                return False
        return True

    # -- parameters -------------------------------------------------------------------------
    def _query_text(self, call: Call, literal: bool | None = None) -> Iterator[Broken]:
        """A query parameter sent as no text (escapes of bytes that are not UTF-8; "50%off", a
        malformed escape, unless ``literal`` or, when None, the profile lets the server read it
        literally) is malformed."""
        raw = call.raw_query
        literal = self._escape_reading != "refuse" if literal is None else literal
        for pair in raw.split("&") if raw else ():
            name, _, value = pair.partition("=")
            problem = unreadable(name, literal=literal) or unreadable(value, literal=literal)
            if problem is not None:
                what = f"the query parameter {pair!r} {problem}"
                yield Broken(self._malformed("query", call), what, answer=self._validation)

    def _path_text(self, call: Call, literal: bool | None = None) -> Iterator[Broken]:
        """A path segment sent as no text is a malformed path parameter: refused with the
        validation error, or as an unknown id (another refusal, which is not judged)."""
        literal = self._escape_reading != "refuse" if literal is None else literal
        for segment in call.raw_path.split("/"):
            problem = unreadable(segment, literal=literal)
            if problem is not None:
                what = f"the path segment {segment[:80]!r} {problem}"
                yield Broken(self._malformed("path", call), what, answer=self._validation)
                return

    @staticmethod
    def _malformed(location: str, call: Call) -> tuple[str, ...]:
        return malformed_ids(location, call.operation_id) or (MALFORMED_PARAMETER,)

    # -- statements -------------------------------------------------------------------------
    def _window(self, call: Call) -> Iterator[Broken]:
        query = call.query
        start, end = epoch_seconds(query.get("from")), epoch_seconds(query.get("to"))
        if start is not None and end is not None and start >= end:
            what = f"from {query['from']} is not before to {query['to']}"
            yield Broken((statement.FROM_BEFORE_TO,), what, answer=self._validation)

    # -- business rules ---------------------------------------------------------------------
    def _splits(self, call: Call) -> Iterator[Broken]:
        member = SPLIT_OPERATIONS[call.operation_id]
        shares = call.field(member)
        if not isinstance(shares, list):
            return
        entries = [s for s in shares if isinstance(s, dict)]
        merchants = [s.get("merchant_id") for s in entries]
        total = sum(s["bps"] for s in entries if isinstance(s.get("bps"), int | float))
        if total > self._max_bps:
            what = f"split shares of {total:g} bps in all (at most {self._max_bps})"
            yield Broken(("SPLIT-004",), what, member)
        if not self._allow_repeated and len(set(map(str, merchants))) < len(merchants):
            yield Broken(("SPLIT-003",), "split shares repeat a merchant", member)
        caller = self._merchants.get(call.header("X-Api-Key") or "")
        if not self._allow_self and caller is not None and caller in merchants:
            what = f"a split share names the calling merchant {caller}"
            yield Broken(("SPLIT-002",), what, member)

    def _amount(
        self, currency: Currency, amount: object, ids: tuple[str, ...], where: str, member: str
    ) -> Iterator[Broken]:
        if not isinstance(amount, str) or decimal_value(amount) is None:
            return
        if _places(amount) > currency.decimals:
            what = f"{where} {amount} has more than the {currency.decimals} decimals"
            yield Broken(ids, f"{what} of {currency.code}", member)

    def _chain(
        self, currency: Currency, chain: object, ids: tuple[str, ...], where: str, member: str
    ) -> Iterator[Broken]:
        if isinstance(chain, str) and chain not in currency.chains:
            what = f"{where} {chain} is not a chain {currency.code} is deployed on"
            yield Broken(ids, what, member)

    def _quotes(self, call: Call) -> Iterator[Broken]:
        quotes = call.field("quotes")
        if not isinstance(quotes, dict):
            return
        if not quotes:
            yield Broken(("PAY-003",), "an empty quotes map", "quotes", self._empty_quotes)
            return
        for currency_id, quote in quotes.items():
            currency = self._currencies.get(currency_id)
            if currency is None or not isinstance(quote, dict):
                continue
            yield from self._amount(
                currency, quote.get("amount"), ("PAY-004",), f"quote {currency_id}", "quotes"
            )
            chains = quote.get("chain_ids")
            for chain in chains if isinstance(chains, list) else ():
                where = f"quote {currency_id}"
                yield from self._chain(currency, chain, ("PAY-002",), where, "quotes")

    def _subscription(self, call: Call) -> Iterator[Broken]:
        currency = self._currency(call.field("currency_id"))
        if currency is not None:
            chain = call.field("chain_id")
            yield from self._chain(currency, chain, ("SUB-001",), "chain_id", "chain_id")

    def _x402(self, call: Call) -> Iterator[Broken]:
        currency = self._currency(call.field("currency_id"))
        if currency is not None:
            chain, amount = call.field("chain_id"), call.field("amount")
            yield from self._chain(currency, chain, ("X402-011",), "chain_id", "chain_id")
            yield from self._amount(currency, amount, ("X402-011",), "amount", "amount")

    def _schedule(self, call: Call) -> Iterator[Broken]:
        currency = self._currency(call.field("currency_id"))
        if currency is not None:
            chain = call.field("target_chain_id")
            member = "target_chain_id"
            yield from self._chain(currency, chain, ("PAYOUT-009",), member, member)
            amount = call.field("min_send_amount")
            member = "min_send_amount"
            yield from self._amount(currency, amount, ("PAYOUT-003",), member, member)
        address = call.field("withdraw_address_id")
        caller = self._merchants.get(call.header("X-Api-Key") or "")
        owner = self._address_owner.get(address) if isinstance(address, str) else None
        if caller is not None and owner is not None and owner != caller:
            what = f"withdraw address {address} is {owner}'s, not {caller}'s"
            yield Broken(("PAYOUT-008",), what, "withdraw_address_id")

    def _first_run(self, call: Call) -> Iterator[Broken]:
        first = epoch_seconds(call.field("first_run_at"))
        handled = call.handled_between(self._past_margin, self._unix_timestamps)
        if first is not None and handled and first < min(low for low, _ in handled):
            what = f"first_run_at {call.field('first_run_at')} is in the past"
            yield Broken(("PAYOUT-005",), what, "first_run_at")

    def _webhook(self, call: Call) -> Iterator[Broken]:
        url = call.field("url")
        if isinstance(url, str):
            parts = urlsplit(url)
            scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
            loopback = self._loopback_http and scheme == "http" and is_loopback(host)
            if parts.netloc and scheme not in self._url_schemes and not loopback:
                what = f"webhook url {url[:80]} is neither https nor http on a loopback host"
                yield Broken(("WH-008",), what, "url")
        events = call.field("event_types")
        if isinstance(events, list):
            unknown = [e for e in events if isinstance(e, str) and e not in self._event_types]
            if unknown:
                what = f"event type {unknown[0]!r} is not one of the profile's"
                yield Broken(("WH-009",), what, "event_types")

    def _currency(self, currency_id: object) -> Currency | None:
        return self._currencies.get(currency_id) if isinstance(currency_id, str) else None


def malformed_ids(location: str, operation_id: str) -> tuple[str, ...]:
    """The ids a malformed ``location`` ("query", "path") parameter of the operation is judged
    under: those of ``MALFORMED_IDS`` the catalogue lists for the operation."""
    catalogue = load_catalogue()
    return tuple(
        rid
        for rid in MALFORMED_IDS.get(location, ())
        if (found := catalogue.get(rid)) is not None and operation_id in found.operations
    )
