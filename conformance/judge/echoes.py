"""What an answer must give back of what its request put (spec 6 and the split template).

Each function returns the problems (empty: as put), or None when the request leaves nothing to
judge: a request the server had to refuse (event types named twice, say) that it accepted is
that refusal's failure, not one of the answer's.
"""

from __future__ import annotations

from collections import Counter

from conformance.judge.values import json_int


def event_types_problems(sent: object, kept: object) -> list[str] | None:
    """WH-001, WH-005: an endpoint put with ``sent`` event types answers each of them once."""
    if not isinstance(sent, list) or len(set(map(str, sent))) != len(sent):
        return None
    if isinstance(kept, list) and Counter(map(str, kept)) == Counter(map(str, sent)):
        return []
    return [f"event_types {sent} put, {kept!r} answered"]


def shares_problems(sent: object, kept: object) -> list[str] | None:
    """SPLIT-007, SPLIT-008: a split template answers the shares put, no more and no fewer."""
    if not isinstance(sent, list):
        return None
    wanted = Counter(_share(s) for s in sent)
    if isinstance(kept, list) and Counter(_share(s) for s in kept) == wanted:
        return []
    if not sent:
        return [f"shares [] put, {kept!r} answered"]
    return [f"the answered shares {kept!r} are not the ones put {sent!r}"]


def _share(share: object) -> tuple[object, int | None]:
    if not isinstance(share, dict):
        return (share, None)
    return (share.get("merchant_id"), json_int(share.get("bps")))
