"""The documentation a user reads exists and covers what it must.

Every repository path that the README, the shipped profile, the OpenAPI document and the
requirement catalogue cite exists (the specification they transcribe included); every link and
anchor into ``docs/profile.md`` resolves; ``docs/profile.md`` documents every table and key a
profile may have, under the section numbers the catalogue uses.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]
PROFILE_DOC = ROOT / "docs" / "profile.md"
DEFAULT_PROFILE = ROOT / "conformance" / "profiles" / "default.toml"
PROFILE_SCHEMA = ROOT / "conformance" / "profiles" / "profile.schema.json"
CATALOGUE = ROOT / "conformance" / "requirements.yaml"
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
OPENAPI = ROOT / "openapi" / "payment-service.yaml"
SPEC = ROOT / "docs" / "spec" / "payment-service-interface.md"
DOC_PAGES = sorted((ROOT / "docs").rglob("*.md"))
# "payment-conformance requirements ARGS  # ... (N entries)" or "... N requirements"
COUNT_CLAIM = re.compile(
    r"payment-conformance requirements(?P<args>[^#\n]*)#[^\n]*?\b(?P<count>[0-9]+) "
    r"(?:entries|requirements)\b"
)
CITING = [README, DEFAULT_PROFILE, CATALOGUE, *DOCS, OPENAPI]

# Where runs write in the docs' examples: a path under them names output, not a repository file.
OUTPUT = ("reports/", "evidence/")

# A relative path with at least one "/" (not part of a URL or a {placeholder}).
PATH_TOKEN = re.compile(r"(?<![\w./:@{-])(?:[\w-]+/)+[\w.-]*")
FILE_SUFFIX = re.compile(r"\.(?:md|toml|ya?ml|json|py|html|xml|txt)$")
DOC_ANCHOR = re.compile(r"docs/profile\.md#([\w-]+)")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6}) +(.+?) *$", re.MULTILINE)


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return text.replace(" ", "-")


def _headings() -> list[tuple[int, str]]:
    return [(len(m[1]), m[2]) for m in HEADING.finditer(PROFILE_DOC.read_text(encoding="utf-8"))]


def _cited_paths(path: Path) -> set[str]:
    """Paths a file cites as repository paths: a file name with a known suffix, or a path whose
    first directory is one of the repository's (``conformance/suite/``)."""
    top_level = {p.name for p in ROOT.iterdir()}
    cited = set()
    for token in PATH_TOKEN.findall(path.read_text(encoding="utf-8")):
        token = token.rstrip(".")
        if FILE_SUFFIX.search(token) or token.split("/", 1)[0] in top_level:
            cited.add(token)
    return cited


@pytest.mark.parametrize("citing", CITING, ids=lambda p: p.name)
def test_every_repository_path_cited_exists(citing: Path) -> None:
    cited = _cited_paths(citing)
    if citing in (README, DEFAULT_PROFILE, CATALOGUE, PROFILE_DOC):
        assert cited, f"{citing.name} cites no path: the pattern no longer matches anything"
    missing = sorted(p for p in cited if not (ROOT / p).exists() and not p.startswith(OUTPUT))
    assert not missing, f"{citing.relative_to(ROOT)} cites paths not in the repository: {missing}"


@pytest.mark.parametrize("citing", [OPENAPI, CATALOGUE], ids=lambda p: p.name)
def test_the_contract_and_the_catalogue_cite_the_specification_in_the_repository(
    citing: Path,
) -> None:
    assert str(SPEC.relative_to(ROOT)) in _cited_paths(citing)
    assert SPEC.is_file()


def test_the_readme_links_the_profile_documentation() -> None:
    assert "](docs/profile.md)" in README.read_text(encoding="utf-8")


