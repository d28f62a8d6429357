"""Profiles: the default loads with its documented choices; a bad file gets a clear message."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.core.profile import (
    SHIPPED_PROFILES_DIR,
    ErrorSpec,
    MethodNotAllowed,
    Profile,
    ProfileError,
    Range,
    Transition,
    load_profile,
    shipped_profiles,
    with_credential,
)

DEFAULT_TEXT = (SHIPPED_PROFILES_DIR / "default.toml").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


def _edited(tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    """The default profile's text with ``old`` replaced by ``new``, written to tmp_path."""
    assert old in DEFAULT_TEXT, f"the default profile no longer contains {old!r}"
    path = tmp_path / "edited.toml"
    path.write_text(DEFAULT_TEXT.replace(old, new, count), encoding="utf-8")
    return path


# -- the default profile -----------------------------------------------------------------------


def test_default_is_the_shipped_profile(profile: Profile) -> None:
    assert "default" in shipped_profiles()
    assert profile.name == "default"
    assert Path(profile.source) == SHIPPED_PROFILES_DIR / "default.toml"
    assert re.fullmatch(r"[0-9a-f]{64}", profile.sha256)


def test_default_pins_the_documented_auth_choices(profile: Profile) -> None:
    assert profile.clock_window_secs == 300
    assert profile.string_to_sign == "{timestamp}\n{nonce}\n{method}\n{target}\n"
    assert profile.error("auth", "error") == ErrorSpec(401, "unauthorized")
    assert [c.merchant_id for c in profile.credentials] == ["m_alpha", "m_beta"]
    assert profile.primary.api_key == "mk_test_alpha"
    assert profile.secondary.api_key == "mk_test_beta"


def test_a_credential_never_shows_its_secret(profile: Profile) -> None:
    secret = profile.primary.api_secret
    assert secret not in str(profile.primary)
    assert secret not in repr(profile.primary)
    assert secret not in repr(profile)


def test_default_status_codes(profile: Profile) -> None:
    assert profile.success_status("createPayment") == 201
    assert profile.success_status("cancelPayment") == 200
    assert profile.error("status", "validation") == ErrorSpec(400, "validation_error")
    assert profile.error("status", "business_rule") == ErrorSpec(422, None)
    assert profile.error("idempotency", "reused") == ErrorSpec(422, "idempotency_key_reused")


def test_default_idempotency_rule(profile: Profile) -> None:
    assert profile.idempotency_required("POST", "createPayment")
    assert profile.idempotency_required("delete", "retirePayoutSchedule")
    assert not profile.idempotency_required("POST", "settleX402Payment")
    assert not profile.idempotency_required("GET", "listPayments")


def test_default_fixtures(profile: Profile) -> None:
    usdc = profile.currencies["usdc"]
    assert (usdc.code, usdc.symbol, usdc.name, usdc.decimals) == ("USDC", "$", "USD Coin", 6)
    assert usdc.chains == ("base", "ethereum")
    assert profile.currencies["eth"].asset_kinds == {"ethereum": "native"}
    assert profile.chains == ("base", "ethereum")
    assert profile.withdraw_addresses("m_alpha") == ("wa_alpha_base", "wa_alpha_eth")
    assert profile.withdraw_addresses("m_nobody") == ()
    assert profile.split_merchants == ("m_gamma", "m_delta")


def test_default_transitions_and_ranges(profile: Profile) -> None:
    pause = next(t for t in profile.transitions("payout_schedules") if t.operation.startswith("p"))
    assert (pause.operation, pause.sources, pause.target) == (
        "pausePayoutSchedule",
        ("active", "paused"),
        "paused",
    )
    limit = profile.range("payments", "list_limit")
    assert (limit.min, limit.max, limit.default) == (1, 100, 20)


# -- the typed sections --------------------------------------------------------------------------


def test_default_auth_and_idempotency_sections(profile: Profile) -> None:
    auth = profile.auth
    assert (auth.scheme, auth.timestamp_format) == ("hmac-sha256-hex", "unix-seconds")
    assert auth.nonce_pattern == "^[A-Za-z0-9_-]{16,128}$"
    assert (auth.clock_window_secs, auth.nonce_single_use) == (300, True)
    assert auth.error == ErrorSpec(401, "unauthorized")
    idem = profile.idempotency
    assert idem.required_methods == ("POST", "PUT", "DELETE")
    assert idem.optional_operations == ("settleX402Payment",)
    assert (idem.min_length, idem.max_length, idem.retention_secs) == (1, 128, 86400)
    assert idem.replay_header == "Idempotent-Replayed"
    assert idem.missing == ErrorSpec(400, "idempotency_key_missing")
    assert idem.in_use == ErrorSpec(409, "idempotency_key_in_use")


