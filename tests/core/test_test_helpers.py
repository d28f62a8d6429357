"""Test helpers mapped to a server's own endpoint, or absent (core/test_helpers.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.core.profile import ProfileError, load_profile
from conformance.core.test_helpers import canonical_body, decimal_amount, extract, raw_amount

MAPPED = """\
extends = "default"

[profile]
name = "sandbox"

[test_helpers.deposit]
method = "PUT"
path = "/v1/sandbox/payments/{id}/funds"
body = { asset = "{currency_id}", network = "{chain_id}", units = "{raw_amount}", tx = "{tx_hash}" }
status = 202

[test_helpers]
expire = false
"""


def _profile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_mapped_helper_has_its_method_path_body_and_status(tmp_path: Path) -> None:
    profile = load_profile(_profile(tmp_path, MAPPED))
    deposit = profile.helper("deposit")
    assert deposit is not None and deposit.route == "PUT /v1/sandbox/payments/{id}/funds"
    assert profile.success_status("testDepositPayment") == 202
    assert profile.helper("expire") is None
    assert profile.helper_routes == {"deposit": "PUT /v1/sandbox/payments/{id}/funds"}


def test_the_default_profile_keeps_its_helpers_and_statuses() -> None:
    profile = load_profile("default")
    assert profile.helper_routes == {
        "deposit": "POST /v1/test-helpers/payments/{id}/deposit",
        "expire": "POST /v1/test-helpers/payments/{id}/expire",
    }
    deposit = profile.helper("deposit")
    assert deposit is not None and not deposit.mapped_body
    assert profile.success_status("testDepositPayment") == 200


def test_test_helpers_false_makes_every_helper_absent(tmp_path: Path) -> None:
    text = 'extends = "default"\n[profile]\nname = "n"\ntest_helpers = false\n'
    profile = load_profile(_profile(tmp_path, text))
    assert profile.helpers == {} and profile.helper_routes == {}


def test_the_body_is_rendered_in_the_helpers_shape_and_read_back(tmp_path: Path) -> None:
    deposit = load_profile(_profile(tmp_path, MAPPED)).helper("deposit")
    assert deposit is not None
    canonical = {"currency_id": "usdc", "chain_id": "base", "amount": "1.5"}
    sent = deposit.request_body("pay_1", canonical, {"usdc": 6})
    assert sent["asset"] == "usdc" and sent["network"] == "base" and sent["units"] == "1500000"
    assert sent["tx"].startswith("0x") and len(sent["tx"]) == 66
    assert json.loads(canonical_body(deposit, json.dumps(sent).encode(), {"usdc": 6})) == canonical
    # a body of another shape: sent as it is; read as an empty object, which validation refuses
    assert deposit.request_body("pay_1", {"amount": 5}, {"usdc": 6}) == {"amount": 5}
    assert canonical_body(deposit, b'{"other": 1}', {"usdc": 6}) == b"{}"


def test_extract_reads_placeholders_inside_strings() -> None:
    assert extract({"ref": "tx-{id}"}, {"ref": "tx-pay_9"}) == {"id": "pay_9"}
    assert extract({"ref": "tx-{id}"}, {"ref": "rx-pay_9"}) is None
    assert extract({"a": "{id}", "b": "{id}"}, {"a": "x", "b": "y"}) is None


@pytest.mark.parametrize(
    ("amount", "decimals", "raw"),
    [("1.5", 6, "1500000"), ("0", 6, "0"), ("12", 0, "12"), ("0.000001", 6, "1")],
)
def test_raw_and_decimal_amounts_round_trip(amount: str, decimals: int, raw: str) -> None:
    assert raw_amount(amount, decimals) == raw
    assert decimal_amount(raw, decimals) == amount


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        (
            'deposit = { method = "POST", path = "/v1/funds" }',
            "test_helpers.deposit: the path must hold {id}",
        ),
        (
            'deposit = { method = "POST", path = "/p/{id}", '
            'body = { a = "{wallet}", b = "{amount}" } }',
            "test_helpers.deposit.body: unknown placeholder {wallet}",
        ),
        (
            'deposit = { method = "POST", path = "/p/{id}", body = { a = "{currency_id}" } }',
            "names neither {amount} nor {raw_amount}",
        ),
        ('deposit = "GET /p/{id}"', 'test_helpers.deposit: must be "METHOD /path"'),
    ],
)
def test_profile_check_refuses_a_helper_the_suite_cannot_fill(
    tmp_path: Path, table: str, problem: str
) -> None:
    text = f'extends = "default"\n[profile]\nname = "n"\n[test_helpers]\n{table}\n'
    with pytest.raises(ProfileError) as caught:
        load_profile(_profile(tmp_path, text))
    assert problem in str(caught.value)
