"""The deployments benchmark: a row per mode, each judged against its expectation, a Markdown
table and a JSON report, and the gateway key never printed; one real run of two cheap modes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.deployments import (
    MODE_NAMES,
    MODES,
    REFUSED,
    Mode,
    Row,
    Settings,
    expectation_held,
    fill,
    main,
    row_from_results,
    table,
)


def conformant(name: str) -> Row:
    return Row(
        name,
        0,
        "CONFORMANT",
        30.0,
        25.0,
        [],
        "330 of 334",
        1800,
        0,
        0.0,
        0.0,
        "2",
        "2 cores, 1 ms round trip",
    )


def refused(name: str) -> Row:
    return Row(
        name,
        2,
        REFUSED,
        0.5,
        0.4,
        message="error: preflight failed (reachable): give its CA with --cacert PATH",
    )


class Runs:
    """A fake run: every mode gives what it should, except those given."""

    def __init__(self, rows: dict[str, Row] | None = None) -> None:
        self.rows = rows or {}
        self.calls: list[tuple[Mode, Settings]] = []

    def __call__(self, mode: Mode, settings: Settings) -> Row:
        self.calls.append((mode, settings))
        if mode.name in self.rows:
            return self.rows[mode.name]
        return conformant(mode.name) if mode.expect_exit == 0 else refused(mode.name)


def exit_code(args: list[str], runs: Runs) -> int | str | None:
    try:
        return main(args, runs)
    except SystemExit as exc:  # argparse's own errors
        return exc.code


def test_every_mode_runs_in_order_with_one_seed_and_meets_its_expectation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs = Runs()
    assert main(["--quick", "--seed", "7", "--workers", "3"], runs) == 0
    assert [mode.name for mode, _ in runs.calls] == list(MODE_NAMES)
    assert len(MODE_NAMES) == 13
    assert {(s.seed, s.quick, s.workers) for _, s in runs.calls} == {(7, True, "3")}
    out = capsys.readouterr().out
    assert "seed 7" in out
    assert "13 of 13 modes met their expectation" in out
    assert out.count("expectation held") == 13


def test_mode_chooses_the_modes_and_the_seed_is_drawn_and_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs = Runs()
    assert main(["--mode", "https-no-cacert", "--mode", "plain"], runs) == 0
    # in the table's order, whatever the order given
    assert [mode.name for mode, _ in runs.calls] == ["plain", "https-no-cacert"]
    settings = runs.calls[0][1]
    assert settings.workers == "auto"
    assert not settings.quick
    assert f"seed {settings.seed}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("mode", "row", "held"),
    [
        ("plain", conformant("plain"), True),
        ("plain", Row("plain", 1, "NOT CONFORMANT", 9.0, 8.0, ["IDEM-004"]), False),
        ("plain", Row("plain", 2, "INCOMPLETE", 9.0, 8.0, [], "200 of 334"), False),
        ("plain", Row("plain", None, "ERROR", 900.0, message="killed after 900 s"), False),
        ("plain", refused("plain"), False),
        ("https-no-cacert", refused("https-no-cacert"), True),
        ("https-no-cacert", conformant("https-no-cacert"), False),
        (
            "https-no-cacert",
            Row("https-no-cacert", 2, REFUSED, 0.5, 0.4, message="error: preflight failed"),
            False,  # the message must name --cacert
        ),
        (
            "https-no-cacert",
            Row("https-no-cacert", 2, "ERROR", 0.5, 0.4, message="--cacert"),
            False,
        ),
        (
            "gateway-header-missing",
            Row("gateway-header-missing", 2, REFUSED, 0.5, 0.4, message="403 gateway_refused"),
            True,
        ),
    ],
)
def test_expectations(mode: str, row: Row, held: bool) -> None:
    assert expectation_held(next(m for m in MODES if m.name == mode), row) is held


def test_a_mode_that_misses_its_expectation_fails_the_benchmark_and_is_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = Row("rate-limit", 1, "NOT CONFORMANT", 40.0, 30.0, ["RATE-001"], "330 of 334", 900)
    assert main(["--seed", "1"], Runs({"rate-limit": bad, "https-no-cacert": conformant("x")})) == 1
    out = capsys.readouterr().out
    assert "11 of 13 modes met their expectation; not: rate-limit, https-no-cacert" in out
    assert "NOT MET: CONFORMANT, 0 failed, exit 0" in out
    assert "NOT MET: exit 2, refused at preflight naming --cacert" in out
    assert "| rate-limit | NOT CONFORMANT (RATE-001) | 1 |" in out


def test_the_markdown_table() -> None:
    limited = Row(
        "rate-limit-client",
        0,
        "CONFORMANT",
        61.94,
        40.25,
        [],
        "330 of 334",
        1807,
        3,
        2.5,
        68.04,
        "2",
        "2 cores, 1 ms round trip",
    )
    fixed = Row("plain", 0, "CONFORMANT", 30.0, 25.0, [], "330 of 334", 12345, 0, 0.0, 0.0, "3")
    assert table([limited, fixed, refused("https-no-cacert")]).splitlines() == [
        "| mode | verdict | exit | wall | CPU | requests | 429s | waited | workers (auto) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        "| rate-limit-client | CONFORMANT | 0 | 61.9 s | 40.2 s | 1,807 | 3 "
        "| 2.5 s (+68.0 s for --rate-limit) | 2 (auto: 2 cores, 1 ms round trip) |",
        "| plain | CONFORMANT | 0 | 30.0 s | 25.0 s | 12,345 | 0 | 0.0 s | 3 |",
        "| https-no-cacert | refused at preflight | 2 | 0.5 s | 0.4 s | - | - | - | - |",
    ]


def test_the_json_report_has_every_row_and_the_machine(tmp_path: Path) -> None:
    report = tmp_path / "out" / "deployments.json"
    assert main(["--seed", "5", "--quick", "--report", str(report)], Runs()) == 0
    data = json.loads(report.read_text())
    assert set(data["machine"]) >= {"cpu_count", "python", "platform", "date"}
    assert data["seed"] == 5
    assert data["quick"] is True
    assert data["workers"] == "auto"
    assert [row["mode"] for row in data["rows"]] == list(MODE_NAMES)
    assert all(row["expectation_held"] for row in data["rows"])
    mtls = next(row for row in data["rows"] if row["mode"] == "mutual-tls")
    assert mtls["options"] == (
        "serve --tls-cert server.pem --tls-key server.key --tls-client-ca ca.pem; "
        "run --cacert ca.pem --client-cert client.pem --client-key client.key"
    )
    env = next(row for row in data["rows"] if row["mode"] == "https-ssl-cert-file")
    assert env["options"].endswith("with SSL_CERT_FILE=ca.pem REQUESTS_CA_BUNDLE=ca.pem")
    assert data["rows"][0]["workers_auto"] == "2 cores, 1 ms round trip"


def test_the_gateway_key_is_never_printed_or_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class Leaky(Runs):
        """A run that (wrongly) echoes the gateway key it was given."""

        def __call__(self, mode: Mode, settings: Settings) -> Row:
            self.calls.append((mode, settings))
            return Row(mode.name, 2, "ERROR", 1.0, message=f"got {settings.gateway_key}")

    runs = Leaky()
    report = tmp_path / "report.json"
    args = ["--mode", "gateway-header", "--mode", "everything", "--report", str(report)]
    assert main(args, runs) == 1
    key = runs.calls[0][1].gateway_key
    assert len(key) >= 16
    out, err = capsys.readouterr()
    for text in (out, err, report.read_text(), repr(runs.calls[0][1])):
        assert key not in text
    assert "run -H 'X-Gateway-Key: [redacted]'" in out
    assert "got [redacted]" in out
    # the runner gets the real value, for the server and the client alike
    gateway = next(m for m in MODES if m.name == "gateway-header")
    values = runs.calls[0][1].values()
    assert fill(gateway.server_args, values) == ["--require-header", f"X-Gateway-Key: {key}"]
    assert fill(gateway.client_args, values) == ["-H", f"X-Gateway-Key: {key}"]


def test_the_certificate_placeholders_name_files_that_exist() -> None:
    seen: list[list[str]] = []

    class Files(Runs):
        def __call__(self, mode: Mode, settings: Settings) -> Row:
            seen.append(fill(mode.server_args + mode.client_args, settings.values()))
            return super().__call__(mode, settings)

    assert main(["--mode", "mutual-tls"], Files()) == 0
    paths = [arg for arg in seen[0] if arg.endswith((".pem", ".key"))]
    assert len(paths) == 6
    assert all(Path(path).is_absolute() for path in paths)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mode", "nope"], "invalid choice"),
        (["--workers", "0"], "must be at least 1"),
        (["--workers", "many"], "'auto' or a number"),
        (["--seed", "-1"], "must not be negative"),
        (["--seed", "x"], "a number"),
        (["--bogus"], "unrecognized arguments"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    runs = Runs()
    assert exit_code(args, runs) == 2
    assert message in capsys.readouterr().err
    assert not runs.calls


def test_a_row_from_results_json() -> None:
    data = {
        "verdict": "NOT CONFORMANT",
        "requests_sent": 1807,
        "requirements_exercised": 330,
        "counts": {"requirements": {"total": 334}},
        "requirements": [
            {"id": "IDEM-004", "outcome": "failed"},
            {"id": "AUTH-001", "outcome": "passed"},
        ],
        "rate_limits": {
            "received_429": 94,
            "received_503": 0,
            "waited_s": 94.2,
            "limiter_waited_s": 0.0,
            "given_up": 0,
        },
        "options": {"workers": "2", "workers_auto": "2 cores, 21 ms round trip"},
    }
    row = row_from_results("rate-limit", 1, 115.0, 80.0, data)
    assert row == Row(
        "rate-limit",
        1,
        "NOT CONFORMANT",
        115.0,
        80.0,
        ["IDEM-004"],
        "330 of 334",
        1807,
        94,
        94.2,
        0.0,
        "2",
        "2 cores, 21 ms round trip",
    )
    assert row_from_results("plain", 0, 1.0, None, {"verdict": "CONFORMANT"}).received_429 is None


def test_a_real_run_of_two_cheap_modes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "deployments.json"
    keep = tmp_path / "kept"
    args = ["--quick", "--seed", "11", "--workers", "1", "--only", "AUTH-001"]
    args += ["--mode", "plain", "--mode", "https-no-cacert"]
    assert main([*args, "--report", str(report), "--keep", str(keep)]) == 0
    rows = {row["mode"]: row for row in json.loads(report.read_text())["rows"]}
    plain = rows["plain"]
    assert (plain["verdict"], plain["exit_code"], plain["failed"]) == ("CONFORMANT", 0, [])
    assert plain["exercised"] == "1 of 1"
    assert plain["requests"] > 0
    assert plain["received_429"] == 0
    assert plain["workers"] == "1"
    assert plain["workers_auto"] == ""
    assert plain["cpu_s"] > 0
    assert (keep / "plain" / "results.json").is_file()
    refusal = rows["https-no-cacert"]
    assert (refusal["verdict"], refusal["exit_code"]) == (REFUSED, 2)
    assert "--cacert" in refusal["message"]
    assert "2 of 2 modes met their expectation" in capsys.readouterr().out