@pytest.mark.parametrize("citing", [README, *DOCS], ids=lambda p: p.name)
def test_every_relative_markdown_link_resolves(citing: Path) -> None:
    anchors = {_slug(text) for _, text in _headings()}
    for target in MD_LINK.findall(citing.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute URL
        path, _, anchor = target.partition("#")
        resolved = (citing.parent / path).resolve() if path else citing
        assert resolved.exists(), f"{citing.name} links to {target}, which does not exist"
        if anchor and resolved == PROFILE_DOC:
            assert anchor in anchors, f"{citing.name} links to #{anchor}, no such heading"


@pytest.mark.parametrize("citing", [README, DEFAULT_PROFILE, CATALOGUE], ids=lambda p: p.name)
def test_every_anchor_cited_into_the_profile_doc_is_a_heading(citing: Path) -> None:
    anchors = {_slug(text) for _, text in _headings()}
    for anchor in DOC_ANCHOR.findall(citing.read_text(encoding="utf-8")):
        assert anchor in anchors, f"{citing.name} cites docs/profile.md#{anchor}: no such heading"


def _table_headings() -> dict[str, str]:
    """``[auth]`` / ``[[credentials]]`` headings of docs/profile.md, by table name."""
    found = {}
    for _, text in _headings():
        match = re.fullmatch(r"(?:The )?`\[{1,2}([\w.]+)\]{1,2}`(?: table)?", text)
        if match:
            found[match[1]] = text
    return found


def _profile_tables() -> list[str]:
    data = tomllib.loads(DEFAULT_PROFILE.read_text(encoding="utf-8"))
    return list(data)


@pytest.mark.parametrize("table", _profile_tables())
def test_every_table_of_the_default_profile_has_its_own_heading(table: str) -> None:
    assert table in _table_headings(), f"docs/profile.md has no heading for [{table}]"


def _section_text(heading: str) -> str:
    """The text under ``heading`` up to the next heading of the same or a higher level."""
    text = PROFILE_DOC.read_text(encoding="utf-8")
    matches = list(HEADING.finditer(text))
    for i, match in enumerate(matches):
        if match[2] == heading:
            level = len(match[1])
            end = next((m.start() for m in matches[i + 1 :] if len(m[1]) <= level), len(text))
            return text[match.end() : end]
    raise AssertionError(f"no heading {heading!r}")


def _schema_keys() -> list[tuple[str, str]]:
    schema: dict[str, Any] = json.loads(PROFILE_SCHEMA.read_text(encoding="utf-8"))
    keys = []
    for table, node in schema["properties"].items():
        node = node.get("items", node)  # [[credentials]] is an array of tables
        for key, child in node.get("properties", {}).items():
            keys.append((table, key))
            keys += [
                (table, sub) for sub in child.get("properties", {}) if key == "payment_payload"
            ]
    return keys


@pytest.mark.parametrize(("table", "key"), _schema_keys())
def test_every_key_a_profile_may_have_is_documented_under_its_table(table: str, key: str) -> None:
    section = _section_text(_table_headings()[table])
    # `key` itself, or `key.<name>` for a table of named entries (fixtures.currencies.usdc)
    assert re.search(rf"`{key}[`.]", section), f"docs/profile.md does not document {table}.{key}"


def test_the_catalogues_profile_sections_are_the_numbered_sections_of_the_doc() -> None:
    sections = yaml.safe_load(CATALOGUE.read_text(encoding="utf-8"))["sections"]
    wanted = [f"{s['number']}. {s['title']}" for s in sections if s["document"] == "profile"]
    numbered = [text for level, text in _headings() if level == 2 and re.match(r"\d+\. ", text)]
    assert numbered == wanted


def test_the_readmes_two_commands_each_make_their_own_virtual_environment() -> None:
    commands = [
        line
        for line in README.read_text(encoding="utf-8").splitlines()
        if line.startswith("python3 -m venv ")
    ]
    venvs = [line.split()[3] for line in commands]
    assert len(commands) == 2, commands
    assert len(set(venvs)) == 2, f"both README commands use {venvs[0]}: the second reuses the first"


def test_the_readme_stays_what_a_newcomer_needs() -> None:
    # Measurements and option details belong in docs/ (linked), not in the README.
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def count_problems(text: str) -> list[str]:
    """Each count stated beside a ``requirements`` command that is not what the command lists."""
    problems = []
    for claim in COUNT_CLAIM.finditer(text):
        args = shlex.split(claim["args"])
        result = CliRunner().invoke(main, ["requirements", *args, "--format", "ids"])
        assert result.exit_code == 0, result.output
        listed = len(result.stdout.split())
        if int(claim["count"]) != listed:
            shown = " ".join(["requirements", *args])
            problems.append(f"{shown!r} is said to list {claim['count']}, it lists {listed}")
    return problems


def test_a_count_stated_beside_a_requirements_command_is_checked() -> None:
    # the README's line of issue 17: the whole catalogue's count beside one layer's listing
    profile = len(_requirement_ids("--layer", "profile"))
    stated = "payment-conformance requirements --layer profile   # the requirement catalogue"
    assert count_problems(f"{stated} (334 entries)") == [
        f"'requirements --layer profile' is said to list 334, it lists {profile}"
    ]
    assert count_problems(f"{stated} ({profile} entries)") == []


def _requirement_ids(*args: str) -> list[str]:
    result = CliRunner().invoke(main, ["requirements", *args, "--format", "ids"])
    return result.stdout.split()


@pytest.mark.parametrize("page", [README, *DOC_PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_requirement_count_a_page_states_is_what_the_command_lists(page: Path) -> None:
    assert count_problems(page.read_text(encoding="utf-8")) == []
