"""The requirement catalogue: what it must hold, and how a malformed one is rejected."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from conformance.core.catalogue import (
    LEVELS,
    SHIPPED_CATALOGUE,
    Catalogue,
    CatalogueError,
    Layer,
    catalogue_sha256,
    load_catalogue,
)

EXPECTED_SECTIONS = [
    "spec 1", "spec 2", "spec 3", "spec 4", "spec 5", "spec 6", "spec 7", "spec 8", "spec 9",
    "profile 1", "profile 2", "profile 3", "profile 4", "profile 5", "profile 6", "profile 7",
]  # fmt: skip
PREFIXES = {
    "OPS", "SHAPE", "AUTH", "IDEM", "ERR", "STATUS", "LIMIT", "PAY", "PAY-STATE", "SUB",
    "SUB-STATE", "PAYOUT", "PAYOUT-STATE", "SPLIT", "WH", "DLV", "EVT", "X402", "STMT", "FIX",
    "HELP", "TEN", "VER", "X402-PAYLOAD", "RATE",
}  # fmt: skip


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue()


# -- the shipped catalogue ---------------------------------------------------------------------


def test_it_has_at_least_150_requirements(catalogue: Catalogue) -> None:
    assert len(catalogue) >= 150


def test_ids_are_unique_and_well_formed(catalogue: Catalogue) -> None:
    ids = [r.id for r in catalogue]
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    pattern = re.compile(r"[A-Z][A-Z0-9]*(-[A-Z][A-Z0-9]*)*-[0-9]{3}")
    assert all(pattern.fullmatch(i) for i in ids)


def test_ids_use_the_team_prefixes_only(catalogue: Catalogue) -> None:
    assert {r.prefix for r in catalogue} == PREFIXES


def test_it_lists_every_section_of_both_documents_in_order(catalogue: Catalogue) -> None:
    assert [s.key for s in catalogue.sections] == EXPECTED_SECTIONS


def test_every_section_has_at_least_one_requirement(catalogue: Catalogue) -> None:
    empty = [s.key for s, reqs in catalogue.by_section().items() if not reqs]
    assert empty == []


def test_every_sentence_uses_one_rfc_2119_level_word(catalogue: Catalogue) -> None:
    for r in catalogue:
        assert r.level in LEVELS, r.id
        assert re.search(rf"(^|[^A-Z]){r.level}([^A-Z]|$)", r.text), r.id
        assert r.text.endswith("."), r.id


def test_both_layers_are_present_and_follow_their_document(catalogue: Catalogue) -> None:
    layers = Counter(r.layer for r in catalogue)
    assert layers[Layer.CONTRACT] > 0
    assert layers[Layer.PROFILE] > 0
    # the spec states contract rules, the default profile states profile rules
    assert all((r.layer is Layer.CONTRACT) == (r.section.document == "spec") for r in catalogue)


def test_entries_are_ordered_by_section(catalogue: Catalogue) -> None:
    positions = [EXPECTED_SECTIONS.index(r.section.key) for r in catalogue]
    assert positions == sorted(positions)


def test_operations_name_known_operation_ids(catalogue: Catalogue) -> None:
    assert len(catalogue.operations) == 20
    known = {*catalogue.operations, *catalogue.helper_operations}
    for r in catalogue:
        assert set(r.operations) <= known, r.id


def test_all_operations_is_expanded_to_the_twenty(catalogue: Catalogue) -> None:
    auth = catalogue.get("AUTH-001")
    assert auth is not None
    assert auth.operations == catalogue.operations


def test_auth_001_is_the_api_key_header_rule(catalogue: Catalogue) -> None:
    auth = catalogue.get("AUTH-001")
    assert auth is not None
    assert auth.section.key == "spec 5"
    assert auth.layer is Layer.CONTRACT
    assert auth.level == "MUST"
    assert "X-Api-Key" in auth.text


def test_get_of_an_unknown_id_is_none(catalogue: Catalogue) -> None:
    assert catalogue.get("NOPE-001") is None
    assert "NOPE-001" not in catalogue
    assert "AUTH-001" in catalogue


def test_the_shipped_catalogue_is_cached() -> None:
    assert load_catalogue() is load_catalogue()
    assert load_catalogue(SHIPPED_CATALOGUE) is load_catalogue()


def test_catalogue_sha256_hashes_the_file_bytes(catalogue: Catalogue) -> None:
    assert re.fullmatch(r"[0-9a-f]{64}", catalogue_sha256())
    assert catalogue_sha256() == catalogue.sha256


# -- select() ----------------------------------------------------------------------------------


def test_select_without_selectors_returns_everything(catalogue: Catalogue) -> None:
    assert catalogue.select() == catalogue.requirements


def test_select_by_prefix(catalogue: Catalogue) -> None:
    selected = catalogue.select(only=["IDEM"])
    assert selected
    assert all(r.id.startswith("IDEM-") for r in selected)
    assert len(selected) == sum(1 for r in catalogue if r.prefix == "IDEM")


def test_a_prefix_does_not_take_in_a_longer_prefix(catalogue: Catalogue) -> None:
    assert all(r.prefix == "PAY" for r in catalogue.select(only=["PAY"]))
    assert all(r.prefix == "PAY-STATE" for r in catalogue.select(only=["PAY-STATE"]))


def test_select_by_id(catalogue: Catalogue) -> None:
    assert [r.id for r in catalogue.select(only=["IDEM-004"])] == ["IDEM-004"]


def test_select_by_section(catalogue: Catalogue) -> None:
    selected = catalogue.select(only=["spec 5"])
    assert selected
    assert {r.section.key for r in selected} == {"spec 5"}


def test_select_combines_only_and_skip(catalogue: Catalogue) -> None:
    selected = catalogue.select(only=["AUTH", "TEN"], skip=["AUTH-001", "profile 1"])
    assert {r.id for r in selected} == {"AUTH-002", "AUTH-003", "AUTH-004"}


def test_select_is_case_and_space_tolerant(catalogue: Catalogue) -> None:
    assert catalogue.select(only=[" Spec  5 "]) == catalogue.select(only=["spec 5"])
    assert catalogue.select(only=["idem"]) == catalogue.select(only=["IDEM"])


def test_an_unknown_selector_is_an_error_not_an_empty_selection(catalogue: Catalogue) -> None:
    with pytest.raises(CatalogueError, match="unknown requirement selector 'IDEMX'"):
        catalogue.select(only=["IDEMX"])
    with pytest.raises(CatalogueError, match="'spec 12'"):
        catalogue.select(skip=["spec 12"])


# -- malformed catalogue files -----------------------------------------------------------------


def _write(tmp_path: Path, edit_entry: dict[str, object] | None = None, **top: object) -> Path:
    """A copy of the shipped catalogue with its AUTH-001 entry and top-level keys edited."""
    data = yaml.load(SHIPPED_CATALOGUE.read_bytes(), Loader=_LOADER)
    if edit_entry is not None:
        entry = next(e for e in data["requirements"] if e["id"] == "AUTH-001")
        for key, value in edit_entry.items():
            if value is None:
                del entry[key]
            else:
                entry[key] = value
    data.update(top)
    path = tmp_path / "requirements.yaml"
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text = yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_an_unedited_copy_loads_like_the_shipped_file(tmp_path: Path) -> None:
    copy = load_catalogue(_write(tmp_path))
    assert [r.id for r in copy] == [r.id for r in load_catalogue()]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"id": "AUTH-1"}, r"requirement AUTH-1 .*must look like PREFIX-NNN"),
        ({"id": "auth-001"}, r"requirement auth-001 .*must look like PREFIX-NNN"),
        ({"id": "AUTH-002"}, r"requirement AUTH-002: duplicate id"),
        ({"section": "spec 12"}, r"requirement AUTH-001 .*section 'spec 12' is not one of"),
        ({"layer": "optional"}, r"requirement AUTH-001 .*layer 'optional' must be contract or"),
        ({"text": "Every operation requires X-Api-Key."}, r"AUTH-001 .*exactly one .*found none"),
        ({"text": "It MUST and MUST NOT."}, r"AUTH-001 .*exactly one .*found MUST, MUST NOT"),
        ({"text": "The header is REQUIRED."}, r"AUTH-001 .*level word REQUIRED is not used here"),
        ({"operations": ["createPaymnt"]}, r"AUTH-001 .*unknown operation 'createPaymnt'"),
        ({"text": None}, r"requirement AUTH-001 .*missing key text"),
        ({"severity": "high"}, r"requirement AUTH-001 .*unknown key severity"),
        ({"id": "AUTH-005"}, r"requirement AUTH-002: ids of AUTH must be numbered upward"),
    ],
)
def test_a_malformed_entry_is_rejected_with_a_message_naming_it(
    tmp_path: Path, edit: dict[str, object], message: str
) -> None:
    with pytest.raises(CatalogueError, match=message):
        load_catalogue(_write(tmp_path, edit))


def test_an_unknown_top_level_key_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="unknown key levels"):
        load_catalogue(_write(tmp_path, levels=["MUST"]))


def test_a_section_without_quotes_around_its_number_is_rejected(tmp_path: Path) -> None:
    sections = [{"document": "spec", "number": 1, "title": "What the service does"}]
    with pytest.raises(CatalogueError, match=r"sections\[0\].*quote the number"):
        load_catalogue(_write(tmp_path, sections=sections))


def test_entries_out_of_section_order_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(
        CatalogueError, match=r"requirement AUTH-001: out of order: .* section spec 1 .* of spec 4"
    ):
        load_catalogue(_write(tmp_path, {"section": "spec 1"}))


def test_invalid_yaml_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "requirements.yaml"
    path.write_text("requirements: [\n", encoding="utf-8")
    with pytest.raises(CatalogueError, match="is not valid YAML"):
        load_catalogue(path)


def test_a_missing_file_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="cannot read catalogue"):
        load_catalogue(tmp_path / "absent.yaml")
