"""The divergent profile differs from the default on every open point a profile can vary.

Each key of conformance/profiles/open_points.yaml has a different value in the two profiles,
except the keys listed below, each with why it is left equal.
"""

from __future__ import annotations

from conformance.core.open_points import load_open_points, value_at
from conformance.core.profile import load_profile

LEFT_EQUAL = {
    # hooks: the divergent profile varies the built-in signing and webhook signing instead,
    # which the reference server plays; it cannot play an arbitrary client-side hook
    "auth.signer": "a hook replaces the built-in scheme the divergent profile varies",
    "webhooks.verifier": "a hook replaces [webhooks.signing], which the profile varies",
    # choices the reference server does not play (it always makes the default's)
    "auth.nonce_single_use": "kept, so that its own replayed error (auth.errors.replayed) is "
    "played; the server plays a reusable nonce too (tests/suite/auth/test_profile_choices.py)",
    "status.success": "the reference server's successes; not varied yet",
    "status.created": "varied through create_operations: 200 for the creates it leaves out",
    "x402.schemes": "the reference server implements exact and upto",
    "x402.tx_hash_pattern": "the reference server's transaction hashes are 0x + 64 hex",
    "x402.address_pattern": "EVM addresses: the fixtures' addresses",
    "x402.nonce_pattern": "EIP-3009 nonces: 0x + 64 hex",
    "x402.payment_payload": "the EIP-3009 payload's formats",
    "x402.usage_requires": "the one value the schema accepts",
    "payments.unique_merchant_order_no": "the reference server always refuses a duplicate",
    # what the suite needs to test at all
    "webhooks.url_schemes": "the suite's receiver is on loopback http, allowed by loopback_http",
    "webhooks.loopback_http": "false would leave the suite no receiver it can run",
    "fixtures.currencies": "the fixtures the reference server is seeded with",
    "status.business_rule": "the divergent validation shares it (422), the point of that choice",
    "profile.test_helpers": "false would leave deposits and expiry unreachable; the divergent "
    "profile maps the helpers instead",
}


def test_the_divergent_profile_differs_on_every_open_point_but_those_listed() -> None:
    default, divergent = load_profile("default"), load_profile("divergent")
    keys = list(load_open_points().keys())
    equal = {k for k in keys if value_at(default.data, k) == value_at(divergent.data, k)}
    listed = {k for k in LEFT_EQUAL if k in keys}
    assert equal == listed, (
        f"equal but not listed: {sorted(equal - listed)}; listed but not equal: "
        f"{sorted(listed - equal)}"
    )
