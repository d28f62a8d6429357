"""Double-entry ledger of the reference server.

Every movement of money is one ledger transaction of several entries whose signed raw amounts
add up to zero. Incoming funds are credited to the merchant against the platform's clearing
account; split shares are then moved from the merchant to the split merchants, who see them as
split-recipient income naming the source merchant. Each entry stores the running balance of its
(merchant, currency) account, so statements never have to re-add history.

Amounts are integers of the currency's smallest unit ("raw"), stored as TEXT; statements show
them as decimal strings with the currency's number of places ("canonical").
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger_entries (
    ledger_entry_id INTEGER PRIMARY KEY AUTOINCREMENT,
    ledger_transaction_id TEXT NOT NULL,
    merchant_id TEXT NOT NULL,
    currency_id TEXT NOT NULL,
    tx_type TEXT NOT NULL,
    business_type TEXT NOT NULL,
    direction TEXT NOT NULL CHECK (direction IN ('credit', 'debit')),
    amount_raw TEXT NOT NULL,
    balance_after_raw TEXT NOT NULL,
    platform_fee_raw TEXT NOT NULL DEFAULT '0',
    is_split_recipient_income INTEGER NOT NULL DEFAULT 0,
    payment_id TEXT,
    merchant_order_no TEXT,
    source_merchant_id TEXT,
    withdrawal_id TEXT,
    created_us INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_entries_by_account
    ON ledger_entries (merchant_id, currency_id, created_us, ledger_entry_id);
"""

# The counter-account of money arriving from outside (a chain deposit, an x402 transfer).
CLEARING_ACCOUNT = "__platform_clearing__"

CREDIT = "credit"
DEBIT = "debit"

FaultSwitch = Callable[[str], bool]


def _no_fault(name: str) -> bool:
    return False


def to_micros(moment: datetime) -> int:
    """Microseconds since the epoch of an aware datetime: the ledger's exact time axis."""
    if moment.tzinfo is None:
        raise ValueError("ledger times must be timezone-aware")
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(micros: int) -> datetime:
    seconds, rest = divmod(micros, 1_000_000)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=rest)


def canonical(raw: int, places: int) -> str:
    """``canonical(-1500000, 6)`` -> ``"-1.500000"``: exact, never through a float."""
    sign = "-" if raw < 0 else ""
    whole, fraction = divmod(abs(raw), 10**places)
    if places == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{fraction:0{places}d}"


@dataclass(frozen=True)
class Entry:
    ledger_entry_id: int
    ledger_transaction_id: str
    merchant_id: str
    currency_id: str
    tx_type: str
    business_type: str
    direction: str
    amount_raw: int
    balance_after_raw: int
    platform_fee_raw: int
    is_split_recipient_income: bool
    payment_id: str | None
    merchant_order_no: str | None
    source_merchant_id: str | None
    withdrawal_id: str | None
    created_us: int

    @property
    def signed_raw(self) -> int:
        return self.amount_raw if self.direction == CREDIT else -self.amount_raw


ENTRY_COLUMNS = (
    "ledger_entry_id, ledger_transaction_id, merchant_id, currency_id, tx_type, business_type, "
    "direction, amount_raw, balance_after_raw, platform_fee_raw, is_split_recipient_income, "
    "payment_id, merchant_order_no, source_merchant_id, withdrawal_id, created_us"
)


def entry_from_row(row: Sequence[object]) -> Entry:
    return Entry(
        ledger_entry_id=int(str(row[0])),
        ledger_transaction_id=str(row[1]),
        merchant_id=str(row[2]),
        currency_id=str(row[3]),
        tx_type=str(row[4]),
        business_type=str(row[5]),
        direction=str(row[6]),
        amount_raw=int(str(row[7])),
        balance_after_raw=int(str(row[8])),
        platform_fee_raw=int(str(row[9])),
        is_split_recipient_income=bool(row[10]),
        payment_id=None if row[11] is None else str(row[11]),
        merchant_order_no=None if row[12] is None else str(row[12]),
        source_merchant_id=None if row[13] is None else str(row[13]),
        withdrawal_id=None if row[14] is None else str(row[14]),
        created_us=int(str(row[15])),
    )


def balance(conn: sqlite3.Connection, merchant_id: str, currency_id: str) -> int:
    """The current balance of one (merchant, currency) account, in raw units."""
    row = conn.execute(
        "SELECT balance_after_raw FROM ledger_entries WHERE merchant_id = ? AND currency_id = ?"
        " ORDER BY ledger_entry_id DESC LIMIT 1",
        (merchant_id, currency_id),
    ).fetchone()
    return 0 if row is None else int(row[0])


