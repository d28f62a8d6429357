"""Whether an answer is a rate limit: the suite then waits and sends again, the validator
leaves the exchange out of every other judgement."""

from __future__ import annotations

from collections.abc import Mapping

from conformance.core.profile import RateLimitRule

RETRY_AFTER = "Retry-After"


def is_rate_limited(status: int, headers: Mapping[str, str], rule: RateLimitRule | None) -> bool:
    """Whether an answer asks the client to wait: 429, 503 with ``Retry-After``, or the status
    the profile declares for its rate limit."""
    if status == 429:
        return True
    if status == 503:
        return RETRY_AFTER.lower() in {name.lower() for name in headers} or (
            rule is not None and rule.status == 503
        )
    return False
