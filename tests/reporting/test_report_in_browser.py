"""report.html of a failing run, as a reader sees it in a real browser (headless Chromium).

At a laptop width (1366 px) and a phone width (420 px): the verdict, the table of results by
section and a failure's evidence (its request and response) are on screen, uncovered and whole,
and nothing is wider than the page or cut off by its box. Two failing runs: a real one (the
engine against the embedded reference server with a fault switched on) and a hand-built one whose
evidence is hostile (a huge body, unbreakable URLs and tokens, markup). The screenshots are kept
in the test's temporary directory; every assertion message names them.

Chromium is installed by the ``chromium`` fixture when missing (``browser.py``); the tests skip,
saying why, only where it cannot be.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from conformance.core.results import RunResult
from conformance.engine.options import RunOptions
from conformance.engine.progress import NullDisplay
from conformance.engine.runner import execute
from conformance.reporting import html, write_reports
from tests.reporting import browser
from tests.reporting.browser import Browser, find_or_install_chromium, png_size

WIDTHS = (1366, 420)
VIEWPORT_HEIGHT = 900
PROBE = (Path(__file__).parent / "layout_probe.js").read_text(encoding="utf-8")
FAULT = "auth-bad-signature-403"  # a quick selection that fails: AUTH-013 gets 403, not 401


@pytest.fixture(scope="session")
def chromium() -> str:
    executable, why_not = find_or_install_chromium()
    if executable is None:
        pytest.skip(f"no headless Chromium for the browser tests: {why_not}")
    return executable


@pytest.fixture(scope="module")
def real_failing_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    report_dir = tmp_path_factory.mktemp("real-run")
    options = RunOptions(
        seed=1, only=("AUTH-013",), quick=True, embedded_fault=FAULT, report_dir=report_dir
    )
    finished = execute(options, NullDisplay())
    assert finished.result.exit_code == 1, "the faulted run was expected to fail AUTH-013"
    return report_dir / html.FILENAME


def layout_of(chromium: str, report: Path, width: int, shots: Path) -> tuple[dict[str, Any], Path]:
    """The probe's findings for ``report`` at ``width`` and a screenshot from its top down to
    the first failure's response (so the picture shows everything the test looks for)."""
    with Browser(chromium, shots) as page:
        page.open(report.as_uri(), width, VIEWPORT_HEIGHT)
        layout: dict[str, Any] = page.evaluate(PROBE)
        response = layout["response"]
        height = int(response["bottom"]) + 16 if response["found"] else VIEWPORT_HEIGHT
        shot = page.screenshot(shots / f"{report.parent.name}-{width}px.png", width, height)
    assert png_size(shot) == (width, height), f"screenshot {shot} is not {width}x{height}"
    return layout, shot


def assert_readable(layout: dict[str, Any], width: int, shot: Path) -> None:
    where = f"(at {width} px; screenshot {shot})\n{json.dumps(layout, indent=1)}"
    expected_text = {
        "verdict": ("NOT CONFORMANT",),
        "sections": ("Section", "Failed", "Total"),
        "request": ("REQUEST", "POST http://127.0.0.1:"),
        "response": ("RESPONSE", "HTTP "),
    }
    for name, words in expected_text.items():
        seen = layout[name]
        assert seen["found"], f"no {seen['selector']} in the report {where}"
        assert seen["rendered"] and seen["width"] > 0 and seen["height"] > 0, (
            f"{name} is not rendered {where}"
        )
        assert seen["left"] >= -0.5 and seen["right"] <= width + 0.5, (
            f"{name} does not fit across the page {where}"
        )
        assert seen["uncovered"], f"something covers the {name} {where}"
        for word in words:
            assert word in seen["text"], f"{name} does not read {word!r} {where}"
    assert layout["verdict"]["bottom"] <= VIEWPORT_HEIGHT, f"the verdict is below the fold {where}"
    assert layout["viewport"]["width"] == width, f"the page was not laid out at {width} px {where}"
    assert layout["pageScrollWidth"] <= width, f"the page scrolls sideways {where}"
    assert layout["overflowing"] == [], f"elements stick out of the page {where}"
    assert layout["cutOff"] == [], f"boxes hide part of their content {where}"


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_a_real_failing_run_reads_in_a_browser(
    chromium: str, real_failing_report: Path, width: int, tmp_path: Path
) -> None:
    layout, shot = layout_of(chromium, real_failing_report, width, tmp_path)
    assert_readable(layout, width, shot)
    assert "AUTH-013" in real_failing_report.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_hostile_evidence_does_not_break_the_layout(
    chromium: str, failing_run: RunResult, report_dir: Path, width: int, tmp_path: Path
) -> None:
    write_reports(failing_run, report_dir)
    layout, shot = layout_of(chromium, report_dir / html.FILENAME, width, tmp_path)
    assert_readable(layout, width, shot)


def test_without_chromium_and_root_the_reason_is_stated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser, "find_chromium", lambda: None)
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.delenv("PAYMENT_CONFORMANCE_NO_BROWSER_INSTALL", raising=False)
    assert find_or_install_chromium() == (
        None,
        "chromium is not on PATH and installing it needs root (apt-get)",
    )


def test_a_png_size_is_read_from_its_header(tmp_path: Path) -> None:
    png = tmp_path / "one.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (1366).to_bytes(4, "big") * 2)
    assert png_size(png) == (1366, 1366)
    (tmp_path / "not.png").write_bytes(b"GIF89a" + b"\x00" * 30)
    with pytest.raises(ValueError, match="is not a PNG"):
        png_size(tmp_path / "not.png")
