"""``--workers auto``: how many test processes suit this machine and this server.

Chosen after preflight, from the cores this process may use and the median round trip of
preflight's requests. A process waits on the network for a round trip per request and works
on the CPU for a few milliseconds (signing, generating, validating): the longer the round trip,
the more processes one core keeps busy. Against a local server (a round trip of a millisecond
or two) the CPU is the limit, and a process more than there are cores only costs CPU time (on
2 cores: 8 processes 47 s of CPU against 28 s for 2, and no faster). Each process also pays its
own start-up (imports, collection), so more than ``MAX_AUTO_WORKERS`` never pay off.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

# The round trip that keeps one more process per core busy: a process spends about this long
# on the CPU per request (measured; see the README's latency table).
CPU_MS_PER_REQUEST = 10.0
MAX_AUTO_WORKERS = 8
MAX_LOCAL_WORKERS = 2  # the embedded reference server is one process: more do not help it


@dataclass(frozen=True)
class WorkersChoice:
    """What ``auto`` picked, and why (shown in the console and recorded in the reports)."""

    workers: int
    why: str

    def line(self) -> str:
        return f"workers: {self.workers} (auto: {self.why})"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, else every core)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def choose_workers(
    cores: int,
    round_trip_ms: float,
    *,
    embedded: bool = False,
    rate_limit: float | None = None,
) -> WorkersChoice:
    """Processes for ``cores`` cores and a server ``round_trip_ms`` away: one per core when it
    answers at once, one more per core for every ``CPU_MS_PER_REQUEST`` of round trip.

    Under ``run --rate-limit N/s`` the run cannot go faster than N requests a second, so no
    more processes than it takes to send that many (but still one per core, which the checks
    that wait, for a webhook or an expiry, use): more would only wait for send slots, and
    against a server that limits by API key, meet more 429s (measured: 8 processes 80 s and
    405 429s, 2 processes 73 s and 31)."""
    per_core = 1 + int(max(round_trip_ms, 0.0) // CPU_MS_PER_REQUEST)
    workers = min(cores * per_core, MAX_AUTO_WORKERS)
    if embedded and round_trip_ms < CPU_MS_PER_REQUEST:
        workers = min(workers, MAX_LOCAL_WORKERS)
    plural = "core" if cores == 1 else "cores"
    why = f"{cores} {plural}, {round_trip_ms:.0f} ms round trip"
    if rate_limit is not None:
        busy_s = (max(round_trip_ms, 0.0) + CPU_MS_PER_REQUEST) / 1000
        enough = max(cores, math.ceil(rate_limit * busy_s))
        if enough < workers:
            workers = enough
        why += f", --rate-limit {rate_limit:g}/s"
    return WorkersChoice(max(workers, 1), why)
