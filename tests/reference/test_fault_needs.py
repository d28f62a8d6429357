"""What a fault needs of the profile: the predicates, and the catalogue entries that name them."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core.profile import load_profile
from conformance.reference.fault_needs import NEEDS, unmet
from conformance.reference.faults import FaultCatalogueError, catalogue, load_catalogue

ENTRY = """- name: a-bug
  category: idempotency
  description: A bug.
  breaks: [IDEM-008]
"""


def test_a_need_the_catalogue_does_not_know_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(ENTRY + "  needs: [replay-marker]\n", encoding="utf-8")
    with pytest.raises(FaultCatalogueError, match=r"a-bug.*unknown need 'replay-marker'"):
        load_catalogue(tmp_path)
    (tmp_path / "bad.yaml").write_text(ENTRY + "  needs: replay-header\n", encoding="utf-8")
    with pytest.raises(FaultCatalogueError, match="needs must be a list of names"):
        load_catalogue(tmp_path)


def test_needs_are_read_from_the_catalogue(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(ENTRY + "  needs: [replay-header]\n", encoding="utf-8")
    (fault,) = load_catalogue(tmp_path)
    assert fault.needs == ("replay-header",)
    assert next(f for f in catalogue() if f.name == "idem-replay-missing-header").needs == (
        "replay-header",
    )


def test_the_replay_header_need_holds_only_where_the_profile_declares_a_marker() -> None:
    default, divergent = load_profile("default"), load_profile("divergent")
    assert NEEDS["replay-header"].holds(default)
    assert not NEEDS["replay-header"].holds(divergent)
    assert [n.name for n in unmet(("replay-header", "deposit-helper"), divergent)] == [
        "replay-header"
    ]


def test_the_default_profile_meets_every_need_so_its_selftest_runs_every_fault() -> None:
    default = load_profile("default")
    assert all(not unmet(f.needs, default) for f in catalogue())
