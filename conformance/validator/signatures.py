"""Whether a recorded request's ``X-Signature`` verifies, under the profile's scheme and string
to sign, with the secret of its ``X-Api-Key`` (the profile's credentials, or the one
``validate --api-secret`` gives).

The answer is ``True``, ``False``, or the reason it cannot be known: a signer hook, a masked
signature (unless ``run --record`` checked it and marked whether it verifies), a secret the
profile does not hold, a request body whose exact bytes the recording lost. The auth checks
judge AUTH-005 and AUTH-013 with it; the per-exchange and the nonce checks leave a request whose
signature does not verify to them (the server may refuse it for that alone, with the profile's
answer to a bad signature or not).
"""

from __future__ import annotations

import hmac

from conformance.core.profile import Profile
from conformance.core.redaction import REDACTED, SIGNATURE_DOES_NOT_VERIFY, SIGNATURE_VERIFIES
from conformance.core.signing import AUTH_HEADERS, signature, string_to_sign
from conformance.validator.exchange import Exchange, url_parts

_RECORDER_VERDICTS = {SIGNATURE_VERIFIES: True, SIGNATURE_DOES_NOT_VERIFY: False}


class SignatureVerifier:
    def __init__(self, profile: Profile) -> None:
        auth = profile.auth
        self._template = auth.string_to_sign
        self._scheme = auth.scheme
        self._hook = auth.signer
        self._secrets = {c.api_key: c.api_secret for c in profile.credentials}
        # the nonce and the auth checks ask about the same exchange in turn
        self._last: tuple[Exchange, bool | str] | None = None

    def verify(self, exchange: Exchange, headers: dict[str, str]) -> bool | str:
        """True or False; a string: why it cannot be known. ``headers``: the request's, by
        lower-case name; every auth header must be present."""
        last = self._last
        if last is not None and last[0] is exchange:
            return last[1]
        answer = self._verify(exchange, headers)
        self._last = (exchange, answer)
        return answer

    def _verify(self, exchange: Exchange, headers: dict[str, str]) -> bool | str:
        if self._hook:
            return (
                f"the profile signs with the hook {self._hook} (auth.signer): the validator "
                "verifies only the built-in schemes"
            )
        sent = headers.get("x-signature", "")
        if sent in _RECORDER_VERDICTS:  # run --record checked it before masking it
            return _RECORDER_VERDICTS[sent]
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
        message = string_to_sign(
            self._template,
            headers.get("x-timestamp", ""),
            headers.get("x-nonce", ""),
            exchange.method,
            target,
            exchange.request_body,
            host=exchange.header("Host") or url_parts(exchange.url).netloc,
            api_key=api_key,
        )
        return hmac.compare_digest(signature(secret, message, self._scheme).encode(), sent.encode())

    def forged(self, exchange: Exchange, headers: dict[str, str]) -> bool:
        """The request carries every auth header and its signature does not verify."""
        if not all(headers.get(name.lower()) for name in AUTH_HEADERS):
            return False
        return self.verify(exchange, headers) is False
