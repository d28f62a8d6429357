"""file_writes: a file written into a shared directory never goes through a link planted there."""

from __future__ import annotations

import os
from pathlib import Path

from conformance.core.file_writes import symbolic_links, write_replacing


def test_a_planted_link_is_replaced_and_its_target_left_alone(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    (tmp_path / "reports").mkdir()
    planted = tmp_path / "reports" / "summary.md"
    planted.symlink_to("../victim.txt")
    write_replacing(planted, b"# report\n")
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not planted.is_symlink() and planted.read_bytes() == b"# report\n"
    assert sorted(p.name for p in planted.parent.iterdir()) == ["summary.md"]  # no temporary


def test_a_new_file_gets_the_mode_a_plain_create_gives(tmp_path: Path) -> None:
    umask = os.umask(0o027)
    try:
        write_replacing(tmp_path / "report.html", b"x")
    finally:
        os.umask(umask)
    assert (tmp_path / "report.html").stat().st_mode & 0o777 == 0o640


def test_symbolic_links_names_every_link_among_the_names_dangling_ones_too(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("missing")
    (tmp_path / "b").write_text("", encoding="utf-8")
    (tmp_path / "c").symlink_to("b")
    assert symbolic_links(tmp_path, ["a", "b", "c", "d"]) == [tmp_path / "a", tmp_path / "c"]
