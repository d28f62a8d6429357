"""The layer a specification requirement belongs to is called "contract" wherever a user sees it.

The CLI (``requirements --layer contract``), the catalogue and the guide say "contract"; the
reports said "spec" for the same layer. results.json 1.4 counts the layers under "contract" and
"profile"; a results.json of 1.3 or before, which says "spec", still loads and renders.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from conformance.core.results import RunResult
from conformance.engine.progress import render_summary
from conformance.reporting import html, json_report, junit, summary, write_reports
from conformance.reporting.load import load_view
from conformance.reporting.view import RunView


def test_the_view_names_the_layers_contract_and_profile(failing_view: RunView) -> None:
    assert [name for name, _ in failing_view.layers] == ["contract", "profile"]
    badges = {r.id: r.badge for r in failing_view.requirements}
    assert badges["OPS-002"] == "contract" and badges["IDEM-004"] == "profile"


def test_every_format_says_contract_for_the_specification_layer(failing_view: RunView) -> None:
    page = html.render(failing_view)
    assert '<span class="badge layer-contract"' in page
    assert "layer-spec" not in page and ">spec</span>" not in page
    assert 'type="contract requirement"' in junit.render(failing_view)
    assert "layer: contract:" in junit.render(failing_view)
    assert "(contract, MUST)" in summary.render(failing_view)
    assert "(spec, MUST)" not in summary.render(failing_view)
    document = json.loads(json_report.render(failing_view))
    assert document["schema_version"] == "1.4"
    assert set(document["counts"]["layers"]) == {"contract", "profile"}


def test_the_console_says_contract_too(failing_run: RunResult) -> None:
    out = io.StringIO()
    render_summary(Console(file=out, width=200, color_system=None), failing_run)
    text = out.getvalue()
    assert "[contract: must fix]" in text
    assert "[spec: must fix]" not in text


def test_a_results_json_of_schema_1_3_that_says_spec_still_loads(
    failing_run: RunResult, report_dir: Path
) -> None:
    write_reports(failing_run, report_dir)
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    layers = document["counts"]["layers"]
    document["counts"]["layers"] = {"spec": layers["contract"], "profile": layers["profile"]}
    document["schema_version"] = "1.3"
    for new in ("statuses_seen", "outside_selection"):
        document.pop(new, None)
    path.write_text(json.dumps(document), encoding="utf-8")
    view = load_view(path)
    assert [name for name, _ in view.layers] == ["contract", "profile"]
    assert html.render(view).encode() == (report_dir / html.FILENAME).read_bytes()
