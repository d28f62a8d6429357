"""Credentials given for a run against the embedded reference server: refused, unless they are
its own.

``--api-key`` and ``--api-secret`` (and their environment variables) replace the profile's first
credential for a server under test. The embedded reference server has no credentials of its own
but the profile's, and it is started with the profile the run signs with: given a wrong secret,
it would adopt it, and the run would pass where the real server would refuse every request. So
a key or secret other than the profile's is refused when no ``--base-url`` is given.
"""

from __future__ import annotations

from conformance.core.profile import API_KEY_ENV, API_SECRET_ENV, Profile


def embedded_credential_problem(
    profile: Profile, api_key: str | None, api_secret: str | None
) -> str | None:
    """Why ``api_key``/``api_secret`` cannot be used with the embedded server of ``profile``,
    or None when they are absent or its own (the message never holds their values)."""
    own = profile.primary
    given = [
        (option, env)
        for option, env, value, expected in (
            ("--api-key", API_KEY_ENV, api_key, own.api_key),
            ("--api-secret", API_SECRET_ENV, api_secret, own.api_secret),
        )
        if value is not None and value != expected
    ]
    if not given:
        return None
    options = " and ".join(option for option, _ in given)
    variables = " and ".join(f"${env}" for _, env in given)
    return (
        f"{options} (or {variables}) {'are' if len(given) > 1 else 'is'} for a server under "
        "test, given with --base-url: the embedded reference server knows only the profile's "
        "credentials and would adopt any other, so a wrong one would pass; leave "
        f"{'them' if len(given) > 1 else 'it'} out, or give --base-url"
    )
