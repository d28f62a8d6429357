"""Making a generated case safe to send without changing what it tests.

schemathesis repeats values (an ``Idempotency-Key`` of ``"0"`` in many cases), and JSON Schema
cannot say that a field is unique per merchant or that one date precedes another. The
``CasePreparer`` fixes a case up just before it is sent (``rules.yaml``, ``fixups``).
"""

from __future__ import annotations

import random
import string
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import schemathesis
from schemathesis.core.parameters import ParameterLocation

from conformance.core.formats import parse_date_time
from conformance.suite.schema.generation import schema_rules

IDEMPOTENCY_HEADER = "Idempotency-Key"
# Headers that frame the HTTP message itself. A generated value (schemathesis adds headers of
# random names to negative cases, ``content-length: &m`` among them) makes the request invalid
# HTTP, which the server's HTTP layer refuses before the API sees it: no requirement of the
# contract is tested by that, so the HTTP client sets these itself.
FRAMING_HEADERS = frozenset(
    {"content-length", "transfer-encoding", "host", "connection", "upgrade", "te", "trailer"}
)


class CasePreparer:
    """Makes a generated case safe to send without changing what it tests.

    - a fresh Idempotency-Key whenever the generated one is itself valid (schemathesis repeats
      values like ``"0"``; a repeated key would turn a case into a replay or a reuse);
    - in positive cases, the fixups of ``rules.yaml`` (unique fields, ordered and future
      date-times), rules that JSON Schema cannot state;
    - in every case, no generated header that frames the HTTP message (``FRAMING_HEADERS``).
    """

    def __init__(self, seed: int, key_lengths: tuple[int, int] = (1, 128)) -> None:
        """``key_lengths``: the profile's idempotency.min_length and max_length."""
        self._random = random.Random(seed)
        self._key_lengths = key_lengths
        fixups = schema_rules()["fixups"]
        self._fresh = fixups["fresh"]
        self._ordered = fixups["ordered"]
        self._future = fixups["future"]

    def fresh_value(self, length: int = 32) -> str:
        alphabet = string.ascii_lowercase + string.digits
        head = uuid.uuid4().hex
        if length < len(head):
            return head[:length]
        return head + "".join(self._random.choice(alphabet) for _ in range(length - len(head)))

    def prepare(self, case: schemathesis.Case[Any], operation_id: str) -> bool:
        """Fix ``case`` up in place; True when it got a fresh Idempotency-Key (a first use)."""
        if case.headers:
            for name in [n for n in case.headers if n.lower() in FRAMING_HEADERS]:
                del case.headers[name]
        fresh_key = self._idempotency_key(case)
        if not _is_positive(case):
            return fresh_key
        for rule in self._fresh:
            container = _container(case, rule["location"])
            if (
                rule["operation"] == operation_id
                and container is not None
                and rule["name"] in container
            ):
                container[rule["name"]] = f"sc-{self.fresh_value()}"
        for rule in self._ordered:
            container = _container(case, rule["location"])
            if rule["operation"] == operation_id and container is not None:
                _order(container, rule["first"], rule["second"])
        for rule in self._future:
            container = _container(case, rule["location"])
            if rule["operation"] == operation_id and container is not None:
                _in_future(container, rule["name"])
        return fresh_key

    def _idempotency_key(self, case: schemathesis.Case[Any]) -> bool:
        if not _declares_key(case):
            return False
        headers = case.headers
        value = None if headers is None else headers.get(IDEMPOTENCY_HEADER)
        shortest, longest = self._key_lengths
        valid = isinstance(value, str) and shortest <= len(value) <= longest
        if not valid and not _negated_elsewhere(case):
            return False  # the key's absence or invalidity is what this case tests
        if case.headers is None:
            case.headers = {}
        length = len(value) if valid and isinstance(value, str) else 32
        case.headers[IDEMPOTENCY_HEADER] = self.fresh_value(max(length, min(32, longest)))
        return True


def _declares_key(case: schemathesis.Case[Any]) -> bool:
    return any(
        p.location == ParameterLocation.HEADER and p.name.lower() == IDEMPOTENCY_HEADER.lower()
        for p in case.operation.iter_parameters()
    )


def _negated_elsewhere(case: schemathesis.Case[Any]) -> bool:
    """A negative case whose target is not the Idempotency-Key: an invalid or missing key
    would be rejected first and hide what the case tests."""
    meta = case.meta
    if meta is None or meta.generation.mode.is_positive:
        return False
    data = meta.phase.data
    target = getattr(data, "parameter_location", None)
    if target is not None:
        name = str(getattr(data, "parameter", "") or "")
        return not (
            target == ParameterLocation.HEADER and name.lower() == IDEMPOTENCY_HEADER.lower()
        )
    return any(
        location != ParameterLocation.HEADER and info.mode.is_negative
        for location, info in meta.components.items()
    )


def _is_positive(case: schemathesis.Case[Any]) -> bool:
    meta = case.meta
    return meta is None or meta.generation.mode.is_positive


def _container(case: schemathesis.Case[Any], location: str) -> dict[str, Any] | None:
    value = {"body": case.body, "query": case.query, "headers": case.headers}.get(location)
    return value if isinstance(value, dict) else None


def _rfc3339(moment: datetime) -> str:
    # isoformat pads the year to four digits (strftime's %Y does not below 1000)
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def _order(container: dict[str, Any], first: str, second: str) -> None:
    start, end = parse_date_time(container.get(first)), parse_date_time(container.get(second))
    if start is None or end is None or start < end:
        return
    if start == end:
        try:
            container[second] = _rfc3339(end + timedelta(seconds=1))
        except OverflowError:
            container[first] = _rfc3339(start - timedelta(seconds=1))
    else:
        container[first], container[second] = container[second], container[first]


def _in_future(container: dict[str, Any], name: str) -> None:
    moment = parse_date_time(container.get(name))
    if moment is not None and moment <= datetime.now(UTC) + timedelta(minutes=5):
        container[name] = _rfc3339(datetime.now(UTC) + timedelta(days=1))
