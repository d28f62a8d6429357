"""``verify``: check a report directory offline, and ``keygen``: make a key pair to sign with.

``verify`` exit codes: 0 verified; 1 not verified (a file changed, missing or added, a bad or
missing signature, or none without ``--allow-unsigned``); 2 cannot verify (no manifest, bad
arguments, unreadable key, or a file refused unread: not a regular file inside the directory,
larger than any report file, JSON nested too deep; docs/verify.md).
"""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli import exit_codes
from conformance.cli._common import fail
from conformance.cli.waivers import manifest_lines
from conformance.core.untrusted import for_terminal
from conformance.reporting import signing
from conformance.reporting.verification import CannotVerify, Verification, verify_directory

NOT_VERIFIED = 1


def _tested(result: Verification) -> list[tuple[str, str]]:
    m = result.manifest
    found = m.get("profile")
    profile: dict[str, object] = found if isinstance(found, dict) else {}
    return [
        ("suite version", str(m.get("suite_version", "?"))),
        ("contract sha256", str(m.get("contract_sha256", "?"))),
        ("profile", str(profile.get("name", "?"))),
        ("profile sha256", str(profile.get("sha256", "?"))),
        ("seed", str(m.get("seed", "?"))),
        ("started", str(m.get("started_at", "?"))),
        ("target", str(m.get("target", "?"))),
        ("verdict", str(m.get("verdict", "?"))),
    ]


def _signature_line(result: Verification) -> str:
    recorded = result.manifest.get("signature")
    if not result.signed:
        if recorded is None:
            return "unsigned (no manifest.sig, no key in the manifest)"
        return "missing (the manifest names a key, but there is no manifest.sig)"
    if result.key_fingerprint is None:  # no key to check manifest.sig with
        if isinstance(recorded, dict) and isinstance(recorded.get("public_key"), str):
            return "not checked (the key the manifest records is unusable)"
        return (
            "unsigned (the manifest records no key, so manifest.sig is not checked; give the "
            "signer's key with --public-key)"
        )
    if not result.signature_valid:
        return "INVALID"
    if result.key_from_report:
        return (
            f"valid, by key {result.key_fingerprint}, the key the report records: this proves "
            "the files are unchanged since signing, not who signed them (give the signer's "
            "key with --public-key for that)"
        )
    return f"valid, by the given public key {result.key_fingerprint}"


@click.command(epilog=exit_codes.VERIFY)
@click.argument("report_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--public-key",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The signer's Ed25519 public key (PEM). Without it the key the manifest records is "
    "used, which proves integrity only, not who signed.",
)
@click.option(
    "--allow-unsigned",
    is_flag=True,
    help="Accept a report without signature when its hashes match (integrity against "
    "accidents only: anyone can rewrite an unsigned manifest).",
)
def verify(report_dir: Path, public_key: Path | None, allow_unsigned: bool) -> None:
    """Check a report directory: file hashes, no file missing or added, and the signature."""
    key = None
    if public_key is not None:
        try:
            key = signing.load_public_key(public_key)
        except signing.SigningError as exc:
            fail(for_terminal(str(exc)))
    try:
        result = verify_directory(report_dir, key, allow_unsigned=allow_unsigned)
    except CannotVerify as exc:
        fail(for_terminal(str(exc)))
    click.echo(f"report: {for_terminal(str(report_dir))}")
    for name, value in _tested(result):
        click.echo(f"{name}: {for_terminal(value)}")
    for line in manifest_lines(result.manifest):
        click.echo(line)
    click.echo(f"files: {result.files_checked} checked against the manifest")
    click.echo(f"signature: {_signature_line(result)}")
    if result.verified:
        click.echo("VERIFIED")
        return
    click.echo(f"NOT VERIFIED: {len(result.problems)} problem(s)")
    for problem in result.problems:
        click.echo(f"- {for_terminal(problem)}")
    raise SystemExit(NOT_VERIFIED)


@click.command()
@click.argument("private_key", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("public_key", type=click.Path(path_type=Path, dir_okay=False))
def keygen(private_key: Path, public_key: Path) -> None:
    """Make an Ed25519 key pair (PEM) for `run --sign-key`; never overwrites a file.

    The same as `openssl genpkey -algorithm ed25519 -out PRIVATE.pem` and
    `openssl pkey -in PRIVATE.pem -pubout -out PUBLIC.pem`.
    """
    try:
        key = signing.generate(private_key, public_key)
    except signing.SigningError as exc:
        fail(for_terminal(str(exc)))
    click.echo(f"private key: {for_terminal(str(private_key))} (keep it secret)")
    click.echo(f"public key:  {for_terminal(str(public_key))} (give it to your auditors)")
    click.echo(f"fingerprint: {key.fingerprint}")
