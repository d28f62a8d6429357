"""EIP-3009 ``TransferWithAuthorization`` typed data (EIP-712): signing and recovery.

x402 payments of the default profile are authorised by an EIP-712 signature over a
``TransferWithAuthorization`` message. The domain comes from the requirement's ``extra``
(``name``, ``version``, ``chain_id``, ``verifying_contract``); the message from the payment
payload's ``authorization`` (``from``, ``to``, ``value``, ``valid_after``, ``valid_before``,
``nonce``). The server recovers the signer and compares it with ``authorization.from``; the suite
and the tests sign as a test wallet with :func:`sign_transfer_authorization`.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eth_account import Account
    from eth_account.messages import SignableMessage
    from eth_account.signers.local import LocalAccount

_IMPORT_LOCK = threading.Lock()


@cache
def _eth_account() -> tuple[type[Account], Any]:
    """eth-account's ``Account`` and ``encode_typed_data``, imported on first use: the import
    takes about 1.4 s (py_ecc's pairing tables), which every process that signs or recovers
    nothing (a run without x402 checks, ``validate``, each ``--help``) is spared.

    py_ecc, imported by eth-account, raises the interpreter's recursion limit to 100,000 for its
    BLS pairing code, which nothing here uses (secp256k1 signing and recovery go through
    eth-keys). Left that high, a deeply nested JSON text overflows the C stack (SIGSEGV) where
    it would otherwise raise RecursionError: it is put back."""
    with _IMPORT_LOCK:
        limit = sys.getrecursionlimit()
        try:
            from eth_account import Account
            from eth_account.messages import encode_typed_data
        finally:
            sys.setrecursionlimit(limit)
    return Account, encode_typed_data


@lru_cache(maxsize=64)
def _wallet(private_key: str | bytes) -> LocalAccount:
    # Deriving the public key costs as much as signing: a run signs hundreds of payloads with a
    # handful of keys.
    account, _ = _eth_account()
    wallet: LocalAccount = account.from_key(private_key)
    return wallet


PRIMARY_TYPE = "TransferWithAuthorization"

MESSAGE_TYPES: dict[str, list[dict[str, str]]] = {
    "EIP712Domain": [
        {"name": "name", "type": "string"},
        {"name": "version", "type": "string"},
        {"name": "chainId", "type": "uint256"},
        {"name": "verifyingContract", "type": "address"},
    ],
    PRIMARY_TYPE: [
        {"name": "from", "type": "address"},
        {"name": "to", "type": "address"},
        {"name": "value", "type": "uint256"},
        {"name": "validAfter", "type": "uint256"},
        {"name": "validBefore", "type": "uint256"},
        {"name": "nonce", "type": "bytes32"},
    ],
}

UINT256_MAX = 2**256 - 1
_ADDRESS = "0x[0-9a-fA-F]{40}"
_BYTES32 = "0x[0-9a-fA-F]{64}"
_DIGITS = "0|[1-9][0-9]*"
_SIGNATURE = "0x[0-9a-fA-F]{130}"


class TypedDataError(ValueError):
    """An ``extra`` or ``authorization`` that cannot form a TransferWithAuthorization message."""


def is_address(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(_ADDRESS, value) is not None


def _uint256(value: object, field: str) -> int:
    if isinstance(value, bool):
        raise TypedDataError(f"{field} must be an unsigned integer")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and re.fullmatch(_DIGITS, value):
        number = int(value)
    else:
        raise TypedDataError(f"{field} must be an unsigned integer")
    if not 0 <= number <= UINT256_MAX:
        raise TypedDataError(f"{field} is outside the uint256 range")
    return number


@dataclass(frozen=True)
class Eip712Domain:
    name: str
    version: str
    chain_id: int
    verifying_contract: str

    @classmethod
    def from_extra(cls, extra: object) -> Eip712Domain:
        """Read the domain from a requirement's ``extra`` object."""
        if not isinstance(extra, Mapping):
            raise TypedDataError("extra must be an object carrying the EIP-712 domain")
        name, version = extra.get("name"), extra.get("version")
        contract = extra.get("verifying_contract")
        if not isinstance(name, str) or not isinstance(version, str):
            raise TypedDataError("extra.name and extra.version must be strings")
        if not is_address(contract):
            raise TypedDataError("extra.verifying_contract must be 0x followed by 40 hex digits")
        assert isinstance(contract, str)
        return cls(name, version, _uint256(extra.get("chain_id"), "extra.chain_id"), contract)

    def as_extra(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "chain_id": self.chain_id,
            "verifying_contract": self.verifying_contract,
        }

    def as_eip712(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "chainId": self.chain_id,
            "verifyingContract": self.verifying_contract,
        }


@dataclass(frozen=True)
class TransferAuthorization:
    """The ``authorization`` object of an x402 payment payload, typed."""

    from_address: str
    to: str
    value: int
    valid_after: int
    valid_before: int
    nonce: str

    @classmethod
    def from_payload(cls, authorization: object) -> TransferAuthorization:
        if not isinstance(authorization, Mapping):
            raise TypedDataError("authorization must be an object")
        sender, recipient = authorization.get("from"), authorization.get("to")
        nonce = authorization.get("nonce")
        if not is_address(sender) or not is_address(recipient):
            raise TypedDataError("authorization.from and .to must be 0x followed by 40 hex digits")
        if not isinstance(nonce, str) or re.fullmatch(_BYTES32, nonce) is None:
            raise TypedDataError("authorization.nonce must be 0x followed by 64 hex digits")
        assert isinstance(sender, str) and isinstance(recipient, str)
        return cls(
            from_address=sender,
            to=recipient,
            value=_uint256(authorization.get("value"), "authorization.value"),
            valid_after=_uint256(authorization.get("valid_after"), "authorization.valid_after"),
            valid_before=_uint256(authorization.get("valid_before"), "authorization.valid_before"),
            nonce=nonce,
        )

    def as_payload(self) -> dict[str, Any]:
        """The JSON shape of the spec: addresses and value as strings, times as integers."""
        return {
            "from": self.from_address,
            "to": self.to,
            "value": str(self.value),
            "valid_after": self.valid_after,
            "valid_before": self.valid_before,
            "nonce": self.nonce,
        }

    def as_eip712(self) -> dict[str, Any]:
        return {
            "from": self.from_address,
            "to": self.to,
            "value": self.value,
            "validAfter": self.valid_after,
            "validBefore": self.valid_before,
            "nonce": bytes.fromhex(self.nonce[2:]),
        }


def typed_data(domain: Eip712Domain, authorization: TransferAuthorization) -> dict[str, Any]:
    """The full EIP-712 document (types, primary type, domain, message)."""
    return {
        "types": MESSAGE_TYPES,
        "primaryType": PRIMARY_TYPE,
        "domain": domain.as_eip712(),
        "message": authorization.as_eip712(),
    }


def signable(domain: Eip712Domain, authorization: TransferAuthorization) -> SignableMessage:
    _, encode_typed_data = _eth_account()
    message: SignableMessage = encode_typed_data(full_message=typed_data(domain, authorization))
    return message


def sign_transfer_authorization(
    private_key: str | bytes, domain: Eip712Domain, authorization: TransferAuthorization
) -> str:
    """Sign as the wallet holding ``private_key``: ``0x`` + 130 hex digits (r, s, v)."""
    signed = _wallet(private_key).sign_message(signable(domain, authorization))
    return "0x" + bytes(signed.signature).hex()


def recover_signer(
    domain: Eip712Domain, authorization: TransferAuthorization, signature: object
) -> str | None:
    """The address that produced ``signature`` over the message, or None when it is not one."""
    if not isinstance(signature, str) or re.fullmatch(_SIGNATURE, signature) is None:
        return None
    try:
        account, _ = _eth_account()
        recovered: str = account.recover_message(
            signable(domain, authorization), signature=bytes.fromhex(signature[2:])
        )
    except Exception:  # eth-keys raises several types for a signature that is not on the curve
        return None
    return recovered


def same_address(a: str, b: str) -> bool:
    """Addresses compare case-insensitively (the mixed case is only an EIP-55 checksum)."""
    return a.lower() == b.lower()


def address_of(private_key: str | bytes) -> str:
    address: str = _wallet(private_key).address
    return address


def payment_payload(
    private_key: str | bytes,
    requirement: Mapping[str, Any],
    *,
    now: int,
    value: int | None = None,
    valid_after: int | None = None,
    valid_before: int | None = None,
    to: str | None = None,
    nonce: str | None = None,
) -> dict[str, Any]:
    """A signed x402 ``payment_payload`` answering one ``accepts`` entry.

    By default it authorises exactly ``max_amount_required`` to ``pay_to`` with the entry's
    nonce, valid from a minute ago until the entry's ``valid_before``; keyword arguments
    override one part (the signature always matches what is sent).
    """
    authorization = TransferAuthorization(
        from_address=address_of(private_key),
        to=to if to is not None else str(requirement["pay_to"]),
        value=value if value is not None else int(requirement["max_amount_required"]),
        valid_after=valid_after if valid_after is not None else max(0, now - 60),
        valid_before=(
            valid_before if valid_before is not None else int(requirement["valid_before"])
        ),
        nonce=nonce if nonce is not None else str(requirement["nonce"]),
    )
    domain = Eip712Domain.from_extra(requirement.get("extra"))
    return {
        "signature": sign_transfer_authorization(private_key, domain, authorization),
        "authorization": authorization.as_payload(),
    }
