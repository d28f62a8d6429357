"""What the profile says about payments, in the terms the payments family and the validator check.

States and transitions come from ``[payments]``; the deposit helper is no transition of the
profile's table, so the states it leads to are read from the accept-underpaid transition: a
short deposit gives the state accept-underpaid starts from, a full one the state it ends in.
Amounts are decimal strings scaled by a currency's decimals into raw integers, never floats.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Final

from conformance.core.profile import Currency, ErrorSpec, Profile, Range, Transition

CANCEL: Final = "cancelPayment"
ACCEPT: Final = "acceptUnderpaidPayment"
EXPIRE: Final = "testExpirePayment"
DEPOSIT: Final = "testDepositPayment"
CREATE: Final = "createPayment"
LIST: Final = "listPayments"
HELPERS: Final = {DEPOSIT: "deposit", EXPIRE: "expire"}
DECIMAL_DIGITS: Final = frozenset("0123456789")


@dataclass(frozen=True)
class PaymentRules:
    """The profile's payment choices: states, transitions, errors, limits, currencies."""

    profile: Profile

    # -- states and transitions ---------------------------------------------------------------
    @cached_property
    def states(self) -> tuple[str, ...]:
        return self.profile.lifecycle("payments").states

    @cached_property
    def initial(self) -> str:
        return self.profile.lifecycle("payments").initial_state

    @cached_property
    def transitions(self) -> dict[str, Transition]:
        return {t.operation: t for t in self.profile.transitions("payments")}

    def target(self, operation_id: str, status: str) -> str | None:
        """The state ``operation_id`` moves a payment in ``status`` to; None: refused."""
        transition = self.transitions.get(operation_id)
        if transition is None or status not in transition.sources:
            return None
        return transition.target

    def has(self, operation_id: str) -> bool:
        return operation_id in self.transitions

    @cached_property
    def underpaid(self) -> str | None:
        """The state a short deposit leads to: the one accept-underpaid starts from."""
        accept = self.transitions.get(ACCEPT)
        return accept.sources[0] if accept is not None and len(accept.sources) == 1 else None

    @cached_property
    def settled(self) -> str | None:
        """The state a full deposit (or an accepted underpayment) leads to."""
        accept = self.transitions.get(ACCEPT)
        return accept.target if accept is not None else None

    @cached_property
    def expired(self) -> str | None:
        """The state of a payment whose expires_at has passed (the expire helper's target)."""
        expire = self.transitions.get(EXPIRE)
        if expire is not None:
            return expire.target
        return "expired" if "expired" in self.states else None

    def has_helper(self, operation_id: str) -> bool:
        """The profile gives the server this test helper (mapped or as the default's)."""
        return self.profile.helper(HELPERS[operation_id]) is not None

    @property
    def helpers(self) -> bool:
        """Both test helpers are there (the checks of the helpers themselves need both)."""
        return self.has_helper(DEPOSIT) and self.has_helper(EXPIRE)

    @property
    def deposits(self) -> bool:
        """Deposits can be made and their outcome named (short and full)."""
        return self.has_helper(DEPOSIT) and self.underpaid is not None and self.settled is not None

    # -- numbers --------------------------------------------------------------------------------
    @cached_property
    def expires_in(self) -> Range:
        return self.profile.range("payments", "expires_in_secs")

    @cached_property
    def list_limit(self) -> Range:
        return self.profile.range("payments", "list_limit")

    @property
    def newest_first(self) -> bool:
        return self.profile.payments.list_order == "newest-first"

    @property
    def raw_max_digits(self) -> int:
        return self.profile.payments.raw_amount_max_digits

    @property
    def unique_order_no(self) -> bool:
        return self.profile.payments.unique_merchant_order_no

    @cached_property
    def currencies(self) -> dict[str, Currency]:
        """The profile's currencies that are deployed on at least one chain."""
        return {k: c for k, c in self.profile.currencies.items() if c.chains}

    # -- statuses -------------------------------------------------------------------------------
    def success(self, operation_id: str) -> int:
        return self.profile.success_status(operation_id)

    def error(self, name: str) -> ErrorSpec:
        return self.profile.error("status", name)

    @property
    def bad_cursor(self) -> ErrorSpec:
        """An unknown or foreign cursor: the profile pins the validation status (its code is
        not pinned for cursors)."""
        return ErrorSpec(self.error("validation").status)


# ------------------------------------------------------------------------------ amounts
def amount_text(raw: int, decimals: int, zeros: int = 0) -> str:
    """``amount_text(1500000, 6)`` -> ``"1.5"``; ``zeros`` more fraction zeros, never beyond
    ``decimals`` fraction digits."""
    whole, fraction = divmod(raw, 10**decimals)
    digits = str(fraction).rjust(decimals, "0").rstrip("0") if decimals else ""
    if decimals:
        digits += "0" * max(0, min(zeros, decimals - len(digits)))
    if not digits:
        return str(whole)
    return f"{whole}.{digits}"


def raw_amount(text: str, decimals: int) -> int:
    """``raw_amount("1.5", 6)`` -> ``1500000`` (``text`` has at most ``decimals`` decimals)."""
    whole, _, fraction = text.partition(".")
    return int(whole) * int(10**decimals) + int(fraction.ljust(decimals, "0") or "0")


def expected_raw(amount: object, decimals: int) -> int | None:
    """A decimal amount in raw units; None for no decimal amount, or one with more places than
    ``decimals`` (a request to be refused: the admission checks judge it)."""
    if not isinstance(amount, str) or decimal_value(amount) is None:
        return None
    if len(amount.partition(".")[2]) > decimals:
        return None
    return raw_amount(amount, decimals)


def scaled_raw(amount: object, currency: Currency | None) -> str | None:
    """``expected_raw`` in the currency's raw units, as the API writes a raw amount; None also
    when there is no currency."""
    raw = expected_raw(amount, currency.decimals) if currency is not None else None
    return None if raw is None else str(raw)


def decimal_value(text: object) -> Decimal | None:
    """The value of a plain decimal string (``12``, ``0.5``), or None for anything else."""
    if not isinstance(text, str) or not text:
        return None
    whole, dot, fraction = text.partition(".")
    if (
        not whole
        or set(whole) - DECIMAL_DIGITS
        or (dot and (not fraction or set(fraction) - DECIMAL_DIGITS))
    ):
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        return None
