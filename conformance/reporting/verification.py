"""Check a report directory offline: every file's hash, no file missing or added, the signature.

What counts as tampering (``Verification.problems``, the report is not verified):

- a file the manifest lists is missing or its SHA-256 differs;
- a file or directory the manifest does not list is in the directory: it is not covered by the
  hashes or the signature, so it could be presented as part of the evidence without being so;
  keep other files next to the report directory, not in it;
- the manifest is not a manifest (not JSON, fields missing), or names a path instead of a file;
- the signature (manifest.sig) does not verify, with the given public key or, without one, the
  key the manifest records; manifest.sig without a key in the manifest or the reverse;
- results.json disagrees with the manifest on what was tested (suite, contract, profile, seed,
  verdict, waivers), which a signed manifest rules out unless the signer signed a mismatch.

An unsigned report (no manifest.sig, no key in the manifest) is not verified either, unless
the caller allows it: its hashes prove nothing, since anyone can rewrite the manifest too.

The directory may come from anyone, so only regular files inside it are read (never through a
symbolic link, never a named pipe or a device), each bounded in size, and its JSON is parsed
with bounded nesting (``core.untrusted_files``). Anything else is refused: ``CannotVerify``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from conformance.core import jsonsafe, untrusted_files
from conformance.core.untrusted_files import UntrustedFileError
from conformance.reporting import json_report, load, manifest, signing

MAX_MANIFEST_BYTES = manifest.MAX_BYTES
# manifest.sig holds one base64 Ed25519 signature: under 100 bytes.
MAX_SIGNATURE_BYTES = 64 * 1024
# The largest file a run writes is results.json (``load.MAX_BYTES`` says why that bound).
MAX_REPORT_FILE_BYTES = load.MAX_BYTES


class CannotVerify(Exception):
    """Nothing to verify: no manifest in the directory, or not a directory; or a file of it
    refused (not a regular file, larger than any a run writes, JSON nested too deep)."""


@dataclass
class Verification:
    directory: Path
    manifest: dict[str, Any] = field(default_factory=dict)
    files_checked: int = 0
    problems: list[str] = field(default_factory=list)
    signed: bool = False
    signature_valid: bool = False
    key_fingerprint: str | None = None
    key_from_report: bool = False  # the key came from the manifest: integrity, not origin

    @property
    def verified(self) -> bool:
        return not self.problems


def _manifest(directory: Path) -> tuple[bytes, dict[str, Any]]:
    if not directory.is_dir():
        raise CannotVerify(f"{directory} is not a directory")
    path = directory / manifest.FILENAME
    if not os.path.lexists(path):
        raise CannotVerify(f"{path} does not exist: not a report directory, or not one of a run")
    data = _read(path, MAX_MANIFEST_BYTES)
    try:
        document = jsonsafe.loads(data, max_bytes=MAX_MANIFEST_BYTES)
    except jsonsafe.JsonTooComplex as exc:
        raise CannotVerify(f"{path}: {exc}") from None
    except ValueError:  # not UTF-8 or not JSON: a problem, reported with the others
        document = None
    return data, document if isinstance(document, dict) else {}


def _read(path: Path, max_bytes: int) -> bytes:
    try:
        return untrusted_files.read_bytes(path, max_bytes=max_bytes, follow_symlinks=False)
    except UntrustedFileError as exc:
        raise CannotVerify(str(exc)) from None


def _check_files(result: Verification) -> None:
    directory, files = result.directory, result.manifest.get("files")
    if not isinstance(files, dict) or not files:
        result.problems.append(f"{manifest.FILENAME}: not a manifest (no list of files)")
        return
    for name, entry in files.items():
        if Path(name).name != name or name in ("", ".", ".."):
            result.problems.append(f"{manifest.FILENAME}: {name!r} is not a plain file name")
            continue
        expected = entry.get("sha256") if isinstance(entry, dict) else None
        path = directory / name
        if not os.path.lexists(path):
            result.problems.append(f"{name}: is missing (No such file or directory)")
            continue
        try:
            actual = untrusted_files.sha256(
                path, max_bytes=MAX_REPORT_FILE_BYTES, follow_symlinks=False
            )
        except UntrustedFileError as exc:
            raise CannotVerify(str(exc)) from None
        result.files_checked += 1
        if actual != expected:
            result.problems.append(
                f"{name}: SHA-256 {actual} differs from the manifest's {expected}"
            )
    known = {*files, manifest.FILENAME, signing.SIGNATURE_FILENAME}
    for extra in sorted(p.name for p in directory.iterdir() if p.name not in known):
        result.problems.append(f"{extra}: not listed in the manifest (not covered by it)")


def _check_signature(
    result: Verification, data: bytes, public_key: Ed25519PublicKey | None, allow_unsigned: bool
) -> None:
    recorded = result.manifest.get("signature")
    sig_path = result.directory / signing.SIGNATURE_FILENAME
    result.signed = os.path.lexists(sig_path)
    signature = _read(sig_path, MAX_SIGNATURE_BYTES) if result.signed else b""
    if not result.signed:
        if recorded is not None:
            result.problems.append(
                f"{signing.SIGNATURE_FILENAME}: missing, though the manifest says it is signed"
            )
        elif public_key is not None:
            result.problems.append("the report is not signed (no manifest.sig), so no key fits")
        elif not allow_unsigned:
            result.problems.append(
                "the report is not signed (no manifest.sig): its hashes alone prove nothing, "
                "anyone can rewrite the manifest"
            )
        return
    recorded_key = None
    if isinstance(recorded, dict) and isinstance(recorded.get("public_key"), str):
        try:
            recorded_key = signing.public_key_from_text(recorded["public_key"])
        except signing.SigningError as exc:
            result.problems.append(f"{manifest.FILENAME}: the recorded public key is {exc}")
    key = public_key or recorded_key
    if key is None:
        if recorded_key is None and not result.problems:
            result.problems.append(
                f"{manifest.FILENAME}: records no public key; give the signer's with --public-key"
            )
        return
    result.key_from_report = public_key is None
    result.key_fingerprint = signing.fingerprint(key)
    result.signature_valid = signing.signature_valid(key, data, signature)
    if not result.signature_valid:
        whose = "the given public key" if public_key is not None else "the key the manifest names"
        result.problems.append(
            f"{signing.SIGNATURE_FILENAME}: the signature of {manifest.FILENAME} does not verify "
            f"with {whose} ({result.key_fingerprint})"
        )
    elif recorded_key is not None and signing.fingerprint(recorded_key) != result.key_fingerprint:
        result.problems.append(
            f"{manifest.FILENAME}: names key {signing.fingerprint(recorded_key)}, but the "
            f"signature is by {result.key_fingerprint}"
        )


def _check_results(result: Verification) -> None:
    """results.json says what the manifest says was tested (both hashed; here: consistent)."""
    path = result.directory / json_report.FILENAME
    if not os.path.lexists(path):
        return  # a missing results.json is already a problem of its hash
    try:
        document = untrusted_files.read_json(
            path, max_bytes=MAX_REPORT_FILE_BYTES, max_values=load.MAX_VALUES, follow_symlinks=False
        )
    except UntrustedFileError as exc:
        raise CannotVerify(str(exc)) from None
    except ValueError:
        return  # an edited results.json is already a problem of its hash
    if not isinstance(document, dict):
        return
    m = result.manifest
    pairs = [
        ("suite_version", document.get("suite_version"), m.get("suite_version")),
        ("contract_sha256", document.get("contract_sha256"), m.get("contract_sha256")),
        ("profile", document.get("profile"), m.get("profile")),
        ("seed", document.get("seed"), m.get("seed")),
        ("verdict", document.get("verdict"), m.get("verdict")),
        ("waivers", document.get("waivers"), m.get("waivers")),
    ]
    for name, in_results, in_manifest in pairs:
        if in_results != in_manifest:
            result.problems.append(
                f"{json_report.FILENAME}: {name} {in_results!r} differs from the manifest's "
                f"{in_manifest!r}"
            )


def verify_directory(
    directory: Path, public_key: Ed25519PublicKey | None = None, *, allow_unsigned: bool = False
) -> Verification:
    """Check ``directory`` against its manifest; raises ``CannotVerify`` when there is none."""
    data, document = _manifest(directory)
    result = Verification(directory, document)
    if not document:
        result.problems.append(f"{manifest.FILENAME}: not a manifest (not a JSON object)")
    _check_files(result)
    _check_signature(result, data, public_key, allow_unsigned)
    _check_results(result)
    return result