def _posting_time(conn: sqlite3.Connection, now: datetime) -> int:
    # The ledger is append-only and time-ordered: an entry is never dated before an earlier
    # entry, so id order and time order agree and a window [from, to) is a contiguous id range.
    row = conn.execute("SELECT MAX(created_us) FROM ledger_entries").fetchone()
    latest = 0 if row is None or row[0] is None else int(row[0])
    return max(to_micros(now), latest)


@dataclass(frozen=True)
class Leg:
    """One side of a posting before it is written."""

    merchant_id: str
    direction: str
    amount_raw: int
    tx_type: str
    business_type: str
    is_split_recipient_income: bool = False
    source_merchant_id: str | None = None


def _is_income(leg: Leg) -> bool:
    """A merchant's credit for a payment (not a split share, not the clearing account)."""
    return (
        leg.direction == CREDIT and leg.tx_type == "payment" and leg.merchant_id != CLEARING_ACCOUNT
    )


def _write(
    conn: sqlite3.Connection,
    legs: Sequence[Leg],
    *,
    currency_id: str,
    payment_id: str | None,
    merchant_order_no: str | None,
    now: datetime,
    fault: FaultSwitch,
) -> str:
    total = sum(leg.amount_raw if leg.direction == CREDIT else -leg.amount_raw for leg in legs)
    if total != 0:
        raise ValueError(f"unbalanced ledger transaction (sum {total})")
    transaction_id = "ltx_" + secrets.token_hex(12)
    created_us = _posting_time(conn, now)
    for leg in legs:
        if leg.amount_raw == 0:
            continue
        signed = leg.amount_raw if leg.direction == CREDIT else -leg.amount_raw
        if fault("ledger-running-balance-ignores-debits") and leg.direction == DEBIT:
            signed = 0
        fee = 0
        if fault("ledger-platform-fee-deducted") and _is_income(leg):
            fee = leg.amount_raw // 100  # a 1 % fee, taken out of the running balance
        after = balance(conn, leg.merchant_id, currency_id) + signed - fee
        conn.execute(
            "INSERT INTO ledger_entries (ledger_transaction_id, merchant_id, currency_id, tx_type,"
            " business_type, direction, amount_raw, balance_after_raw, platform_fee_raw,"
            " is_split_recipient_income, payment_id, merchant_order_no, source_merchant_id,"
            " created_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                transaction_id,
                leg.merchant_id,
                currency_id,
                leg.tx_type,
                leg.business_type,
                leg.direction,
                str(leg.amount_raw),
                str(after),
                str(fee),
                int(leg.is_split_recipient_income),
                payment_id,
                merchant_order_no,
                leg.source_merchant_id,
                created_us,
            ),
        )
    return transaction_id


def split_shares(raw_amount: int, splits: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """Each split merchant's share, rounded down; the remainder stays with the payee."""
    return [(merchant, raw_amount * bps // 10_000) for merchant, bps in splits]


def post_payment_income(
    conn: sqlite3.Connection,
    *,
    merchant_id: str,
    payment_id: str,
    merchant_order_no: str | None,
    currency_id: str,
    raw_amount: int,
    splits: Sequence[tuple[str, int]],
    now: datetime,
    business_type: str = "payment_income",
    fault: FaultSwitch = _no_fault,
) -> str:
    """Credit ``raw_amount`` to the merchant and move split shares to the split merchants.

    Returns the ledger transaction id. ``splits`` are (merchant_id, bps) pairs already
    validated (known merchants, not the payee, sum at most 10000).
    """
    if raw_amount < 0:
        raise ValueError("income cannot be negative")
    legs = [
        Leg(CLEARING_ACCOUNT, DEBIT, raw_amount, "payment", business_type),
        Leg(merchant_id, CREDIT, raw_amount, "payment", business_type),
    ]
    for split_merchant, share in split_shares(raw_amount, splits):
        legs.append(Leg(merchant_id, DEBIT, share, "split", "split_payout"))
        if fault("ledger-split-income-not-credited"):
            legs.append(Leg(CLEARING_ACCOUNT, CREDIT, share, "split", "split_payout"))
            continue
        legs.append(
            Leg(
                split_merchant,
                CREDIT,
                share,
                "split",
                "split_income",
                is_split_recipient_income=True,
                source_merchant_id=merchant_id,
            )
        )
    return _write(
        conn,
        legs,
        currency_id=currency_id,
        payment_id=payment_id,
        merchant_order_no=merchant_order_no,
        now=now,
        fault=fault,
    )


def entries_of_transaction(conn: sqlite3.Connection, transaction_id: str) -> list[Entry]:
    rows = conn.execute(
        f"SELECT {ENTRY_COLUMNS} FROM ledger_entries WHERE ledger_transaction_id = ?"
        " ORDER BY ledger_entry_id",
        (transaction_id,),
    ).fetchall()
    return [entry_from_row(r) for r in rows]
