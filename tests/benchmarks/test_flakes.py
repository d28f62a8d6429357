"""The flake gate: any failed or unfinished run of a correct server fails it, naming the seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.flakes import FlakeRun, exercised_text, main


class Runs:
    """A fake suite: conformant, except for the seeds given."""

    def __init__(self, bad: dict[int, FlakeRun] | None = None) -> None:
        self.bad = bad or {}
        self.calls: list[tuple[int, bool, int | None]] = []
        self.readings: list[str | None] = []
        self.profiles: list[str | None] = []

    def __call__(
        self,
        seed: int,
        quick: bool,
        workers: int | None,
        escape_reading: str | None = None,
        profile: str | None = None,
    ) -> FlakeRun:
        self.readings.append(escape_reading)
        self.profiles.append(profile)
        self.calls.append((seed, quick, workers))
        if seed in self.bad:
            return self.bad[seed]
        return FlakeRun(seed, "CONFORMANT", 0, 1.0, [], "333 of 333", 100)


def test_every_run_conformant_passes_and_each_run_has_its_own_seed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs = Runs()
    assert main(["--runs", "5", "--quick", "--first-seed", "40", "--workers", "3"], runs) == 0
    assert runs.calls == [(s, True, 3) for s in range(40, 45)]
    assert "5 of 5 runs conformant" in capsys.readouterr().out


def test_one_failed_run_fails_the_gate_and_names_its_seed_and_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = FlakeRun(12, "NOT CONFORMANT", 1, 2.0, ["IDEM-004"], "333 of 333", 90)
    assert main(["--runs", "3", "--first-seed", "11"], Runs({12: bad})) == 1
    out = capsys.readouterr().out
    assert "IDEM-004" in out
    assert "FLAKE seed 12: NOT CONFORMANT; repeat it with: payment-conformance run --seed 12" in out


@pytest.mark.parametrize(
    "bad",
    [
        FlakeRun(7, "INCOMPLETE", 2, 9.0, [], "200 of 333", 50, "the run was interrupted"),
        FlakeRun(7, "ERROR", None, 900.0, message="killed after 900 s"),
    ],
)
def test_an_unfinished_run_fails_the_gate(bad: FlakeRun) -> None:
    assert main(["--runs", "2", "--first-seed", "6"], Runs({7: bad})) == 1


def test_alternate_reads_a_malformed_escape_literally_in_every_second_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs = Runs({21: FlakeRun(21, "NOT CONFORMANT", 1, 1.0, ["STATUS-011"])})
    assert main(["--runs", "3", "--first-seed", "20", "--escape-reading", "alternate"], runs) == 1
    assert runs.readings == ["refuse", "literal", "refuse"]
    out = capsys.readouterr().out
    assert "escapes literal" in out
    assert "payment-conformance run --seed 21 --server-escape-reading literal" in out


def test_drawn_seeds_are_printed_and_distinct(capsys: pytest.CaptureFixture[str]) -> None:
    runs = Runs()
    assert main(["--runs", "4"], runs) == 0
    seeds = [seed for seed, _, _ in runs.calls]
    assert len(set(seeds)) == 4
    assert f"seeds {seeds[0]}..{seeds[-1]}" in capsys.readouterr().out


def test_the_report_keeps_every_run(tmp_path: Path) -> None:
    report = tmp_path / "flakes.json"
    assert main(["--runs", "2", "--first-seed", "1", "--report", str(report)], Runs()) == 0
    assert [r["seed"] for r in json.loads(report.read_text())] == [1, 2]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--runs", "0"], "--runs must be at least 1"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--first-seed", "-1"], "--first-seed must not be negative"),
        (["--runs", "x"], "invalid int value"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code: int | str | None
    try:
        code = main(args, Runs())
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("results", "shown"),
    [
        ({"requirements_exercised": 332, "counts": {"requirements": {"total": 333}}}, "332 of 333"),
        ({"requirements_exercised": 332}, "332"),
        ({"requirements_exercised": "lots", "counts": []}, ""),
    ],
)
def test_a_run_shows_how_many_requirements_of_the_catalogue_it_exercised(
    results: dict[str, object], shown: str
) -> None:
    assert exercised_text(results) == shown


def test_every_run_goes_under_the_profile_given_and_a_flake_repeats_under_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs = Runs({31: FlakeRun(31, "NOT CONFORMANT", 1, 1.0, ["PAY-003"])})
    assert main(["--runs", "2", "--first-seed", "30", "--profile", "divergent"], runs) == 1
    assert runs.profiles == ["divergent", "divergent"]
    out = capsys.readouterr().out
    assert "under profile divergent" in out
    assert "repeat it with: payment-conformance run --seed 31 --profile divergent" in out
