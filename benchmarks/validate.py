"""Throughput and memory of the passive validator on a generated recording.

    python -m benchmarks.validate [--exchanges 100000] [--keep FILE]

Records a template set of real traffic against the reference server (one valid request of
every operation, replays of an Idempotency-Key, state transitions, an x402 settlement, a nonce
sent twice), then writes a JSON Lines file of ``--exchanges`` exchanges cycling through the
templates, each copy with its own nonces, Idempotency-Keys and resource ids so the copies are
distinct traffic, not replays. It then validates the file in this process (one core) and prints
exchanges per second and the peak resident memory. Target: at least 5,000 exchanges/s.
Exit 1 when the target is missed or the verdict is not CONFORMANT.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from conformance.core.contract import effective_contract
from conformance.core.profile import Profile, load_profile
from conformance.core.redaction import REDACTED
from conformance.validator.exchange import Exchange

TARGET_PER_S = 5_000.0
DEFAULT_EXCHANGES = 100_000
_SUFFIX = 8  # hex digits of an identifier a copy rewrites


# -- traffic of the reference server ------------------------------------------------------------
def to_exchange(request: httpx.Request, response: httpx.Response | None, source: str) -> Exchange:
    """An httpx request and response as a recorded exchange."""
    return Exchange(
        method=request.method.upper(),
        url=str(request.url),
        request_headers=tuple(request.headers.multi_items()),
        request_body=request.content,
        status=None if response is None else response.status_code,
        response_headers=() if response is None else tuple(response.headers.multi_items()),
        response_body=b"" if response is None else response.content,
        source=source,
    )


def reference_traffic(base_url: str, profile: Profile, *, tag: str = "1") -> list[Exchange]:
    """A realistic session against the server at ``base_url``: every operation once with a
    valid request, an Idempotency-Key replayed and reused, payment, subscription and schedule
    transitions, an x402 settlement sent twice, an authentication nonce sent twice. ``tag``
    makes the session's fixed Idempotency-Key and nonce its own (sessions share nothing)."""
    from conformance.suite.factories import Factories
    from conformance.suite.tool_errors import PrerequisiteError
    from conformance.suite.wire.client import SuiteClient

    exchanges: list[Exchange] = []
    with SuiteClient(base_url, profile) as client:
        client.observers.append(
            lambda request, response: exchanges.append(
                to_exchange(request, response, f"reference line {len(exchanges) + 1}")
            )
        )
        factories = Factories(client, profile, effective_contract(profile))
        for operation_id in _operations(profile):
            try:
                factories.send(factories.request(operation_id))
            except (PrerequisiteError, KeyError):
                continue
        body = factories.payment_body()
        client.post("/v1/payments", json=body, idempotency_key=f"bench-replay-{tag}")
        client.post("/v1/payments", json=body, idempotency_key=f"bench-replay-{tag}")  # a replay
        other = factories.payment_body()
        client.post("/v1/payments", json=other, idempotency_key=f"bench-replay-{tag}")  # a reuse
        client.get("/v1/payments")
        payment = factories.create_payment()
        client.post(f"/v1/payments/{payment['id']}/cancel")
        client.get("/v1/payments", params={"merchant_order_no": payment["merchant_order_no"]})
        underpaid = factories.underpaid_payment()
        client.post(f"/v1/payments/{underpaid['id']}/accept-underpaid")
        client.get("/v1/payments", params={"merchant_order_no": underpaid["merchant_order_no"]})
        requirements = factories.x402_requirements("exact")
        settle = factories.settle_body(requirements)
        client.post("/v1/x402/settle", json=settle, idempotency_key=None)
        client.post("/v1/x402/settle", json=settle, idempotency_key=None)  # the same again
        nonce = twice_nonce(tag)
        client.get("/v1/payments", nonce=nonce)
        client.get("/v1/payments", nonce=nonce)  # refused: the nonce was used
    return exchanges


def twice_nonce(tag: str = "1") -> str:
    """The authentication nonce a session of ``reference_traffic`` sends twice."""
    return f"bench-nonce-{tag:0>10}"


def _operations(profile: Profile) -> list[str]:
    from conformance.core.catalogue import load_catalogue

    return list(load_catalogue().operations)


# -- the generated recording ----------------------------------------------------------------------
def _record(ex: Exchange) -> dict[str, Any]:
    def pairs(headers: tuple[tuple[str, str], ...]) -> list[list[str]]:
        return [[name, value] for name, value in headers]

    # As a recorder writes it: the signature masked (a copy's nonce and ids are rewritten, so
    # the original would not verify), sent when it was signed.
    headers = tuple(
        (n, REDACTED if n.lower() == "x-signature" else v) for n, v in ex.request_headers
    )
    stamp = ex.header("X-Timestamp")
    sent = datetime.fromtimestamp(int(stamp), UTC) if stamp and stamp.isdigit() else None
    record: dict[str, Any] = {
        "request": {
            "method": ex.method,
            "url": ex.url,
            "headers": pairs(headers),
            "body": ex.request_body.decode("utf-8"),
            "body_encoding": "utf-8",
        },
        "response": None,
        "started_at": sent.strftime("%Y-%m-%dT%H:%M:%SZ") if sent else "2026-01-01T00:00:00Z",
    }
    if ex.status is not None:
        record["response"] = {
            "status": ex.status,
            "headers": pairs(ex.response_headers),
            "body": ex.response_body.decode("utf-8"),
            "body_encoding": "utf-8",
        }
    return record


