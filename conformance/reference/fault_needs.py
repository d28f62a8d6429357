"""What a fault of the catalogue needs of the profile to be a bug at all.

A fault may carry ``needs: [name, ...]``: names of the predicates below. Under a profile where
one does not hold, the fault's bug cannot be told from a legitimate choice or has nothing to
break (no replay marker to leave out, no deposit helper to misbehave), so ``selftest`` shows it
as not applicable instead of running it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from conformance.core.profile import Profile


@dataclass(frozen=True)
class Need:
    name: str
    meaning: str  # what the profile must declare, as "not applicable: <meaning>" reads
    holds: Callable[[Profile], bool]


NEEDS: dict[str, Need] = {
    need.name: need
    for need in (
        Need(
            "replay-header",
            "the profile declares a replay marker (idempotency.replay_header)",
            lambda p: p.idempotency.replay_marked,
        ),
        Need(
            "auth-before-routing",
            "the profile authenticates before routing (status.auth_before_routing)",
            lambda p: p.status.auth_before_routing,
        ),
        Need(
            "allow-header",
            "the profile's method-not-allowed answer carries Allow "
            "(status.method_not_allowed.allow_header)",
            lambda p: p.status.method_not_allowed.allow_header,
        ),
        Need(
            "deposit-helper",
            "the profile declares the deposit test helper (test_helpers.deposit)",
            lambda p: p.helper("deposit") is not None,
        ),
        Need(
            "expire-helper",
            "the profile declares the expire test helper (test_helpers.expire)",
            lambda p: p.helper("expire") is not None,
        ),
        Need(
            "integer-float-form",
            "the profile accepts an integer written in float form "
            "(status.integer_accepts_float_form)",
            lambda p: p.status.integer_accepts_float_form,
        ),
        Need(
            "nonce-single-use",
            "the profile refuses a nonce used before (auth.nonce_single_use)",
            lambda p: p.auth.nonce_single_use,
        ),
        Need(
            "splits-refuse-self",
            "the profile refuses a merchant in its own splits (splits.allow_self = false)",
            lambda p: not p.splits.allow_self,
        ),
        Need(
            "splits-refuse-repeated-merchant",
            "the profile refuses a merchant twice in one split "
            "(splits.allow_repeated_merchant = false)",
            lambda p: not p.splits.allow_repeated_merchant,
        ),
        Need(
            "field-message-details",
            "the profile's validation errors list {field, message} details "
            "(status.validation_details)",
            lambda p: p.status.field_message_details,
        ),
    )
}


def unknown_needs(names: Iterable[str]) -> list[str]:
    return [n for n in names if n not in NEEDS]


def unmet(names: Iterable[str], profile: Profile) -> list[Need]:
    """The needs among ``names`` that ``profile`` does not meet, in the order given."""
    return [NEEDS[n] for n in names if not NEEDS[n].holds(profile)]
