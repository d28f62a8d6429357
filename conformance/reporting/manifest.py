"""manifest.json: the SHA-256 of every report file and what the run tested.

An auditor recomputes the hashes (``sha256sum``, or ``verify`` below) to check that no report
file was altered after the run; the contract and profile hashes say what the run checked
against.

A signed run (``run --sign-key``) adds ``signature``: the algorithm, the public key and its
fingerprint; the signature of the manifest's bytes is in manifest.sig (``signing``). A run with
``--waivers`` adds ``waivers``: the waivers file's SHA-256 and every waiver with what it did.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.core import untrusted_files
from conformance.core.untrusted_files import UntrustedFileError
from conformance.reporting import load, signing, waivers
from conformance.reporting.view import RunView

FILENAME = "manifest.json"
MANIFEST_VERSION = "1.0"
# A manifest lists a run's four report files and what was tested: about 1 KB.
MAX_BYTES = 1024 * 1024


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render(
    view: RunView, files: Mapping[str, bytes], signer: signing.SigningKey | None = None
) -> str:
    """The manifest of ``files`` (name -> exact bytes written), in the order given; with
    ``signer``, naming the key that signs it (the signature itself goes to manifest.sig)."""
    document: dict[str, Any] = {
        "manifest_version": MANIFEST_VERSION,
        "suite_version": view.suite_version,
        "contract_sha256": view.contract_sha256,
        "profile": {"name": view.profile_name, "sha256": view.profile_sha256},
        "seed": view.seed,
        "started_at": view.started_at,
        "target": view.target,
        "verdict": view.verdict,
        **({"tls_verified": False} if view.insecure else {}),
        **({"warnings": list(view.warnings)} if view.warnings else {}),
        **_shards(view),
        **({"waivers": waivers.as_dict(view.waivers)} if view.waivers is not None else {}),
        "files": {
            name: {"sha256": sha256(data), "bytes": len(data)} for name, data in files.items()
        },
    }
    if signer is not None:
        document["signature"] = {
            "algorithm": signing.ALGORITHM,
            "file": signing.SIGNATURE_FILENAME,
            "public_key": signing.public_key_text(signer.public_key),
            "public_key_fingerprint": signer.fingerprint,
        }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _shards(view: RunView) -> dict[str, Any]:
    """A merged run's shards: how many, those merged unsigned, the key the others were
    verified with."""
    options = dict(view.options)
    if "shards" not in options:
        return {}
    unsigned = options.get("unsigned_shards", "")
    return {
        "shards": {
            "count": int(options["shards"]),
            "unsigned": [s for s in unsigned.split(", ") if s],
            "signed_by": options.get("shards_signed_by"),
        }
    }


def verify(directory: Path) -> list[str]:
    """Problems found checking ``directory`` against its manifest.json; [] when all is intact.

    Reads only regular files inside ``directory`` (no symbolic link, pipe or device), each
    bounded: the manifest by ``MAX_BYTES``, the files it lists by ``load.MAX_BYTES``."""
    try:
        manifest = untrusted_files.read_json(
            directory / FILENAME, max_bytes=MAX_BYTES, follow_symlinks=False
        )
        files = manifest["files"]
        entries = [(str(name), str(entry["sha256"])) for name, entry in files.items()]
    except (UntrustedFileError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return [f"{directory / FILENAME}: not a readable manifest ({exc})"]
    problems = []
    for name, expected in entries:
        path = directory / name
        if Path(name).name != name:
            problems.append(f"{name}: not a plain file name")
            continue
        try:
            actual = untrusted_files.sha256(path, max_bytes=load.MAX_BYTES, follow_symlinks=False)
        except UntrustedFileError as exc:
            problems.append(f"{name}: cannot be read ({exc})")
            continue
        if actual != expected:
            problems.append(f"{name}: SHA-256 {actual} differs from the manifest's {expected}")
    return problems
