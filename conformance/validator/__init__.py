"""The passive validator: checks recorded traffic (HAR, JSON Lines) against the contract.

For implementers' own tests, ``validate_exchange`` judges one exchange::

    from conformance.validator import validate_exchange
    from conformance.validator.exchange import Exchange

    results = validate_exchange(exchange)            # the default profile
    failures = [r for r in results if r.outcome is Outcome.FAILED]

Each result is a ``conformance.core.results.CheckResult`` of family ``validate`` naming the
requirement ids it verifies, with the exchange (redacted) as evidence.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from conformance.core.profile import Profile, load_profile

if TYPE_CHECKING:
    from conformance.core.results import CheckResult
    from conformance.validator.checks import ExchangeValidator
    from conformance.validator.exchange import Exchange

__all__ = ["validate_exchange", "validator_for"]


_VALIDATORS: dict[tuple[str, str, bool], ExchangeValidator] = {}


def _validator(profile: Profile, pass_evidence: bool) -> ExchangeValidator:
    # Imported here: readers and the CLI import this package without needing the checks.
    from conformance.validator.checks import ExchangeValidator

    key = (profile.source, profile.sha256, pass_evidence)
    validator = _VALIDATORS.get(key)
    if validator is None or validator.profile != profile:
        validator = _VALIDATORS[key] = ExchangeValidator(profile, pass_evidence=pass_evidence)
    return validator


@lru_cache(maxsize=8)
def _named_profile(name: str) -> Profile:
    return load_profile(name)


def validator_for(
    profile: str | Profile = "default", *, pass_evidence: bool = True
) -> ExchangeValidator:
    """The validator of a profile (a shipped name, a path, or a loaded ``Profile``), built once
    per profile and reused: building one reads the effective contract (a fraction of a second).
    ``pass_evidence=False``: passed results carry no evidence (faster; failures still do)."""
    loaded = _named_profile(profile) if isinstance(profile, str) else profile
    return _validator(loaded, pass_evidence)


def validate_exchange(exchange: Exchange, profile: str | Profile = "default") -> list[CheckResult]:
    """Check one recorded request/response pair against ``profile``'s effective contract.

    Raises ``ProfileError`` when the profile cannot be loaded; never for the exchange itself
    (an unknown operation is a result saying so)."""
    return validator_for(profile).validate(exchange)
