"""Statement pages as exact values.

Every amount of a statement is a decimal string (profile 5: exactly ``accounting_decimals``
places); here it becomes a ``decimal.Decimal``, so every sum the statements family (and the
validator) computes is exact. An instant is an RFC 3339 string with any number of fractional
digits and any offset; ``core.formats.epoch_seconds`` turns it into exact epoch seconds, so that
the family can tell which lines a window ``[from, to)`` holds whatever precision the server
writes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal, DivisionByZero, InvalidOperation, Overflow
from typing import Any

from conformance.core.formats import epoch_seconds

# Arithmetic context of the family: amounts have at most 78 digits (profile 5), so nothing the
# family adds up is ever rounded (the default context keeps 28 significant digits).
EXACT = Context(prec=200, traps=[InvalidOperation, DivisionByZero, Overflow])
AMOUNT = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?")
TOP_AMOUNTS = ("opening_canonical", "closing_canonical")
LINE_AMOUNTS = (
    "canonical_amount",
    "signed_canonical_amount",
    "balance_after_canonical",
    "platform_fee_canonical",
)

# Requirement ids of what a page must be (profile 5, 6; spec 1).
READ = "OPS-007"
WINDOW = "STMT-001"
ORDER = "STMT-002"
DIRECTION = "STMT-003"
SIGN = "STMT-004"
RUNNING = "STMT-005"
OPENING = "STMT-006"
CLOSING = "STMT-007"
RECONCILES = "STMT-008"
PLACES = "STMT-009"
COUNT = "STMT-010"
LIMIT = "STMT-011"
LIMIT_RANGE = "STMT-012"
CURSOR = "STMT-013"
FROM_BEFORE_TO = "STMT-014"
FEE = "STMT-015"
CURRENCY = "STMT-016"
UNKNOWN_CURRENCY = "STMT-017"
DEPOSIT_CREDIT = "HELP-003"
SPLIT_INCOME = "HELP-004"


def amount(text: object) -> Decimal | None:
    """The exact value of a decimal string (``"-1.500000"``), None for anything else."""
    if not isinstance(text, str) or AMOUNT.fullmatch(text) is None:
        return None
    return Decimal(text)


def places_problem(name: str, value: object, places: int) -> str | None:
    """Profile 5: a decimal string with exactly ``places`` decimal places."""
    if not isinstance(value, str) or AMOUNT.fullmatch(value) is None:
        return f"{name} {value!r} is not a decimal string"
    _, _, fraction = value.partition(".")
    if len(fraction) != places:
        return f"{name} {value!r} has {len(fraction)} decimal places, not {places}"
    return None


def format_problems(body: Mapping[str, Any], places: int) -> list[str]:
    """Every canonical amount of a page, top level and lines, has ``places`` places."""
    found = [places_problem(name, body.get(name), places) for name in TOP_AMOUNTS]
    for line in body.get("lines") or []:
        if isinstance(line, Mapping):
            entry = line.get("ledger_entry_id")
            found += [
                places_problem(f"line {entry} {name}", line.get(name), places)
                for name in LINE_AMOUNTS
            ]
    return [p for p in found if p is not None]


class Unreadable(Exception):
    """A part of a statement the family cannot read; ``requirement_ids`` are what it breaks."""

    def __init__(self, requirement_ids: Sequence[str], message: str) -> None:
        super().__init__(message)
        self.requirement_ids = tuple(requirement_ids)
        self.message = message


@dataclass(frozen=True)
class Line:
    entry_id: int
    direction: str
    amount: Decimal
    signed: Decimal
    balance_after: Decimal
    fee: Decimal
    split_income: bool
    created: Decimal
    created_text: str
    payment_id: str | None
    source_merchant_id: str | None

    def describe(self) -> str:
        return (
            f"line {self.entry_id} ({self.direction} {self.amount}, signed {self.signed}, "
            f"balance {self.balance_after}, at {self.created_text})"
        )


@dataclass(frozen=True)
class Page:
    accounting_decimals: int
    code: object
    symbol: object
    opening: Decimal
    closing: Decimal
    count: object
    limit: object
    next_cursor: str | None
    reconciles: object
    lines: tuple[Line, ...]

    @property
    def ids(self) -> list[int]:
        return [line.entry_id for line in self.lines]


def _decimal_field(where: str, data: Mapping[str, Any], name: str) -> Decimal:
    value = amount(data.get(name))
    if value is None:
        raise Unreadable((PLACES,), f"{where}{name} {data.get(name)!r} is not a decimal string")
    return value


def parse_line(raw: object) -> Line:
    if not isinstance(raw, Mapping):
        raise Unreadable((READ,), f"a statement line is not an object: {raw!r}")
    entry = raw.get("ledger_entry_id")
    if not isinstance(entry, int) or isinstance(entry, bool):
        raise Unreadable((ORDER,), f"ledger_entry_id {entry!r} is not an integer")
    where = f"line {entry}: "
    created = epoch_seconds(raw.get("created_at"))
    if created is None:
        raise Unreadable((WINDOW,), f"{where}created_at {raw.get('created_at')!r} is not RFC 3339")
    direction = raw.get("direction")
    split_income = raw.get("is_split_recipient_income")
    if not isinstance(split_income, bool):
        raise Unreadable((SPLIT_INCOME,), f"{where}is_split_recipient_income is not a boolean")
    payment_id, source = raw.get("payment_id"), raw.get("source_merchant_id")
    return Line(
        entry_id=entry,
        direction=str(direction),
        amount=_decimal_field(where, raw, "canonical_amount"),
        signed=_decimal_field(where, raw, "signed_canonical_amount"),
        balance_after=_decimal_field(where, raw, "balance_after_canonical"),
        fee=_decimal_field(where, raw, "platform_fee_canonical"),
        split_income=split_income,
        created=created,
        created_text=str(raw.get("created_at")),
        payment_id=payment_id if isinstance(payment_id, str) else None,
        source_merchant_id=source if isinstance(source, str) else None,
    )


def parse_page(body: Mapping[str, Any]) -> Page:
    """The page's exact values; ``Unreadable`` names what cannot be read."""
    places = body.get("accounting_decimals")
    if not isinstance(places, int) or isinstance(places, bool) or places < 0:
        raise Unreadable((PLACES,), f"accounting_decimals {places!r} is not a whole number")
    lines = body.get("lines")
    if not isinstance(lines, list):
        raise Unreadable((READ,), "the statement has no lines array")
    cursor = body.get("next_cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise Unreadable((CURSOR,), f"next_cursor {cursor!r} is not a string")
    return Page(
        accounting_decimals=places,
        code=body.get("code"),
        symbol=body.get("symbol"),
        opening=_decimal_field("", body, "opening_canonical"),
        closing=_decimal_field("", body, "closing_canonical"),
        count=body.get("window_entry_count"),
        limit=body.get("limit"),
        next_cursor=cursor or None,
        reconciles=body.get("reconciles"),
        lines=tuple(parse_line(line) for line in lines),
    )


# ------------------------------------------------------------------------------ arithmetic
def sign_problem(line: Line, directions: Sequence[str]) -> str | None:
    """Profile 5: ``signed`` is the amount for a credit, its negation for a debit."""
    credit, debit = directions[0], directions[1]
    if line.direction == credit and line.signed != line.amount:
        return f"{line.describe()}: a credit's signed amount differs from its amount"
    if line.direction == debit and line.signed != -line.amount:
        return f"{line.describe()}: a debit's signed amount is not minus its amount"
    return None


def order_problem(ids: Sequence[int]) -> str | None:
    """Profile 5: lines in strictly ascending ``ledger_entry_id`` order (none twice)."""
    if all(a < b for a, b in itertools.pairwise(ids)):
        return None
    return f"ledger_entry_id not strictly ascending: {list(ids[:30])}"


def chain_problems(lines: Sequence[Line]) -> list[str]:
    """Each balance is the previous line's balance plus the line's signed amount (and nothing
    else: a platform fee does not move it)."""
    found: list[str] = []
    for before, line in itertools.pairwise(lines):
        expected = before.balance_after + line.signed
        if line.balance_after != expected:
            fee = f" (platform fee {line.fee})" if line.fee else ""
            found.append(
                f"{line.describe()}{fee}: balance {line.balance_after}, expected "
                f"{before.balance_after} + {line.signed} = {expected}"
            )
    return found


def in_window(line: Line, start: Decimal, end: Decimal) -> bool:
    return start <= line.created < end


def window_lines(history: Sequence[Line], start: Decimal, end: Decimal) -> list[Line]:
    return [line for line in history if in_window(line, start, end)]


def balance_before(history: Sequence[Line], opening: Decimal, start: Decimal) -> Decimal:
    """The balance before ``start`` seen from a longer history that begins with ``opening``:
    the balance after the last earlier line, or ``opening`` when none is earlier."""
    earlier = [line for line in history if line.created < start]
    return earlier[-1].balance_after if earlier else opening
