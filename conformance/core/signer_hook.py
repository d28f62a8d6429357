"""The profile's ``auth.signer`` hook: a Python function that signs requests another way.

``auth.signer = "package.module:function"`` names it. The module is imported from the
profile file's folder first, then from the Python path. The function is called as
``function(request, credential)`` with a ``signing.SigningInput`` (method, target, path,
query, host, body bytes, timestamp, nonce, api_key) and the ``Credential`` (``api_key``,
``api_secret``) and returns the request's authentication headers as a mapping of names to
strings. Reports record its name and the SHA-256 of its module file.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

from conformance.core.signing import SignerHook


class SignerHookLoadError(ValueError):
    """The hook cannot be loaded; the message names ``auth.signer`` and the reason."""


@dataclass(frozen=True)
class LoadedHook:
    name: str  # as the profile gives it, "package.module:function"
    module_file: str
    sha256: str  # of the module file
    function: SignerHook = field(repr=False, compare=False)


def load_hook(spec: str, profile_dir: Path) -> LoadedHook:
    """Import ``spec``'s module (from ``profile_dir`` first) and return its function."""
    module_name, _, function_name = spec.partition(":")
    where = f"auth.signer {spec!r}"
    added = str(profile_dir.resolve())
    sys.path.insert(0, added)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise SignerHookLoadError(
            f"{where}: no module named {exc.name!r} in the profile's folder ({added}) or on "
            "the Python path"
        ) from None
    except Exception as exc:  # the module's own code failed: name it, no traceback
        raise SignerHookLoadError(
            f"{where}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from None
    finally:
        if added in sys.path:
            sys.path.remove(added)
    function = getattr(module, function_name, None)
    if not callable(function):
        raise SignerHookLoadError(
            f"{where}: module {module_name!r} has no function {function_name!r}"
        )
    module_file = getattr(module, "__file__", None)
    if not module_file:
        raise SignerHookLoadError(f"{where}: module {module_name!r} has no source file to record")
    try:
        digest = hashlib.sha256(Path(module_file).read_bytes()).hexdigest()
    except OSError as exc:
        raise SignerHookLoadError(f"{where}: cannot read {module_file}: {exc.strerror}") from None
    return LoadedHook(spec, module_file, digest, function)
