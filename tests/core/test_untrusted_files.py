"""untrusted_files: evidence files someone else prepared, read only when they are what they say."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.core import jsonsafe
from conformance.core.untrusted_files import (
    UntrustedFileError,
    open_file,
    read_bytes,
    read_json,
    sha256,
)


def test_a_regular_file_reads_whole_within_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(b'{"verdict": "CONFORMANT"}')
    assert read_bytes(path, max_bytes=25) == b'{"verdict": "CONFORMANT"}'
    assert read_json(path, max_bytes=25) == {"verdict": "CONFORMANT"}
    assert sha256(path, max_bytes=25) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_over_its_bound_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    with path.open("wb") as sparse:
        sparse.truncate(10**12)  # a terabyte that takes no disk: reading it would take hours
    for read in (read_bytes, sha256, read_json):
        with pytest.raises(UntrustedFileError, match=r"summary\.md: 1,000,000,000,000 bytes is"):
            read(path, max_bytes=1024)


def test_symbolic_links_are_followed_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_bytes(b"text")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    assert read_bytes(tmp_path / "link.md", max_bytes=4) == b"text"
    with pytest.raises(UntrustedFileError, match=r"link\.md is a symbolic link, not a regular"):
        read_bytes(tmp_path / "link.md", max_bytes=4, follow_symlinks=False)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: p.symlink_to("/dev/zero"), "is a character device, not a regular file"),
        (lambda p: os.mkfifo(p), "is a named pipe, not a regular file"),
        (lambda p: p.mkdir(), "is a directory, not a regular file"),
        (lambda p: p.symlink_to(p), ": a symbolic link loop"),
        (lambda p: p.symlink_to(p.parent / "gone"), ": a symbolic link to a missing file"),
        (lambda p: None, ": no such file"),
    ],
    ids=["device", "named pipe", "directory", "link loop", "dangling link", "missing"],
)
def test_what_is_not_a_regular_file_is_named_and_never_blocks(
    tmp_path: Path, make: Callable[[Path], object], said: str
) -> None:
    path = tmp_path / "manifest.json"
    make(path)
    with pytest.raises(UntrustedFileError) as caught:
        read_bytes(path, max_bytes=1024)
    assert str(caught.value).startswith(f"{path}{'' if said.startswith(':') else ' '}{said}")


def test_a_named_pipe_with_no_writer_opens_at_once_and_reads_empty(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "traffic.har")
    handle, _ = open_file(tmp_path / "traffic.har", pipes=True)
    with handle:
        assert handle.read() == b""


def test_json_nested_too_deep_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(UntrustedFileError) as caught:
        read_json(path, max_bytes=1024 * 1024)
    assert str(caught.value) == f"{path}: JSON text nests deeper than 256 levels"


def test_text_that_is_not_json_is_a_value_error(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(b"\xff{")
    with pytest.raises(ValueError):
        read_json(path, max_bytes=1024)
    path.write_bytes(b"{nope")
    with pytest.raises(ValueError):
        read_json(path, max_bytes=1024)


def test_json_holding_more_values_than_asked_is_refused_before_decoding(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text("[" + ",".join(["{}"] * 1000) + "]")  # 1,001 values: the list and its items
    assert len(read_json(path, max_bytes=10_000, max_values=1001)) == 1000
    with pytest.raises(UntrustedFileError) as caught:
        read_json(path, max_bytes=10_000, max_values=1000)
    assert str(caught.value) == f"{path}: JSON text holds more than 1,000 values"


def test_commas_and_brackets_inside_strings_are_not_values() -> None:
    text = json.dumps({"body": "[{}," * 5000, "escaped": '\\",[' * 5000})
    assert not jsonsafe.values_exceed(text, 3)
    assert jsonsafe.values_exceed(text, 2)
    assert not jsonsafe.values_exceed('"unterminated ,,,[[[', 1)