def test_default_status_section(profile: Profile) -> None:
    status = profile.status
    assert (status.success, status.created, status.max_body_bytes) == (200, 201, 1048576)
    assert status.method_not_allowed == MethodNotAllowed(405, allow_header=True)
    assert status.payload_too_large == ErrorSpec(413, None)
    assert status.auth_before_routing and status.integer_accepts_float_form
    assert status.field_message_details
    assert status.unsupported_media_type == (
        ErrorSpec(415, "unsupported_media_type"),
        ErrorSpec(400, "validation_error"),
    )
    assert profile.creates("createX402Requirements")
    assert not profile.creates("settleX402Payment")


def test_default_resource_sections(profile: Profile) -> None:
    payments = profile.payments
    assert payments.expires_in_secs == Range(60, 86400, 3600)
    assert payments.list_limit == Range(1, 100, 20)
    assert (payments.list_order, payments.raw_amount_max_digits) == ("newest-first", 78)
    assert payments.empty_quotes == ErrorSpec(422, None)
    assert payments.unique_merchant_order_no
    lifecycle = profile.lifecycle("subscriptions")
    assert lifecycle.states == ("pending_authorization", "canceled")
    assert lifecycle.initial_state == "pending_authorization"
    assert lifecycle.transitions == (
        Transition("cancelSubscription", ("pending_authorization",), "canceled"),
    )
    assert profile.lifecycle("payout_schedules").initial_state == "active"
    splits = profile.splits
    assert (splits.max_total_bps, splits.allow_self, splits.allow_repeated_merchant) == (
        10000,
        False,
        False,
    )
    assert profile.statements.limit == Range(1, 1000, 100)
    assert profile.statements.directions == ("credit", "debit")


def test_default_webhooks_and_x402_sections(profile: Profile) -> None:
    hooks = profile.webhooks
    assert hooks.event_types[0] == "payment.created" and len(hooks.event_types) == 9
    assert (hooks.url_schemes, hooks.loopback_http) == (("https",), True)
    assert (hooks.secret_prefix, hooks.secret_random_bytes) == ("whsec_", 32)
    assert hooks.delivery_statuses == ("pending", "succeeded", "failed")
    assert (hooks.signature, hooks.resend_status) == ("standard-webhooks", "pending")
    x402 = profile.x402
    assert (x402.schemes, x402.valid_before_offset_secs) == (("exact", "upto"), 300)
    assert x402.tx_hash_pattern == "^0x[0-9a-f]{64}$"
    assert x402.address_pattern == "^0x[0-9a-fA-F]{40}$"
    assert (x402.settle_failure, x402.settled_conflict) == (ErrorSpec(422), ErrorSpec(409))
    assert x402.usage_requires == "settled-upto"


def test_default_helpers_and_withdraw_addresses(profile: Profile) -> None:
    assert profile.helper_route("deposit") == "POST /v1/test-helpers/payments/{id}/deposit"
    assert profile.helper_route("refund") == ""
    assert set(profile.helper_routes) == {"deposit", "expire"}
    assert profile.withdraw_addresses_by_merchant == {
        "m_alpha": ("wa_alpha_base", "wa_alpha_eth"),
        "m_beta": ("wa_beta_base",),
    }


def test_a_profile_without_test_helpers_has_no_helper_routes(profile: Profile) -> None:
    data = {k: v for k, v in profile.data.items() if k != "test_helpers"}
    without = Profile("no-helpers", "<test>", "0" * 64, data)
    assert without.helper_routes == {}
    assert without.helper_route("deposit") == ""


def test_error_specs_lists_every_declared_error_answer_in_document_order(
    profile: Profile,
) -> None:
    specs = profile.error_specs
    assert specs[:2] == (ErrorSpec(401, "unauthorized"), ErrorSpec(400, "idempotency_key_missing"))
    assert ErrorSpec(405) in specs and ErrorSpec(413) in specs
    assert ErrorSpec(415, "unsupported_media_type") in specs
    assert all(400 <= s.status < 600 for s in specs)


