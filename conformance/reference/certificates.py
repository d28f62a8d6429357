"""Throw-away certificates for trying the reference server's TLS mode (``serve --tls-cert``):
a private CA, a server certificate it signed for 127.0.0.1 and localhost, and a client
certificate for mutual TLS, written as PEM files. Never for a real deployment: the keys are
unencrypted and live two days.

``issue(directory)`` (or ``python -m conformance.reference.certificates DIR``) makes a fresh
set; every call makes a new CA, so a certificate of one set is never trusted by the CA of
another (a test of an untrusted certificate uses two sets).
"""

from __future__ import annotations

import datetime
import ipaddress
import sys
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID_FOR = datetime.timedelta(days=2)


@dataclass(frozen=True)
class CertFiles:
    ca: Path  # the private CA's certificate: what --cacert is given
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def _write_cert(cert: x509.Certificate, path: Path) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _leaf(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    common_name: str,
    usage: x509.ObjectIdentifier,
    now: datetime.datetime,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALID_FOR)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if usage == ExtendedKeyUsageOID.SERVER_AUTH:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    return builder.sign(ca_key, hashes.SHA256()), key


def issue(directory: Path) -> CertFiles:
    """A new CA, a server certificate for 127.0.0.1/localhost and a client certificate, all
    written to ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("payment-conformance test CA"))
        .issuer_name(_name("payment-conformance test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALID_FOR)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    server_cert, server_key = _leaf(
        ca_cert, ca_key, "127.0.0.1", ExtendedKeyUsageOID.SERVER_AUTH, now
    )
    client_cert, client_key = _leaf(
        ca_cert, ca_key, "payment-conformance client", ExtendedKeyUsageOID.CLIENT_AUTH, now
    )
    files = CertFiles(
        ca=directory / "ca.pem",
        server_cert=directory / "server.pem",
        server_key=directory / "server.key",
        client_cert=directory / "client.pem",
        client_key=directory / "client.key",
    )
    _write_cert(ca_cert, files.ca)
    _write_cert(server_cert, files.server_cert)
    _write_key(server_key, files.server_key)
    _write_cert(client_cert, files.client_cert)
    _write_key(client_key, files.client_key)
    return files


def main(argv: list[str] | None = None) -> int:
    """``python -m conformance.reference.certificates DIR``: a fresh set in DIR, its files
    listed."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m conformance.reference.certificates DIR", file=sys.stderr)
        return 2
    try:
        files = issue(Path(args[0]))
    except OSError as exc:
        print(f"error: cannot write the certificates to {args[0]}: {exc}", file=sys.stderr)
        return 2
    for name, path in vars(files).items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
