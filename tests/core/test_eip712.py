"""EIP-3009 TransferWithAuthorization typed data: hashing, signing as a test wallet, recovery."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
from eth_abi.abi import encode as abi_encode
from eth_utils.crypto import keccak

from conformance.core import eip712
from conformance.core.eip712 import Eip712Domain, TransferAuthorization, TypedDataError

TEST_KEY = "0x" + "4c" * 32  # a fixed test wallet: never holds anything
OTHER_KEY = "0x" + "5d" * 32
USDC_BASE = Eip712Domain("USD Coin", "2", 8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
# The constant of Circle's FiatToken EIP3009 contract.
TRANSFER_TYPEHASH = bytes.fromhex(
    "7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267"
)


def authorization(**changes: object) -> TransferAuthorization:
    base = TransferAuthorization(
        from_address=eip712.address_of(TEST_KEY),
        to="0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
        value=50_000,
        valid_after=1_763_801_700,
        valid_before=1_763_802_300,
        nonce="0x" + "f3" * 32,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_the_digest_is_the_eip712_hash_of_transfer_with_authorization() -> None:
    auth = authorization()
    domain_typehash = keccak(
        text="EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
    )
    separator = keccak(
        abi_encode(
            ["bytes32", "bytes32", "bytes32", "uint256", "address"],
            [
                domain_typehash,
                keccak(text="USD Coin"),
                keccak(text="2"),
                8453,
                USDC_BASE.verifying_contract,
            ],
        )
    )
    struct = keccak(
        abi_encode(
            ["bytes32", "address", "address", "uint256", "uint256", "uint256", "bytes32"],
            [
                TRANSFER_TYPEHASH,
                auth.from_address,
                auth.to,
                auth.value,
                auth.valid_after,
                auth.valid_before,
                bytes.fromhex(auth.nonce[2:]),
            ],
        )
    )
    message = eip712.signable(USDC_BASE, auth)
    assert message.header == separator
    assert message.body == struct


def test_a_signature_recovers_to_the_signing_wallet() -> None:
    auth = authorization()
    signature = eip712.sign_transfer_authorization(TEST_KEY, USDC_BASE, auth)
    assert len(signature) == 132 and signature.startswith("0x")
    assert eip712.recover_signer(USDC_BASE, auth, signature) == auth.from_address


@pytest.mark.parametrize(
    "changed",
    [
        {"value": 50_001},
        {"to": "0x" + "11" * 20},
        {"nonce": "0x" + "00" * 32},
        {"valid_before": 1_763_802_301},
        {"valid_after": 0},
    ],
    ids=["value", "to", "nonce", "valid_before", "valid_after"],
)
def test_any_change_to_the_message_changes_the_recovered_signer(changed: dict[str, object]) -> None:
    signature = eip712.sign_transfer_authorization(TEST_KEY, USDC_BASE, authorization())
    recovered = eip712.recover_signer(USDC_BASE, authorization(**changed), signature)
    assert recovered != eip712.address_of(TEST_KEY)


def test_the_domain_is_part_of_what_is_signed() -> None:
    auth = authorization()
    signature = eip712.sign_transfer_authorization(TEST_KEY, USDC_BASE, auth)
    on_ethereum = dataclasses.replace(USDC_BASE, chain_id=1)
    assert eip712.recover_signer(on_ethereum, auth, signature) != auth.from_address


def test_another_wallet_signature_does_not_recover_to_from() -> None:
    auth = authorization()
    signature = eip712.sign_transfer_authorization(OTHER_KEY, USDC_BASE, auth)
    assert eip712.recover_signer(USDC_BASE, auth, signature) == eip712.address_of(OTHER_KEY)
    assert eip712.recover_signer(USDC_BASE, auth, signature) != auth.from_address


@pytest.mark.parametrize(
    "signature",
    ["", "0x", "0x" + "00" * 65, "0x" + "zz" * 65, "0x" + "ab" * 64, 12345, None],
    ids=["empty", "bare-0x", "zero", "not-hex", "short", "number", "none"],
)
def test_a_malformed_signature_recovers_to_nobody(signature: object) -> None:
    assert eip712.recover_signer(USDC_BASE, authorization(), signature) is None


def test_the_domain_is_read_from_the_requirement_extra() -> None:
    extra = USDC_BASE.as_extra()
    assert extra == {
        "name": "USD Coin",
        "version": "2",
        "chain_id": 8453,
        "verifying_contract": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    }
    assert Eip712Domain.from_extra(extra) == USDC_BASE
    assert Eip712Domain.from_extra({**extra, "chain_id": "8453"}) == USDC_BASE


@pytest.mark.parametrize(
    "extra",
    [
        None,
        "USD Coin",
        {"version": "2", "chain_id": 1, "verifying_contract": "0x" + "ab" * 20},
        {"name": "X", "version": "2", "chain_id": True, "verifying_contract": "0x" + "ab" * 20},
        {"name": "X", "version": "2", "chain_id": -1, "verifying_contract": "0x" + "ab" * 20},
        {"name": "X", "version": "2", "chain_id": 1, "verifying_contract": "0xabc"},
    ],
    ids=["none", "string", "no-name", "bool-chain", "negative-chain", "short-contract"],
)
def test_an_extra_without_a_usable_domain_is_refused(extra: object) -> None:
    with pytest.raises(TypedDataError):
        Eip712Domain.from_extra(extra)


def test_the_authorization_round_trips_through_its_json_shape() -> None:
    auth = authorization()
    payload = auth.as_payload()
    assert payload["value"] == "50000" and payload["valid_after"] == 1_763_801_700
    assert TransferAuthorization.from_payload(payload) == auth


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("from", "0x123"),
        ("to", None),
        ("value", "-1"),
        ("value", "1.5"),
        ("value", str(2**256)),
        ("valid_before", "soon"),
        ("nonce", "0x" + "ab" * 31),
    ],
)
def test_a_malformed_authorization_is_refused(field: str, value: object) -> None:
    payload = authorization().as_payload()
    payload[field] = value
    with pytest.raises(TypedDataError):
        TransferAuthorization.from_payload(payload)


def test_payment_payload_answers_a_requirement_and_verifies() -> None:
    requirement = {
        "pay_to": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
        "max_amount_required": "50000",
        "nonce": "0x" + "f3" * 32,
        "valid_before": 1_763_802_300,
        "extra": USDC_BASE.as_extra(),
    }
    payload = eip712.payment_payload(TEST_KEY, requirement, now=1_763_802_000)
    auth = TransferAuthorization.from_payload(payload["authorization"])
    assert auth.value == 50_000 and auth.to == requirement["pay_to"]
    assert auth.nonce == requirement["nonce"] and auth.valid_before == 1_763_802_300
    assert auth.valid_after == 1_763_801_940
    assert eip712.recover_signer(USDC_BASE, auth, payload["signature"]) == auth.from_address

    cheaper = eip712.payment_payload(TEST_KEY, requirement, now=1_763_802_000, value=1)
    assert cheaper["authorization"]["value"] == "1"
    cheaper_auth = TransferAuthorization.from_payload(cheaper["authorization"])
    assert eip712.recover_signer(USDC_BASE, cheaper_auth, cheaper["signature"]) == (
        auth.from_address
    )


def test_addresses_compare_without_their_checksum_case() -> None:
    address = eip712.address_of(TEST_KEY)
    assert eip712.same_address(address, address.lower())
    assert not eip712.same_address(address, "0x" + "00" * 20)


def in_a_fresh_interpreter(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )


def test_signing_keeps_the_interpreters_recursion_limit() -> None:
    # py_ecc (imported by eth-account on first use) raises it to 100,000 for itself; kept, a
    # deeply nested JSON text anywhere in the process overflows the C stack instead of raising
    # RecursionError.
    done = in_a_fresh_interpreter(
        "import sys; sys.setrecursionlimit(1234); from conformance.core import eip712; "
        "eip712.address_of('0x' + '11' * 32); print(sys.getrecursionlimit())"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1234"


def test_the_cli_starts_without_importing_eth_account() -> None:
    # about 1.4 s of every process's start that signs nothing (validate, --help, a run's workers)
    done = in_a_fresh_interpreter(
        "import sys, conformance.cli, conformance.suite.factories; "
        "print('eth_account' in sys.modules)"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_after_eth_account_is_loaded_a_deep_json_text_raises_recursion_error_not_a_crash() -> None:
    done = in_a_fresh_interpreter(
        "import json\nfrom conformance.core import eip712\neip712.address_of('0x' + '11' * 32)\n"
        "try:\n    json.loads('[' * 70_000)\n"
        "except RecursionError:\n    print('RecursionError')"
    )
    assert done.returncode == 0, f"returncode {done.returncode}"
    assert done.stdout.strip() == "RecursionError"


def test_signatures_go_through_libsecp256k1() -> None:
    # eth-keys falls back to pure-Python curve arithmetic without coincurve: 8-12 ms a signature
    # or a recovery instead of about 1 ms, a tenth of a run's CPU. Both give the same bytes.
    from eth_keys.backends import get_backend

    eip712.address_of(TEST_KEY)
    assert type(get_backend()).__name__ == "CoinCurveECCBackend"


def test_a_wallet_is_derived_once_per_key() -> None:
    before = eip712._wallet.cache_info().misses
    for _ in range(3):
        eip712.address_of("0x" + "5a" * 32)
    assert eip712._wallet.cache_info().misses == before + 1
