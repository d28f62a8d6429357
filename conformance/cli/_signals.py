"""SIGTERM handled as Ctrl-C, so that a command stopped by a supervisor cleans up."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """In the block, SIGTERM raises KeyboardInterrupt in the main thread as Ctrl-C does, so
    every ``finally`` and ``with`` on the way out runs (the embedded server stops, temporary
    directories go). Only the first one raises: a second would interrupt that cleanup. Code
    inside may install its own handler for a while (the runner does); the previous handler
    is restored at the end."""
    raised = False

    def interrupt(signum: int, frame: FrameType | None) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