def test_sections_are_built_once(profile: Profile) -> None:
    assert profile.status is profile.status
    assert profile.lifecycle("payments") is profile.lifecycle("payments")
    assert profile.currencies is profile.currencies


def test_with_credential_replaces_the_first_credential_only(profile: Profile) -> None:
    assert with_credential(profile, None, None) is profile
    live = with_credential(profile, "mk_live_1", None)
    assert (live.primary.api_key, live.primary.api_secret) == (
        "mk_live_1",
        profile.primary.api_secret,
    )
    assert live.secondary == profile.secondary
    assert profile.primary.api_key == "mk_test_alpha"  # the original is left as it was
    assert with_credential(profile, None, "sk_live_2").primary.api_secret == "sk_live_2"


# -- bad profile files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        pytest.param(
            "clock_window_secs = 300",
            "clock_window_secs = 300\nclock_skew = 5",
            "unknown key auth.clock_skew",
            id="unknown-key",
        ),
        pytest.param(
            "[profile]", "[profiles]\nname = 'x'\n\n[profile]", "unknown key profiles", id="table"
        ),
        pytest.param(
            "clock_window_secs = 300",
            'clock_window_secs = "300"',
            "auth.clock_window_secs: '300' is not of type 'integer'",
            id="wrong-type",
        ),
        pytest.param(
            'api_key = "mk_test_beta"',
            "api_key = 5",
            "credentials[1].api_key: 5 is not of type 'string'",
            id="wrong-type-in-array",
        ),
        pytest.param("created = 201\n", "", "missing key status.created", id="missing-status"),
        pytest.param(
            "success = 200", "success = 99", "status.success: 99 is less than", id="bad-status"
        ),
        pytest.param(
            'from = ["underpaid"]',
            'from = ["partially_paid"]',
            "payments.transitions[1].from names unknown state 'partially_paid'",
            id="unknown-source-state",
        ),
        pytest.param(
            'to = "canceled"',
            'to = "cancelled"',
            "payments.transitions[0].to names unknown state 'cancelled' (payments.states are",
            id="unknown-target-state",
        ),
        pytest.param(
            'initial_state = "active"',
            'initial_state = "enabled"',
            "payout_schedules.initial_state 'enabled' is not one of payout_schedules.states",
            id="unknown-initial-state",
        ),
        pytest.param(
            'operation = "cancelSubscription"',
            'operation = "cancelSub"',
            "subscriptions.transitions[0].operation: unknown operation id 'cancelSub'",
            id="unknown-operation",
        ),
        pytest.param(
            "min = 1, max = 100, default = 20",
            "min = 1, max = 100, default = 200",
            "payments.list_limit: default 200 is outside min..max",
            id="default-outside-range",
        ),
        pytest.param(
            'api_key = "mk_test_beta"',
            'api_key = "mk_test_alpha"',
            "credentials: api_key values must differ",
            id="same-api-key",
        ),
        pytest.param(
            '{ chain_id = "ethereum", asset_kind = "native" }',
            '{ chain_id = "solana", asset_kind = "native" }',
            "fixtures.currencies.eth.deployments[0].chain_id 'solana' is not one of fixtures",
            id="unknown-chain",
        ),
    ],
)
def test_an_invalid_profile_names_the_key_and_the_problem(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    path = _edited(tmp_path, old, new)
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)  # which file, too


def test_invalid_toml_is_reported_with_its_line(tmp_path: Path) -> None:
    path = _edited(tmp_path, "[auth]", "[auth")
    with pytest.raises(ProfileError, match=r"is not valid TOML: .*\(at line [0-9]+"):
        load_profile(path)


def test_a_file_that_is_not_utf8_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(DEFAULT_TEXT.replace("Ξ", "é").encode("latin-1"))
    with pytest.raises(ProfileError, match="is not UTF-8 text"):
        load_profile(path)


def test_a_missing_file_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"profile file '.*absent\.toml' does not exist"):
        load_profile(tmp_path / "absent.toml")


def test_a_directory_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"is a directory, not a \.toml file"):
        load_profile(tmp_path)


def test_an_unknown_shipped_name_lists_the_shipped_profiles() -> None:
    with pytest.raises(
        ProfileError, match="no profile named 'strict': shipped profiles are default"
    ):
        load_profile("strict")


