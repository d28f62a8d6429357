"""Ed25519 signatures of manifest.json, so an auditor can check who vouched for a report.

``run --sign-key KEY`` signs the exact bytes of manifest.json with an Ed25519 private key (a
PEM file, unencrypted: ``keygen`` writes one, as does ``openssl genpkey -algorithm ed25519``)
and writes the signature, base64, to manifest.sig beside it. The manifest records the public
key and its fingerprint (SHA-256 of the 32 raw public key bytes), so ``verify`` can check the
signature without being given a key; that proves only that the files were not changed since
they were signed, since whoever changed them could sign again with a key of their own. Given
the signer's public key (``verify --public-key``), a valid signature also proves who signed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from conformance.core import untrusted_files

SIGNATURE_FILENAME = "manifest.sig"
ALGORITHM = "Ed25519"
MAX_KEY_BYTES = 64 * 1024


class SigningError(Exception):
    """A key could not be read or used; the message names the file, never the key."""


def _raw(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def fingerprint(public_key: Ed25519PublicKey) -> str:
    """``sha256:<hex>`` of the raw public key: how reports and messages name a key."""
    return "sha256:" + hashlib.sha256(_raw(public_key)).hexdigest()


def public_key_text(public_key: Ed25519PublicKey) -> str:
    """The raw public key, base64: what the manifest records."""
    return base64.b64encode(_raw(public_key)).decode("ascii")


def public_key_from_text(text: str) -> Ed25519PublicKey:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, binascii.Error, UnicodeEncodeError) as exc:
        raise SigningError(f"not an Ed25519 public key ({exc})") from None


@dataclass(frozen=True, repr=False)
class SigningKey:
    """A loaded private key; its repr and str never show the key."""

    private_key: Ed25519PrivateKey
    source: str

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self.private_key.public_key()

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    def sign(self, data: bytes) -> bytes:
        return self.private_key.sign(data)

    def __repr__(self) -> str:
        return f"SigningKey({self.source}, {self.fingerprint})"


def _read(path: Path, what: str) -> bytes:
    """The key file's bytes: a regular file (a named pipe would block, /dev/zero never end)."""
    try:
        return untrusted_files.read_bytes(path, max_bytes=MAX_KEY_BYTES)
    except untrusted_files.UntrustedFileError as exc:
        raise SigningError(f"cannot read the {what}: {exc}") from None


def load_private_key(path: Path) -> SigningKey:
    """The Ed25519 private key in the PEM file at ``path``."""
    data = _read(path, "signing key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise SigningError(
            f"the signing key {path} is encrypted; give an unencrypted PEM key"
        ) from None
    except (ValueError, UnsupportedAlgorithm):
        # the library's message may quote the file: name the file only
        raise SigningError(f"the signing key {path} is not a PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(
            f"the signing key {path} is a {type(key).__name__.lstrip('_')}, not an Ed25519 key"
        )
    return SigningKey(key, str(path))


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key in the PEM file at ``path``."""
    data = _read(path, "public key")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm):
        raise SigningError(f"the public key {path} is not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningError(f"the public key {path} is not an Ed25519 key")
    return key


def signature_text(key: SigningKey, data: bytes) -> str:
    """The content of manifest.sig for manifest bytes ``data``."""
    return base64.b64encode(key.sign(data)).decode("ascii") + "\n"


def signature_valid(public_key: Ed25519PublicKey, data: bytes, signature_file: bytes) -> bool:
    """Whether manifest.sig content ``signature_file`` signs ``data`` with ``public_key``."""
    try:
        signature = base64.b64decode(signature_file.strip(), validate=True)
        public_key.verify(signature, data)
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True


def generate(private_path: Path, public_path: Path) -> SigningKey:
    """A new key pair in two PEM files; the private one readable by its owner only.

    Neither file may exist already: a key is never overwritten.
    """
    for path in (private_path, public_path):
        if path.exists():
            raise SigningError(f"{path} exists already; a key is never overwritten")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    try:
        fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(private_pem)
        public_path.write_bytes(public_pem)
    except OSError as exc:
        raise SigningError(f"cannot write {exc.filename}: {exc.strerror or exc}") from None
    return SigningKey(key, str(private_path))
