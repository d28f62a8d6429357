"""Calling a profile's Python hook (``auth.signer``, ``webhooks.verifier``) with a time limit.

A hook is the implementer's code: it may raise anything or never return. It runs in a daemon
thread that the caller waits on for at most ``HOOK_TIMEOUT_S``; a hook still running then is
left behind (a daemon thread does not keep the process alive) and the call is reported as
unanswered, so a hook that hangs costs one timeout per call, never the run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

HOOK_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class HookCall:
    value: Any = None
    error: BaseException | None = None  # what the hook raised
    timed_out: bool = False


def call_hook(function: Callable[..., Any], *args: Any) -> HookCall:
    """``function(*args)`` in a daemon thread, waited on for ``HOOK_TIMEOUT_S``."""
    outcome: list[HookCall] = []

    def target() -> None:
        try:
            outcome.append(HookCall(value=function(*args)))
        except BaseException as exc:  # SystemExit from user code is its answer too
            outcome.append(HookCall(error=exc))

    thread = threading.Thread(target=target, name="profile-hook", daemon=True)
    thread.start()
    thread.join(HOOK_TIMEOUT_S)
    return outcome[0] if outcome else HookCall(timed_out=True)