def test_several_problems_are_reported_together(tmp_path: Path) -> None:
    path = tmp_path / "two.toml"
    text = DEFAULT_TEXT.replace("created = 201\n", "").replace("success = 200", "success = 'ok'")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert "missing key status.created" in str(caught.value)
    assert "status.success: 'ok' is not of type 'integer'" in str(caught.value)


# -- partial profiles: extends = "default" -----------------------------------------------------


def _partial(tmp_path: Path, text: str, name: str = "acme.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_partial_profile_extends_the_default_with_only_what_differs(tmp_path: Path) -> None:
    path = _partial(
        tmp_path,
        'extends = "default"\n\n[auth]\nclock_window_secs = 600\n\n'
        '[status]\nvalidation = { status = 422, code = "invalid_request" }\n',
    )
    loaded = load_profile(path)
    default = load_profile()
    assert loaded.extends == "default"
    assert loaded.clock_window_secs == 600
    assert loaded.error("status", "validation") == ErrorSpec(422, "invalid_request")
    # everything not written is the default profile's, tables merged key by key
    assert loaded.string_to_sign == default.string_to_sign
    assert loaded.error("status", "not_found") == default.error("status", "not_found")
    assert loaded.credentials == default.credentials
    assert loaded.currencies == default.currencies


def test_the_sections_of_a_partial_profile_read_its_overrides(tmp_path: Path) -> None:
    path = _partial(
        tmp_path,
        'extends = "default"\n\n[status]\nmax_body_bytes = 65536\n'
        'payload_too_large = { status = 400, code = "body_too_large" }\n\n'
        '[idempotency]\nreplay_header = "X-Replayed"\n\n'
        '[payments]\nlist_order = "oldest-first"\n\n'
        '[webhooks]\nurl_schemes = ["https", "http"]\n\n'
        "[x402]\nvalid_before_offset_secs = 60\n\n"
        '[test_helpers]\ndeposit = "PUT /v1/helpers/{id}/deposit"\n',
    )
    loaded = load_profile(path)
    default = load_profile()
    assert loaded.status.max_body_bytes == 65536
    assert loaded.status.payload_too_large == ErrorSpec(400, "body_too_large")
    assert loaded.idempotency.replay_header == "X-Replayed"
    assert loaded.payments.list_order == "oldest-first"
    assert loaded.webhooks.url_schemes == ("https", "http")
    assert loaded.x402.valid_before_offset_secs == 60
    assert loaded.helper_route("deposit") == "PUT /v1/helpers/{id}/deposit"
    # the keys the file does not write stay the default's
    assert loaded.status.method_not_allowed == default.status.method_not_allowed
    assert loaded.idempotency.min_length == default.idempotency.min_length
    assert loaded.payments.list_limit == default.payments.list_limit
    assert loaded.webhooks.event_types == default.webhooks.event_types
    assert loaded.x402.schemes == default.x402.schemes
    assert loaded.helper_route("expire") == default.helper_route("expire")


def test_a_partial_profile_is_named_after_its_file_unless_it_says_otherwise(
    tmp_path: Path,
) -> None:
    assert load_profile(_partial(tmp_path, 'extends = "default"\n')).name == "acme"
    named = _partial(tmp_path, 'extends = "default"\n[profile]\nname = "Acme Pay"\n', "b.toml")
    assert load_profile(named).name == "Acme Pay"
    assert load_profile(named).test_helpers is True  # the rest of [profile] is the default's


def test_arrays_of_a_partial_profile_replace_the_defaults_whole(tmp_path: Path) -> None:
    path = _partial(
        tmp_path,
        'extends = "default"\n[fixtures]\nchains = ["base", "ethereum", "polygon"]\n'
        "[[payments.transitions]]\noperation = 'cancelPayment'\nfrom = ['pending']\n"
        "to = 'canceled'\n",
    )
    loaded = load_profile(path)
    assert loaded.chains == ("base", "ethereum", "polygon")
    assert [t.operation for t in loaded.transitions("payments")] == ["cancelPayment"]


def test_a_partial_profile_is_still_validated_after_the_merge(tmp_path: Path) -> None:
    path = _partial(tmp_path, 'extends = "default"\n[payments]\ninitial_state = "new"\n')
    with pytest.raises(ProfileError, match=r"payments\.initial_state 'new' is not one of"):
        load_profile(path)


def test_a_profile_without_extends_must_state_every_choice(tmp_path: Path) -> None:
    path = _partial(tmp_path, "[auth]\nclock_window_secs = 600\n")
    with pytest.raises(ProfileError, match="missing key profile, credentials") as caught:
        load_profile(path)
    assert 'extends = "default"' in str(caught.value)  # the hint that saves writing it all


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param('"strict"', "extends: no shipped profile named 'strict'", id="unknown"),
        pytest.param("5", "extends: must be the name of a shipped profile", id="not-a-string"),
        pytest.param('""', "extends: no shipped profile named ''", id="empty"),
        pytest.param('"../default"', "extends: no shipped profile named '../default'", id="path"),
        pytest.param('["default"]', "extends: must be the name of a shipped profile", id="list"),
    ],
)
def test_a_bad_extends_is_a_clear_error(tmp_path: Path, value: str, message: str) -> None:
    path = _partial(tmp_path, f"extends = {value}\n")
    with pytest.raises(ProfileError, match=re.escape(message)) as caught:
        load_profile(path)
    assert "shipped profiles are default" in str(caught.value)