# Rewritten per copy: ids, and order numbers (a merchant's copies of one creation would
# otherwise be second payments with one merchant_order_no, which the validator fails, PAY-013).
_IDENTIFIER_KEYS = ("id", "payment_id", "nonce", "merchant_order_no")
_HEX_TAIL = re.compile(rf"[0-9a-fA-F]{{{_SUFFIX}}}$")


def _identifiers(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _IDENTIFIER_KEYS and isinstance(value, str) and len(value) > 2 * _SUFFIX:
                if _HEX_TAIL.search(value):
                    found.add(value)
            else:
                _identifiers(value, found)
    elif isinstance(node, list):
        for item in node:
            _identifiers(item, found)


def _template(ex: Exchange) -> tuple[str, list[str], list[str]]:
    """The exchange's JSON line and the identifiers and per-request values a copy rewrites."""
    found: set[str] = set()
    for raw in (ex.request_body, ex.response_body):
        with contextlib.suppress(ValueError):
            _identifiers(json.loads(raw), found)
    per_request = [
        value
        for name, value in ex.request_headers
        if name.lower() in ("x-nonce", "idempotency-key") and len(value) > _SUFFIX
    ]
    return json.dumps(_record(ex), separators=(",", ":")), sorted(found), per_request


def generate(path: Path, templates: list[Exchange], count: int) -> Path:
    """Write ``count`` exchanges to ``path``: copies of ``templates``, each round of copies
    with its own identifiers, each line with its own nonce and Idempotency-Key."""
    prepared = [_template(ex) for ex in templates]
    with path.open("w", encoding="utf-8") as out:
        for n in range(count):
            line, identifiers, per_request = prepared[n % len(prepared)]
            copy = f"{n // len(prepared):0{_SUFFIX}x}"
            for value in identifiers:
                line = line.replace(value, value[:-_SUFFIX] + copy)
            for value in per_request:
                line = line.replace(f'"{value}"', f'"{value[:-_SUFFIX]}{n:0{_SUFFIX}x}"')
            out.write(line + "\n")
    return path


def recorded_templates(profile: Profile) -> list[Exchange]:
    from conformance.reference.server import ReferenceServer

    with ReferenceServer(profile=profile) as server:
        traffic = reference_traffic(server.base_url, profile)
    # a copy of the nonce sent twice would replay it across copies: keep the first only
    twice = twice_nonce()
    return [ex for ex in traffic if ex.header("X-Nonce") != twice] + [
        ex for ex in traffic if ex.header("X-Nonce") == twice
    ][:1]


def peak_rss_mib() -> float:
    """Peak resident memory of this process, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(count: int, keep: Path | None = None) -> dict[str, Any]:
    """Generate and validate ``count`` exchanges; the figures measured."""
    from conformance.validator import validator_for
    from conformance.validator.recording_file import validate_file

    profile = load_profile("default")
    templates = recorded_templates(profile)
    with tempfile.TemporaryDirectory() as scratch:
        path = keep or Path(scratch) / "traffic.jsonl"
        generate(path, templates, count)
        size = path.stat().st_size
        validator_for(profile)  # built once per process: not part of the throughput
        rss_before = peak_rss_mib()
        clock = time.perf_counter()
        result = validate_file(path, "default", format="jsonl")
        seconds = time.perf_counter() - clock
    return {
        "exchanges": count,
        "templates": len(templates),
        "file_mib": size / 2**20,
        "seconds": seconds,
        "per_second": count / seconds,
        "peak_rss_mib": peak_rss_mib(),
        "rss_before_mib": rss_before,
        "verdict": result.verdict_summary,
        "failed": [r.requirement.id for r in result.requirements if r.failures],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--exchanges", type=int, default=DEFAULT_EXCHANGES)
    parser.add_argument(
        "--min-rate",
        type=float,
        default=TARGET_PER_S,
        help="exchanges/s below which the benchmark fails (default: the target)",
    )
    parser.add_argument("--keep", type=Path, help="write the generated file here and keep it")
    args = parser.parse_args(argv)
    if args.exchanges < 1:
        parser.error("--exchanges must be at least 1")
    figures = run(args.exchanges, args.keep)
    print(f"exchanges:      {figures['exchanges']:,} ({figures['templates']} templates)")
    print(f"file:           {figures['file_mib']:.1f} MiB")
    print(f"time:           {figures['seconds']:.2f} s")
    print(f"throughput:     {figures['per_second']:,.0f} exchanges/s (target {TARGET_PER_S:,.0f})")
    print(
        f"peak RSS:       {figures['peak_rss_mib']:.0f} MiB "
        f"(before validating: {figures['rss_before_mib']:.0f} MiB)"
    )
    print(f"verdict:        {figures['verdict']}")
    if figures["failed"]:
        print(f"failed:         {', '.join(figures['failed'])}")
    ok = figures["per_second"] >= args.min_rate and not figures["failed"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
