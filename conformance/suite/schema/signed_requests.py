"""Request signing for schemathesis' ``requests`` calls.

A module of its own, importing none of the suite's schemathesis checks: the comparison's hook for
plain ``schemathesis run`` signs with it and must not register them.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import requests

from conformance.core.signing import Signer


class SignedRequests(requests.auth.AuthBase):
    """Adds the four authentication headers, signed over the request exactly as sent."""

    def __init__(self, signer: Signer) -> None:
        self.signer = signer

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        body = request.body
        if body is None:
            raw = b""
        elif isinstance(body, bytes):
            raw = body
        elif isinstance(body, str):
            # http.client sends a str body encoded as ISO-8859-1.
            raw = body.encode("iso-8859-1", errors="replace")
        else:
            raise TypeError(f"cannot sign a streamed request body ({type(body).__name__})")
        host = str(request.headers.get("Host") or urlsplit(str(request.url)).netloc)
        request.headers.update(
            self.signer.headers(str(request.method), request.path_url, raw, host=host)
        )
        return request
