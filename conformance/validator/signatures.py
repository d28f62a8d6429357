"""Whether a recorded request's ``X-Signature`` verifies, under the profile's scheme and string
to sign, with the secret of its ``X-Api-Key`` (the profile's credentials, or the one
``validate --api-secret`` gives).

The answer is what the signature signs (``judge.signatures.Signed``: the request as sent, or
which part of it was signed otherwise), or the reason it cannot be known: a signer hook, a masked
signature (unless ``run --record`` checked it and marked whether it verifies), a secret the
profile does not hold, a request body whose exact bytes the recording lost. The auth checks
judge AUTH-005 and AUTH-013 with it; the per-exchange and the nonce checks leave a request whose
signature does not verify to them (the server may refuse it for that alone, with the profile's
answer to a bad signature or not).
"""

from __future__ import annotations

from conformance.core.profile import Profile
from conformance.core.redaction import REDACTED
from conformance.core.signing import AUTH_HEADERS
from conformance.judge.signatures import Scheme, Signed, SignedRequest, diagnose
from conformance.validator.exchange import Exchange, url_parts


class SignatureVerifier:
    def __init__(self, profile: Profile) -> None:
        auth = profile.auth
        self._scheme = Scheme(auth.string_to_sign, auth.scheme)
        self._hook = auth.signer
        self._secrets = {c.api_key: c.api_secret for c in profile.credentials}
        self._all_secrets = tuple(self._secrets.values())
        # the nonce and the auth checks ask about the same exchange in turn
        self._last: tuple[Exchange, Signed | str] | None = None

    def verify(self, exchange: Exchange, headers: dict[str, str]) -> Signed | str:
        """What the signature signs; a string: why it cannot be known. ``headers``: the
        request's, by lower-case name; every auth header must be present."""
        last = self._last
        if last is not None and last[0] is exchange:
            return last[1]
        answer = self._verify(exchange, headers)
        self._last = (exchange, answer)
        return answer

    def _verify(self, exchange: Exchange, headers: dict[str, str]) -> Signed | str:
        if self._hook:
            return (
                f"the profile signs with the hook {self._hook} (auth.signer): the validator "
                "verifies only the built-in schemes"
            )
        sent = headers.get("x-signature", "")
        marked = Signed.of_mark(sent)
        if marked is not None:  # run --record checked it before masking it
            return marked
        if sent == REDACTED:
            return "the recorder masked the X-Signature headers: signatures cannot be checked"
        api_key = headers.get("x-api-key", "")
        secret = self._secrets.get(api_key)
        if secret is None:
            return (
                "the profile holds no secret for the recording's API key: give it with "
                "validate --api-key and --api-secret to check signatures"
            )
        if exchange.request_body_inexact is not None:
            return exchange.request_body_inexact
        query = exchange.query
        target = exchange.path + (f"?{query}" if query else "")
        request = SignedRequest(
            {name: headers.get(name.lower(), "") for name in AUTH_HEADERS},
            exchange.method,
            target,
            exchange.request_body,
            exchange.header("Host") or url_parts(exchange.url).netloc,
        )
        return diagnose(request, secret, self._all_secrets, self._scheme)

    def forged(self, exchange: Exchange, headers: dict[str, str]) -> bool:
        """The request carries every auth header and its signature does not verify."""
        if not all(headers.get(name.lower()) for name in AUTH_HEADERS):
            return False
        verdict = self.verify(exchange, headers)
        return isinstance(verdict, Signed) and verdict is not Signed.AS_SENT
