"""Idempotency-Keys (spec 4, profile 2 and 4): the ids of a request's key, and replays.

A request without a required key breaks IDEM-001 and IDEM-005 (refused with the profile's
error), one whose key is out of the contract's bounds LIMIT-001 and IDEM-006: the schema phase
and the validator name a request's key by these, whatever else the request breaks.

A replay answers the stored response: its body byte for byte, marked as a replay where the
profile declares a marker. A marker on an answer with nothing stored under its key, or with
another body, replays nothing: that is the marker's own failure (IDEM-008), not a sign that
the request was taken for an earlier one.
"""

from __future__ import annotations

MISSING_KEY_IDS = ("IDEM-001", "IDEM-005")
INVALID_KEY_IDS = ("LIMIT-001", "IDEM-006")
KEY_ACCEPTED = "IDEM-004"  # keys of every length within the bounds are accepted
ON_BOUND = "LIMIT-010"  # a value on a limit's bound is not a contract violation


def accepted_key_ids(length: int, bounds: tuple[int, int]) -> tuple[str, ...]:
    """What a key of ``length`` within ``bounds`` must be accepted under: IDEM-004, and
    LIMIT-010 for a key on a bound."""
    return (KEY_ACCEPTED, ON_BOUND) if length in bounds else (KEY_ACCEPTED,)


def replays(body: bytes, earlier: bytes | None, *, marked: bool, marker_declared: bool) -> bool:
    """Whether an answer of ``body`` replays the answer ``earlier`` stored under its key (None:
    nothing is stored there). Without a declared marker the body alone tells."""
    return earlier is not None and body == earlier and (marked or not marker_declared)


def is_marked(value: str | None) -> bool:
    """The replay marker's header value says this is a replay."""
    return (value or "").lower() == "true"
