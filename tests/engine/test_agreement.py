"""The run and the validator judge alike (issue 30's agreement test, faulted half).

A quick run against the embedded server with one fault of the catalogue, recorded, then the
recording judged by ``validate`` under the same profile: every requirement both judged has the
same outcome, and both fail what the fault breaks. The faults sample the judge's rule families:
business rules, echoes, statements read page by page and across reads, isolation, state
machines, x402 settlement and a settled payment's later requests, idempotency, authentication,
constraint ids, list walks, routing, server errors and failed prerequisites. (The unfaulted
half is ``test_divergent_run``'s.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.engine.options import RunOptions
from conformance.engine.progress import NullDisplay
from conformance.engine.runner import execute
from conformance.reference.faults import find_fault

JUDGED = {"passed", "failed"}
# fault -> the requirement prefixes its run is narrowed to (the rest would only add time)
SAMPLE = {
    "split-sum-over-10000-accepted": ("SPLIT",),
    "webhook-accepts-unknown-event-type": ("WH",),
    "statement-next-cursor-on-last-page": ("STMT",),
    "statement-opening-ignores-history": ("STMT",),
    "isolation-foreign-id-403": ("TEN", "HELP-009"),
    "state-cancel-canceled-payment-200": ("PAY-STATE",),
    "x402-settle-ignores-recipient": ("X402",),
    "idem-replay-missing-header": ("IDEM",),
    "auth-signature-ignores-body": ("AUTH",),
    "validation-bps-range-as-business-rule": ("SPLIT", "STATUS-008", "LIMIT-008"),
    "payments-list-oldest-first": ("PAY-018", "PAY-019"),
    "payments-cursor-skips-boundary-item": ("PAY-013", "PAY-018", "PAY-019"),
    "payment-duplicate-order-accepted": ("PAY-013", "PAY-018", "PAY-019"),
    "isolation-order-no-global": ("TEN-008", "PAY-013"),
    "payment-empty-quotes-accepted": ("PAY",),
    "payout-foreign-withdraw-address-accepted": ("PAYOUT",),
    "subscription-undeployed-chain-accepted": ("SUB",),
    "statement-count-page-only": ("STMT",),
    "ledger-platform-fee-deducted": ("STMT",),
    "statement-closing-from-page": ("STMT",),
    "state-retire-twice-allowed": ("PAYOUT-STATE",),
    "state-pause-retired-allowed": ("PAYOUT", "PAYOUT-STATE", "OPS-024", "SHAPE-010"),
    "idem-reuse-replays-first": ("IDEM", "LIMIT"),
    "x402-upto-accepts-over-max": ("X402",),
    "x402-settle-replay-new-tx-hash": ("X402",),
    "x402-settled-accepts-other-payload": ("X402",),
    "x402-usage-on-unsettled-accepted": ("X402",),
    "x402-usage-max-from-requirements": ("X402",),
    "auth-nonce-not-checked": ("AUTH",),
    "idem-errors-stored": ("IDEM",),
    "auth-after-routing": ("STATUS-019",),
    "method-not-allowed-without-allow": ("STATUS-017",),
    "robust-unversioned-paths-served": ("VER-001", "STATUS-020"),
    "robust-huge-body-500": ("STATUS-018", "ERR-006"),
    # a 5xx names the refusals it should have been, in the schema phase as in validate
    "robust-non-ascii-id-500": (
        "ERR-006",
        "STATUS-004",
        "STATUS-005",
        "STATUS-013",
        "SHAPE-031",
        "WH-009",
    ),
    "validation-ignores-content-type": ("STATUS-021",),
    # and the statements and idempotency tests that need an underpaid payment: not judged
    "deposit-underpaid-settles": ("HELP", "PAY-STATE", "FIX", "STMT", "IDEM-001", "IDEM-004"),
    "deposit-overpaid-stays-underpaid": ("HELP", "PAY-STATE", "FIX"),
    "payment-accepted-raw-is-quoted": ("HELP", "PAY-STATE", "FIX"),
}


def outcomes(report_dir: Path) -> dict[str, str]:
    document = json.loads((report_dir / "results.json").read_text())
    return {r["id"]: r["outcome"] for r in document["requirements"]}


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(SAMPLE))
def test_validate_of_a_faulted_runs_recording_agrees_with_the_run(
    fault: str, tmp_path: Path
) -> None:
    options = RunOptions(
        seed=5,
        quick=True,
        only=SAMPLE[fault],
        embedded_fault=fault,
        report_dir=tmp_path / "run",
        record=tmp_path / "run.har",
    )
    assert execute(options, NullDisplay()).result.exit_code == 1  # the fault is caught
    result = CliRunner().invoke(
        main,
        ["validate", str(tmp_path / "run.har"), "--no-progress",
         "--report-dir", str(tmp_path / "validate")],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    ran, recorded = outcomes(tmp_path / "run"), outcomes(tmp_path / "validate")
    differ = {
        rid: (ran[rid], outcome)
        for rid, outcome in recorded.items()
        if outcome in JUDGED and ran.get(rid) in JUDGED and ran[rid] != outcome
    }
    assert differ == {}
    found = find_fault(fault)
    assert found is not None
    breaks = set(found.breaks)
    assert {rid for rid in breaks if ran.get(rid) == "failed"} == breaks
    assert {rid for rid in breaks if recorded.get(rid) == "failed"} == breaks
