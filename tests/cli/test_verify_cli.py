"""``run --sign-key``, ``verify`` and ``keygen``: evidence an auditor checks offline.

One real signed run (embedded server with a fault, so a failure is in the evidence) is made
once; each test tampers with its own copy of the report directory.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from conformance.cli import main
from conformance.reporting import signing, verification

REPORT_FILES = ("report.html", "junit.xml", "ctrf.json", "results.json", "summary.md")


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("keys")
    paths = {}
    for who in ("signer", "other"):
        private, public = directory / f"{who}.pem", directory / f"{who}.pub.pem"
        result = cli("keygen", str(private), str(public))
        assert result.exit_code == 0, result.output
        paths[who], paths[f"{who}.pub"] = private, public
    return paths


@pytest.fixture(scope="module")
def signed_run(tmp_path_factory: pytest.TempPathFactory, keys: dict[str, Path]) -> Path:
    directory = tmp_path_factory.mktemp("run") / "reports"
    result = cli(
        "run", "--no-progress", "--quick", "--only", "AUTH-013", "--seed", "3",
        "--fault", "auth-bad-signature-403", "--workers", "1",
        "--report-dir", str(directory), "--sign-key", str(keys["signer"]),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    return directory


@pytest.fixture
def report_dir(signed_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "evidence"
    shutil.copytree(signed_run, copy)
    return copy


def verify(report_dir: Path, *args: str) -> Result:
    return cli("verify", str(report_dir), *args)


def resign(report_dir: Path, key_path: Path, *, record_key: bool) -> None:
    """Sign manifest.json again with ``key_path``, optionally recording that key in it."""
    key = signing.load_private_key(key_path)
    path = report_dir / "manifest.json"
    if record_key:
        document = json.loads(path.read_text(encoding="utf-8"))
        document["signature"]["public_key"] = signing.public_key_text(key.public_key)
        document["signature"]["public_key_fingerprint"] = key.fingerprint
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    (report_dir / "manifest.sig").write_text(signing.signature_text(key, path.read_bytes()))


@pytest.mark.slow
def test_an_untouched_signed_report_is_verified_and_says_what_was_tested(
    report_dir: Path, keys: dict[str, Path]
) -> None:
    result = verify(report_dir)
    assert result.exit_code == 0, result.output
    manifest = json.loads((report_dir / "manifest.json").read_text(encoding="utf-8"))
    for line in (
        f"suite version: {manifest['suite_version']}",
        f"contract sha256: {manifest['contract_sha256']}",
        f"profile: {manifest['profile']['name']}",
        f"profile sha256: {manifest['profile']['sha256']}",
        "seed: 3",
        "with reference fault auth-bad-signature-403",
        "verdict: NOT CONFORMANT",
        "files: 5 checked",
    ):
        assert line in result.output
    assert "the key the report records" in result.output
    assert "not who signed them" in result.output
    assert result.output.rstrip().endswith("VERIFIED")


@pytest.mark.slow
def test_the_signers_public_key_proves_origin_too(report_dir: Path, keys: dict[str, Path]) -> None:
    result = verify(report_dir, "--public-key", str(keys["signer.pub"]))
    assert result.exit_code == 0, result.output
    fingerprint = signing.load_private_key(keys["signer"]).fingerprint
    assert f"valid, by the given public key {fingerprint}" in result.output


@pytest.mark.slow
def test_the_manifest_records_the_key_and_reports_never_hold_the_private_key(
    signed_run: Path, keys: dict[str, Path]
) -> None:
    key = signing.load_private_key(keys["signer"])
    manifest = json.loads((signed_run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["signature"]["public_key_fingerprint"] == key.fingerprint
    assert set(manifest["files"]) == set(REPORT_FILES)
    private_pem = keys["signer"].read_text(encoding="ascii")
    secret_lines = [line for line in private_pem.splitlines() if "-----" not in line]
    raw = key.private_key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    for path in signed_run.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not any(line in text for line in secret_lines), path.name
        assert base64.b64encode(raw).decode() not in text and raw.hex() not in text, path.name


def _flip_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle] = ord("X") if data[middle] != ord("X") else ord("Y")
    path.write_bytes(bytes(data))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["report.html", "results.json", "junit.xml", "summary.md"])
def test_a_file_edited_by_one_byte_is_not_verified(report_dir: Path, name: str) -> None:
    _flip_one_byte(report_dir / name)
    result = verify(report_dir)
    assert result.exit_code == 1, result.output
    assert f"- {name}: SHA-256" in result.output
    assert "NOT VERIFIED" in result.output


@pytest.mark.slow
def test_a_deleted_file_is_not_verified(report_dir: Path) -> None:
    (report_dir / "junit.xml").unlink()
    result = verify(report_dir)
    assert result.exit_code == 1
    assert "- junit.xml: is missing" in result.output


@pytest.mark.slow
def test_an_added_file_is_not_verified(report_dir: Path) -> None:
    (report_dir / "report-fixed.html").write_text("<p>CONFORMANT</p>")
    result = verify(report_dir)
    assert result.exit_code == 1
    assert "- report-fixed.html: not listed in the manifest" in result.output


@pytest.mark.slow
def test_an_edited_manifest_is_not_verified(report_dir: Path) -> None:
    # the forger also fixes the hash of the file they edited: only the signature catches it
    _flip_one_byte(report_dir / "report.html")
    path = report_dir / "manifest.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    digest = hashlib.sha256((report_dir / "report.html").read_bytes()).hexdigest()
    document["files"]["report.html"]["sha256"] = digest
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    result = verify(report_dir)
    assert result.exit_code == 1, result.output
    assert "report.html: SHA-256" not in result.output  # the hashes now agree
    assert "manifest.sig: the signature of manifest.json does not verify" in result.output


@pytest.mark.slow
def test_a_signature_by_another_key_is_not_verified(
    report_dir: Path, keys: dict[str, Path]
) -> None:
    resign(report_dir, keys["other"], record_key=False)
    result = verify(report_dir)
    assert result.exit_code == 1
    assert "does not verify with the key the manifest names" in result.output


@pytest.mark.slow
def test_a_forger_recording_their_own_key_passes_only_without_the_signers_key(
    report_dir: Path, keys: dict[str, Path]
) -> None:
    resign(report_dir, keys["other"], record_key=True)
    unanchored = verify(report_dir)
    assert unanchored.exit_code == 0  # integrity only: this is why --public-key exists
    assert "not who signed them" in unanchored.output
    anchored = verify(report_dir, "--public-key", str(keys["signer.pub"]))
    assert anchored.exit_code == 1
    assert "does not verify with the given public key" in anchored.output


@pytest.mark.slow
def test_a_wrong_public_key_is_not_verified(report_dir: Path, keys: dict[str, Path]) -> None:
    result = verify(report_dir, "--public-key", str(keys["other.pub"]))
    assert result.exit_code == 1
    fingerprint = signing.load_private_key(keys["other"]).fingerprint
    assert f"does not verify with the given public key ({fingerprint})" in result.output


@pytest.mark.slow
def test_an_unsigned_report_is_verified_only_when_allowed(report_dir: Path) -> None:
    (report_dir / "manifest.sig").unlink()
    path = report_dir / "manifest.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    del document["signature"]
    path.write_text(json.dumps(document), encoding="utf-8")
    refused = verify(report_dir)
    assert refused.exit_code == 1
    assert "the report is not signed" in refused.output
    allowed = verify(report_dir, "--allow-unsigned")
    assert allowed.exit_code == 0, allowed.output
    assert "signature: unsigned" in allowed.output


@pytest.mark.slow
def test_a_deleted_signature_is_not_verified(report_dir: Path) -> None:
    (report_dir / "manifest.sig").unlink()
    result = verify(report_dir, "--allow-unsigned")
    assert result.exit_code == 1
    assert "manifest.sig: missing, though the manifest says it is signed" in result.output


def test_no_manifest_cannot_be_verified(tmp_path: Path) -> None:
    result = verify(tmp_path)
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and "manifest.json does not exist" in result.output


def test_a_bad_public_key_file_cannot_be_verified(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_text("not a key")
    result = verify(tmp_path, "--public-key", str(key))
    assert result.exit_code == 2
    assert "is not a PEM public key" in result.output


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_a_public_key_that_is_not_a_regular_file_is_refused_unread(
    tmp_path: Path, target: str
) -> None:
    directory = _evidence(tmp_path, **{"summary.md": b"# summary\n"})
    key = tmp_path / "signer.pub.pem"
    if target == "fifo":
        os.mkfifo(key)
    else:
        key.symlink_to(target)
    result = subprocess.run(
        [sys.executable, "-m", "conformance", "verify", str(directory), "--public-key", str(key)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    kind = "a named pipe" if target == "fifo" else "a character device"
    assert (
        result.stderr == f"error: cannot read the public key: {key} is {kind}, not a regular file\n"
    )


def _rsa_key(path: Path) -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def _bad_key(kind: str, directory: Path) -> Path:
    path = directory / f"{kind}.pem"
    if kind == "junk":
        path.write_text("-----BEGIN PRIVATE KEY-----\nzz\n-----END PRIVATE KEY-----\n")
    elif kind == "rsa":
        _rsa_key(path)
    elif kind == "encrypted":
        key = Ed25519PrivateKey.generate()
        encryption = serialization.BestAvailableEncryption(b"passphrase")
        path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
            )
        )
    return path  # "absent": not written


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("absent", "cannot read the signing key"),
        ("junk", "is not a PEM private key"),
        ("rsa", "not an Ed25519 key"),
        ("encrypted", "is encrypted"),
    ],
)
def test_a_bad_sign_key_stops_run_before_it_starts(kind: str, message: str, tmp_path: Path) -> None:
    key = _bad_key(kind, tmp_path)
    out = tmp_path / "reports"
    result = cli("run", "--no-progress", "--quick", "--only", "AUTH-001",
                 "--report-dir", str(out), "--sign-key", str(key))  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and message in result.output
    assert "Traceback" not in result.output
    assert not out.exists()  # nothing ran, nothing was written
    assert "seed" not in result.output  # the run header was never printed


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(
    tmp_path: Path,
) -> None:
    private, public = tmp_path / "k.pem", tmp_path / "k.pub.pem"
    first = cli("keygen", str(private), str(public))
    assert first.exit_code == 0, first.output
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert "PRIVATE KEY" not in first.output
    key = signing.load_private_key(private)
    assert signing.fingerprint(signing.load_public_key(public)) == key.fingerprint
    assert key.fingerprint in first.output
    before = private.read_bytes()
    again = cli("keygen", str(private), str(tmp_path / "new.pub.pem"))
    assert again.exit_code == 2 and "exists already" in again.output
    assert private.read_bytes() == before
    assert str(key.private_key) not in repr(key) and "SigningKey(" in repr(key)


# A report directory as a hostile party could hand it over: nothing in it was written by a run,
# so these need no real run. ``verify`` reads only regular files inside the directory, each
# bounded, and refuses anything else with exit 2 and the file's name.


def _evidence(tmp_path: Path, **files: bytes) -> Path:
    """A directory whose unsigned manifest lists ``files`` with their true hashes."""
    directory = tmp_path / "evidence"
    directory.mkdir()
    listed = {}
    for name, data in files.items():
        (directory / name).write_bytes(data)
        listed[name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    manifest = {"suite_version": "x", "verdict": "CONFORMANT", "files": listed}
    (directory / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return directory


def _verify_in_a_process(directory: Path) -> subprocess.CompletedProcess[str]:
    """``verify`` in a child process: a test that hung would otherwise hang the test run."""
    return subprocess.run(
        [sys.executable, "-m", "conformance", "verify", str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("make", "refused"),
    [
        (lambda p: p.symlink_to("/dev/zero"), "summary.md is a symbolic link"),
        (lambda p: p.symlink_to(p.parent.parent / "elsewhere.md"), "summary.md is a symbolic link"),
        (lambda p: p.mkdir(), "summary.md is a directory"),
    ],
    ids=["to /dev/zero", "leaving the directory", "a directory"],
)
def test_a_listed_file_that_is_not_a_regular_file_is_refused_unread(
    tmp_path: Path, make: Callable[[Path], None], refused: str
) -> None:
    directory = _evidence(tmp_path, **{"summary.md": b"# summary\n"})
    (tmp_path / "elsewhere.md").write_bytes(b"# summary\n")
    (directory / "summary.md").unlink()
    make(directory / "summary.md")
    started = time.monotonic()
    result = verify(directory)
    assert time.monotonic() - started < 5
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {directory / 'summary.md'}")
    assert refused in result.output
    assert "Traceback" not in result.output


def test_a_named_pipe_in_the_directory_never_hangs_verify(tmp_path: Path) -> None:
    directory = _evidence(tmp_path, **{"summary.md": b"# summary\n"})
    (directory / "summary.md").unlink()
    os.mkfifo(directory / "summary.md")
    started = time.monotonic()
    result = _verify_in_a_process(directory)
    assert result.returncode == 2, result.stderr
    assert "summary.md is a named pipe" in result.stderr
    assert time.monotonic() - started < 30


def test_a_manifest_that_is_a_named_pipe_never_hangs_verify(tmp_path: Path) -> None:
    directory = _evidence(tmp_path, **{"summary.md": b"# summary\n"})
    (directory / "manifest.json").unlink()
    os.mkfifo(directory / "manifest.json")
    result = _verify_in_a_process(directory)
    assert result.returncode == 2, result.stderr
    assert "manifest.json is a named pipe" in result.stderr


def test_a_file_larger_than_any_report_is_refused_unread(tmp_path: Path) -> None:
    directory = _evidence(tmp_path, **{"summary.md": b"# summary\n"})
    with (directory / "summary.md").open("r+b") as sparse:
        sparse.truncate(verification.MAX_REPORT_FILE_BYTES + 1)  # no disk used, nothing read
    result = verify(directory)
    assert result.exit_code == 2, result.output
    assert "summary.md" in result.output and "larger than" in result.output


@pytest.mark.parametrize("name", ["manifest.json", "results.json"])
def test_deeply_nested_json_is_refused_with_exit_2_not_a_traceback(
    tmp_path: Path, name: str
) -> None:
    nested = b"[" * 100_000 + b"]" * 100_000
    directory = _evidence(tmp_path, **{"results.json": nested})
    if name == "manifest.json":
        (directory / "manifest.json").write_bytes(nested)
    result = verify(directory)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ")
    assert f"{name}: JSON text nests deeper than 256 levels" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_manifest_without_a_key_is_unsigned_not_invalid(tmp_path: Path) -> None:
    directory = _evidence(tmp_path, **{"summary.md": b"# summary\n"})
    (directory / "manifest.sig").write_text("c2lnbmF0dXJl\n")
    result = verify(directory)
    assert "signature: unsigned" in result.output
    assert "INVALID" not in result.output
    assert result.exit_code == 1  # manifest.sig cannot be checked without a key
    assert "records no public key; give the signer's with --public-key" in result.output


def test_an_intact_unsigned_directory_verifies_only_when_allowed(tmp_path: Path) -> None:
    directory = _evidence(tmp_path, **{"summary.md": b"# summary\n"})
    refused = verify(directory)
    assert refused.exit_code == 1
    assert "signature: unsigned (no manifest.sig, no key in the manifest)" in refused.output
    allowed = verify(directory, "--allow-unsigned")
    assert allowed.exit_code == 0, allowed.output
    assert allowed.output.rstrip().endswith("VERIFIED")
