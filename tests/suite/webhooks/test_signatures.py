"""Standard Webhooks signatures as the suite checks them, against the reference's signer."""

from __future__ import annotations

import base64

from conformance.reference.webhook_dispatch import sign
from conformance.reference.webhooks import new_secret as new_secret_for_tests
from conformance.suite.webhooks.driving import Endpoint, Secret
from conformance.suite.webhooks.signatures import secret_problem, signed_with

PREFIX = "whsec_"


def test_a_signature_is_matched_to_the_secret_that_made_it() -> None:
    one, two = new_secret_for_tests(), new_secret_for_tests()
    header = sign(two, "msg_1", 1700000000, b'{"a":1}')
    assert signed_with([one, two], PREFIX, "msg_1", "1700000000", b'{"a":1}', header) == 1
    assert signed_with([one], PREFIX, "msg_1", "1700000000", b'{"a":1}', header) is None
    # another id, timestamp or body does not verify; several entries may be given
    assert signed_with([two], PREFIX, "msg_2", "1700000000", b'{"a":1}', header) is None
    assert signed_with([two], PREFIX, "msg_1", "1700000001", b'{"a":1}', header) is None
    assert signed_with([two], PREFIX, "msg_1", "1700000000", b"{}", header) is None
    both = f"v1,bm90IGl0 {header}"
    assert signed_with([two], PREFIX, "msg_1", "1700000000", b'{"a":1}', both) == 0
    # a secret handed out twice: the newest use
    assert signed_with([two, two], PREFIX, "msg_1", "1700000000", b'{"a":1}', header) == 1


def test_secret_format() -> None:
    assert secret_problem(new_secret_for_tests(), PREFIX, 32) is None
    short = PREFIX + base64.b64encode(b"x" * 16).decode()
    assert "16 bytes" in str(secret_problem(short, PREFIX, 32))
    assert "start with" in str(secret_problem("sk_" + short, PREFIX, 32))
    assert "not base64" in str(secret_problem(PREFIX + "***", PREFIX, 32))
    assert "not a string" in str(secret_problem(None, PREFIX, 32))


def test_which_secrets_may_have_signed_a_delivery() -> None:
    endpoint = Endpoint("ok", "we_1", "/ok", [])
    endpoint.secrets = [Secret("s1", 10.0, 11.0), Secret("s2", 20.0, 21.0)]
    # before the first rotation was answered, the creation secret may still have signed
    assert endpoint.signers(10.5, earliest=5.0) == ([0], True)
    # between the rotations only s1; around the second one both
    assert endpoint.signers(15.0, earliest=12.0) == ([0], False)
    assert endpoint.signers(20.5, earliest=15.0) == ([0, 1], False)
    # signed after the second rotation was answered: only s2
    assert endpoint.signers(30.0, earliest=22.0) == ([1], False)