# -- every problem once ------------------------------------------------------------------------


def test_each_problem_of_a_partial_profile_is_reported_once(tmp_path: Path) -> None:
    # The report of issue 17: "missing key ..." five times, never reaching the type error.
    path = _partial(
        tmp_path,
        '[profile]\nname = "acme"\ntest_helpers = true\n\n[auth]\nclock_window_secs = "600"\n'
        "\n[status]\nsuccess = 200\n",
    )
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    problems = caught.value.problems
    assert len(problems) == len(set(problems))
    assert "auth.clock_window_secs: '600' is not of type 'integer'" in problems
    assert sum(p.startswith("missing key credentials") for p in problems) == 1
    assert sum(p.startswith("missing key auth.scheme") for p in problems) == 1
    assert sum(p.startswith("missing key status.created") for p in problems) == 1
    assert len(problems) == 4
    assert str(caught.value).count("missing key status.created") == 1


def test_every_cross_reference_problem_is_reported_not_only_the_first(tmp_path: Path) -> None:
    path = _partial(
        tmp_path,
        'extends = "default"\n[payments]\ninitial_state = "new"\n'
        "[statements]\nlimit = { min = 10, max = 1 }\n",
    )
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert caught.value.problems == (
        "payments.initial_state 'new' is not one of payments.states "
        "(pending, underpaid, settled, expired, canceled)",
        "statements.limit: min is greater than max",
    )


def test_a_problem_with_an_api_secret_never_quotes_it(tmp_path: Path) -> None:
    path = _partial(
        tmp_path,
        'extends = "default"\n[[credentials]]\nname = "a"\napi_key = "k1"\n'
        'api_secret = 918273645546372819\nmerchant_id = "m"\n',
    )
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert caught.value.problems == (
        "credentials: must have at least 2 entries",
        "credentials[0].api_secret: must be of type string",
    )
    assert "918273645546372819" not in str(caught.value)


def test_a_profile_may_declare_no_replay_header(tmp_path: Path) -> None:
    path = _partial(tmp_path, 'extends = "default"\n\n[idempotency]\nreplay_header = ""\n')
    idempotency = load_profile(path).idempotency
    assert idempotency.replay_header == ""
    assert not idempotency.replay_marked
    assert load_profile().idempotency.replay_marked


def test_a_replay_header_that_is_no_header_name_is_refused(tmp_path: Path) -> None:
    path = _partial(tmp_path, 'extends = "default"\n\n[idempotency]\nreplay_header = "Is Replay"\n')
    with pytest.raises(ProfileError, match=r"idempotency\.replay_header"):
        load_profile(path)


def test_an_error_answer_matches_its_status_and_the_code_the_profile_pins() -> None:
    pinned = ErrorSpec(409, "duplicate_order")
    assert pinned.matches(409, "duplicate_order")
    assert not pinned.matches(409, "order_exists")
    assert not pinned.matches(422, "duplicate_order")
    # no code pinned: any code (or none) with the status
    assert ErrorSpec(409).matches(409, "order_exists") and ErrorSpec(409).matches(409, None)
    assert not ErrorSpec(409).matches(None, None)
