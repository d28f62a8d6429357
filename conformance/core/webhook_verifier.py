"""The profile's webhook verifier hook: ``webhooks.verifier = "package.module:function"``.

For a signing scheme ``[webhooks.signing]`` cannot describe, the suite calls
``function(headers, body, secret)`` for each delivery and each secret the endpoint may have
signed it with: ``headers`` maps lower-case header names to values, ``body`` is the raw bytes,
``secret`` the endpoint secret as rotate-secret returned it. ``True``: the delivery was signed
with that secret; ``False`` or an exception: it was not. The module is imported as Python
normally finds it, or from the profile file's directory. Reports name the hook and the SHA-256
of its module file.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from conformance.core import hook_calls

Verify = Callable[[Mapping[str, str], bytes, str], object]

_REFERENCE = re.compile(
    r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$"
)


class VerifierError(ValueError):
    """The hook cannot be used; the message names webhooks.verifier and why."""


@dataclass(frozen=True)
class Verifier:
    name: str  # "package.module:function"
    sha256: str  # of the module's file ("" when it has none)
    function: Verify

    def verifies(self, headers: Mapping[str, str], body: bytes, secret: str) -> tuple[bool, str]:
        """(whether the hook says ``secret`` signed the delivery, why not when it raised)."""
        call = hook_calls.call_hook(self.function, dict(headers), body, secret)
        if call.timed_out:
            return False, f"{self.name} did not answer within {hook_calls.HOOK_TIMEOUT_S:g} s"
        if call.error is not None:  # the hook's way to say "no"
            return False, f"{self.name} raised {type(call.error).__name__}"
        return call.value is True, ""

    @property
    def recorded(self) -> str:
        return f"{self.name} (sha256 {self.sha256 or 'unknown: no module file'})"


def load_verifier(reference: str, profile_dir: Path | None = None) -> Verifier:
    """Import the hook ``reference`` names; VerifierError with a one-line reason otherwise."""
    where = f"webhooks.verifier {reference!r}"
    if not _REFERENCE.match(reference):
        raise VerifierError(f"{where}: must be 'package.module:function'")
    module_name, _, function_name = reference.partition(":")
    added = profile_dir is not None and str(profile_dir) not in sys.path
    if added:
        sys.path.insert(0, str(profile_dir))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a missing module, or one that fails on import
        raise VerifierError(
            f"{where}: cannot import {module_name}: {type(exc).__name__}: {_short(exc)}"
        ) from None
    finally:
        if added:
            sys.path.remove(str(profile_dir))
    function = getattr(module, function_name, None)
    if not callable(function):
        raise VerifierError(f"{where}: {module_name} has no function {function_name}")
    source = getattr(module, "__file__", None)
    digest = ""
    if source:
        try:
            digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
        except OSError as exc:
            raise VerifierError(f"{where}: cannot read {source}: {exc.strerror}") from None
    return Verifier(reference, digest, function)


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text[:200]
