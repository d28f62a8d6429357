"""Reading recordings: HAR and JSON Lines as a stream of exchanges, and clear errors."""

from __future__ import annotations

import base64
import errno
import gzip
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from conformance.validator import readers
from conformance.validator.exchange import Exchange, RecordingError
from conformance.validator.readers import MAX_ENTRY_BYTES, iter_exchanges, parse_jsonl_line
from tests.validator.samples import exchange, har_entry, jsonl_record, write_har, write_jsonl

PNG = b"\x89PNG\r\n\x1a\n\x00\xff\xfe"

SAMPLE = [
    exchange(
        "post",
        "/v1/payments?expand=refunds",
        request_headers=[
            ("Content-Type", "application/json"),
            ("X-Tag", "one"),
            ("x-tag", "two"),
            ("X-Tag", "three"),
            ("X-Odd", 'a\\"b\\\\ [{'),
            ("Idempotency-Key", "k-1"),
        ],
        request_body={"amount": 1000, "currency": "EUR", "note": "café €5 \u2028"},
        status=201,
        response_headers=[("Content-Type", "application/json"), ("Set-Cookie", "a=1")],
        response_body={"id": "pay_1", "status": "pending"},
    ),
    exchange("GET", "/v1/files/logo", status=200, response_body=PNG),
    exchange("GET", "/v1/payments/pay_1", status=None, started_at=None),
]


def _strip_source(exchanges: list[Exchange]) -> list[Exchange]:
    return [
        Exchange(**{**ex.__dict__, "source": ""})  # type: ignore[arg-type]
        for ex in exchanges
    ]


@pytest.mark.parametrize("write, suffix", [(write_har, ".har"), (write_jsonl, ".jsonl")])
def test_a_recording_reads_back_as_the_exchanges_written(
    tmp_path: Path, write: object, suffix: str
) -> None:
    path = tmp_path / f"traffic{suffix}"
    write(path, SAMPLE)  # type: ignore[operator]
    read = list(iter_exchanges(path))
    assert _strip_source(read) == SAMPLE
    first, png, unanswered = read
    assert first.method == "POST"
    tags = first.request_headers[1:4]
    assert tags == (("X-Tag", "one"), ("x-tag", "two"), ("X-Tag", "three"))  # order, dupes
    assert first.header("x-TAG") == "one"
    assert first.header("set-cookie", response=True) == "a=1"
    assert first.path == "/v1/payments" and first.query == "expand=refunds"
    assert png.response_body == PNG  # written as base64, decoded on reading
    assert unanswered.status is None and unanswered.response_body == b""
    kind = "entry" if suffix == ".har" else "line"
    assert [ex.source for ex in read] == [f"traffic{suffix} {kind} {n}" for n in (1, 2, 3)]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_har_entries_cut_anywhere_by_the_read_buffer_read_the_same(
    tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A tiny read size cuts strings, escapes, UTF-8 sequences and numbers at every position.
    monkeypatch.setattr(readers, "_CHUNK", chunk)
    path = write_har(tmp_path / "traffic.har", SAMPLE)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # and a byte order mark
    assert _strip_source(list(iter_exchanges(path))) == SAMPLE


def test_the_har_reader_takes_what_browsers_export(tmp_path: Path) -> None:
    form = har_entry(exchange("POST", "/v1/form", status=200))
    form["request"]["postData"] = {
        "mimeType": "application/x-www-form-urlencoded",
        "params": [{"name": "a", "value": "1 2"}, {"name": "b", "value": "x"}],
    }
    aborted = har_entry(exchange("GET", "/v1/slow"))
    aborted["response"] = {"status": 0, "headers": [], "content": {"size": 0}}
    no_response = har_entry(exchange("GET", "/v1/none"))
    del no_response["response"]
    document = {
        "log": {
            "entries": [form, aborted, no_response],  # entries before pages: any order
            "version": "1.2",
            "pages": [{"id": "page_1", "title": "[{ brackets in a string"}],
            "comment": "",
        }
    }
    path = tmp_path / "chrome.har"
    path.write_text("\ufeff" + json.dumps(document, indent=2), encoding="utf-8")  # BOM, pretty
    form_ex, aborted_ex, none_ex = iter_exchanges(path)
    assert form_ex.request_body == b"a=1+2&b=x"
    assert aborted_ex.status is None and none_ex.status is None


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    line = json.dumps(jsonl_record(SAMPLE[0]))
    (tmp_path / "bom.jsonl").write_text("\ufeff" + line + "\n", encoding="utf-8")
    assert [ex.url for ex in iter_exchanges(tmp_path / "bom.jsonl")] == [SAMPLE[0].url]


def test_empty_recordings(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "blank.jsonl").write_bytes(b"\n\n")
    assert list(iter_exchanges(tmp_path / "empty.jsonl")) == []
    assert list(iter_exchanges(tmp_path / "blank.jsonl")) == []
    assert list(iter_exchanges(write_har(tmp_path / "none.har", []))) == []
    (tmp_path / "empty.har").write_bytes(b"")
    with pytest.raises(RecordingError, match=r"empty\.har: the file is empty"):
        list(iter_exchanges(tmp_path / "empty.har"))


def test_format_is_taken_from_the_suffix_or_given(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "traffic.txt", SAMPLE[:1])
    with pytest.raises(RecordingError, match=r"traffic\.txt: cannot tell the format"):
        iter_exchanges(path)
    assert len(list(iter_exchanges(path, format="jsonl"))) == 1
    ndjson = write_jsonl(tmp_path / "traffic.ndjson", SAMPLE[:1])
    assert len(list(iter_exchanges(ndjson))) == 1
    with pytest.raises(RecordingError, match="unknown recording format 'xml'"):
        iter_exchanges(path, format="xml")


def test_missing_file_and_directory_are_refused_at_once(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match=r"nothere\.har: no such file"):
        iter_exchanges(tmp_path / "nothere.har")
    (tmp_path / "dir.har").mkdir()
    with pytest.raises(RecordingError, match=r"dir\.har is a directory"):
        iter_exchanges(tmp_path / "dir.har")


def _har_text(*entries: str) -> str:
    return '{"log": {"version": "1.2", "entries": [' + ",".join(entries) + "]}}"


def _assert_no_chained_traceback(error: BaseException) -> None:
    """The error stands alone: no parser exception chained to it for a traceback to show."""
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__


GOOD_ENTRY = json.dumps(har_entry(SAMPLE[0]))

BAD_HARS = {
    "not JSON": ("hello", r"not a HAR recording: it starts with 'h'"),
    "a JSON array": ("[1, 2]", r"starts with '\['"),
    "binary": (None, r"is not UTF-8 text \(invalid byte at offset 2\)"),
    "no entries": ('{"log": {"version": "1.2"}}', r"no log\.entries"),
    "no log": ('{"other": {}}', r"no log\.entries"),
    "entries not a list": ('{"log": {"entries": {}}}', r"log\.entries is not a list"),
    "entry not an object": (_har_text(GOOD_ENTRY, "3"), r"entry 2 is not a JSON object"),
    "invalid entry": (
        _har_text(GOOD_ENTRY, '{"request": {"method" "GET"}}'),
        r"entry 2 is not valid JSON: Expecting ':' delimiter",
    ),
    "truncated in an entry": (
        _har_text(GOOD_ENTRY, GOOD_ENTRY)[:-200],
        r"the file ends in the middle of entry 2 \(1 entries read\)",
    ),
    "truncated in a string": (
        _har_text(GOOD_ENTRY)[: GOOD_ENTRY.index("Idempotency") + 40],
        r"the file ends in the middle of entry 1 \(0 entries read\)",
    ),
    "truncated after an entry": (
        _har_text(GOOD_ENTRY)[:-3],
        r"the file ends after entry 1, before the end of log\.entries",
    ),
    "truncated at the end": (_har_text(GOOD_ENTRY)[:-1], r"the file ends"),
    "trailing data": (_har_text(GOOD_ENTRY) + "{}", r"unexpected data after the end"),
    "missing method": (
        _har_text('{"request": {"url": "http://h/"}}'),
        r"entry 1: request\.method is missing",
    ),
    "missing request": (_har_text('{"response": {}}'), r"entry 1: request is missing"),
    "wrong url type": (
        _har_text('{"request": {"method": "GET", "url": 5}}'),
        r"entry 1: request\.url must be a non-empty string, not int",
    ),
    "wrong header shape": (
        _har_text('{"request": {"method": "GET", "url": "http://h/", "headers": [["a", "b"]]}}'),
        r"entry 1: request\.headers\[0\] must be an object with string name and value",
    ),
    "status as a string": (
        _har_text(
            '{"request": {"method": "GET", "url": "http://h/"}, "response": {"status": "200"}}'
        ),
        r"entry 1: response\.status must be an integer, not str",
    ),
    "bad base64": (
        _har_text(
            '{"request": {"method": "GET", "url": "http://h/"}, "response": {"status": 200,'
            ' "content": {"text": "%%%", "encoding": "base64"}}}'
        ),
        r"entry 1: response\.content\.text is not valid base64",
    ),
    "nested too deep": (
        _har_text(
            '{"request": {"method": "GET", "url": "http://h/"}, "x": '
            + "[" * 100_000
            + "]" * 100_000
            + "}"
        ),
        r"entry 1 nests deeper than 256 levels",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_HARS))
def test_a_bad_har_gets_a_clear_error(tmp_path: Path, case: str) -> None:
    text, message = BAD_HARS[case]
    path = tmp_path / "bad.har"
    if text is None:
        path.write_bytes(b'{"\xff\xfe\x00\x01 garbage')
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(RecordingError, match=message) as caught:
        list(iter_exchanges(path))
    assert str(caught.value).startswith(str(path)), caught.value
    _assert_no_chained_traceback(caught.value)


GOOD_LINE = json.dumps(jsonl_record(SAMPLE[0]))

BAD_JSONL = {
    "not JSON": (
        GOOD_LINE + "\nhello\n",
        r"line 2 is not valid JSON: Expecting value \(column 1\)",
    ),
    "binary": (None, r"line 1 is not UTF-8 text"),
    "not an object": ("[1]\n", r"line 1 is not a JSON object"),
    "truncated": (GOOD_LINE + "\n" + GOOD_LINE[:-30], r"the file ends in the middle of line 2"),
    "missing url": ('{"request": {"method": "GET"}}\n', r"line 1: request\.url is missing"),
    "headers as objects": (
        '{"request": {"method": "GET", "url": "http://h/", "headers": [{"name": "a"}]}}\n',
        r"line 1: request\.headers\[0\] must be a \[name, value\] pair of strings",
    ),
    "response without status": (
        '{"request": {"method": "GET", "url": "http://h/"}, "response": {}}\n',
        r"line 1: response\.status is missing",
    ),
    "unknown body encoding": (
        '{"request": {"method": "GET", "url": "http://h/", "body": "", "body_encoding": "gz"}}\n',
        r"line 1: request\.body_encoding must be 'utf-8' or 'base64', not 'gz'",
    ),
    "nested too deep": (
        '{"request": {"method": "GET", "url": "http://h/"}, "x": '
        + "[" * 100_000
        + "]" * 100_000
        + "}\n",
        r"line 1 nests deeper than 256 levels",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_JSONL))
def test_a_bad_json_lines_file_gets_a_clear_error(tmp_path: Path, case: str) -> None:
    text, message = BAD_JSONL[case]
    path = tmp_path / "bad.jsonl"
    if text is None:
        path.write_bytes(b"\x00\xff\xfe\x89PNG garbage\n")
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(RecordingError, match=message) as caught:
        list(iter_exchanges(path))
    assert str(caught.value).startswith(str(path)), caught.value
    _assert_no_chained_traceback(caught.value)


def test_exchanges_before_a_fault_are_delivered_first(tmp_path: Path) -> None:
    path = tmp_path / "partial.har"
    path.write_text(_har_text(GOOD_ENTRY, GOOD_ENTRY, GOOD_ENTRY)[:-100], encoding="utf-8")
    read = []
    with pytest.raises(RecordingError, match="middle of entry 3"):
        for ex in iter_exchanges(path):
            read.append(ex)
    assert len(read) == 2


def _oversized_entry_file(path: Path, har: bool) -> None:
    body = base64.b64encode(b"\x00" * 1024).decode() * (MAX_ENTRY_BYTES // 1300)
    record = jsonl_record(exchange("GET", "/v1/big", status=200, response_body=b"x"))
    record["response"]["body"] = body
    if har:
        entry = har_entry(exchange("GET", "/v1/big", status=200))
        entry["response"]["content"]["text"] = body
        path.write_text(_har_text(GOOD_ENTRY, json.dumps(entry)), encoding="utf-8")
    else:
        path.write_text(GOOD_LINE + "\n" + json.dumps(record) + "\n", encoding="utf-8")


@pytest.mark.parametrize("suffix, where", [(".har", "entry 2"), (".jsonl", "line 2")])
def test_an_entry_larger_than_the_cap_is_refused(tmp_path: Path, suffix: str, where: str) -> None:
    path = tmp_path / f"huge{suffix}"
    _oversized_entry_file(path, har=suffix == ".har")
    assert path.stat().st_size > MAX_ENTRY_BYTES
    with pytest.raises(RecordingError, match=f"{where} is larger than 64 MiB"):
        list(iter_exchanges(path))


def test_one_json_line_from_a_partition() -> None:
    ex = parse_jsonl_line(GOOD_LINE, "shard-3.jsonl line 7")
    assert ex.source == "shard-3.jsonl line 7" and ex.method == "POST"
    assert parse_jsonl_line(GOOD_LINE.encode(), "s line 1").request_body == SAMPLE[0].request_body
    with pytest.raises(RecordingError, match=r"^shard-3\.jsonl line 8 is not valid JSON"):
        parse_jsonl_line("{", "shard-3.jsonl line 8")


# Reads the file given and prints the count and how far the peak RSS rose above the RSS before
# reading, in MiB, in a fresh process so earlier tests' allocations do not hide the reader's.
# /proc's VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the forking process.
_MEASURE = textwrap.dedent(
    """
    import re, sys
    from pathlib import Path
    from conformance.validator.readers import iter_exchanges

    def kib(field):
        status = Path("/proc/self/status").read_text()
        return int(re.search(field + r":\\s*(\\d+)", status).group(1))

    before = kib("VmRSS")
    count = sum(1 for _ in iter_exchanges(Path(sys.argv[1])))
    print(count, (kib("VmHWM") - before) / 1024)
    """
)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="measures RSS in /proc")
@pytest.mark.parametrize("write", [write_har, write_jsonl])
def test_memory_stays_flat_on_a_large_file(tmp_path: Path, write: object) -> None:
    # some 80 MiB (twice the growth allowed) in 5,000 exchanges: the bytes make the file big,
    # the exchange count only the time it takes
    padding = "p" * 12_000
    count = 5_000

    def exchanges():  # type: ignore[no-untyped-def]
        for n in range(count):
            yield exchange(
                "POST",
                "/v1/payments",
                request_headers=[("Idempotency-Key", f"k{n}")],
                request_body={"amount": n, "note": padding},
                status=201,
                response_body={"id": f"pay_{n}", "note": padding},
            )

    path = write(tmp_path / ("big.har" if write is write_har else "big.jsonl"), exchanges())  # type: ignore[operator]
    assert path.stat().st_size > 80 * 1024 * 1024
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    read, growth_mib = result.stdout.split()
    assert int(read) == count
    assert float(growth_mib) < 40, f"peak RSS grew by {growth_mib} MiB"


# An entry's cost is bounded by what it holds, not only by its bytes: 63 MB of small objects
# decoded into 1.5 GB, and 2 million headers into 780 MB, before these bounds.

SECRET_URL = "http://user:s3cr3t@h.test"


def _costly_entry(suffix: str, key: str, value: object) -> str:
    """One entry (HAR) or line (JSON Lines) of a GET on SECRET_URL with ``key: value`` added."""
    ex = exchange("GET", "/v1/payments", base_url=SECRET_URL)
    record = har_entry(ex) if suffix == ".har" else jsonl_record(ex)
    record[key] = value
    return json.dumps(record)


def _file_of(tmp_path: Path, suffix: str, costly: str) -> Path:
    path = tmp_path / f"costly{suffix}"
    if suffix == ".har":
        path.write_text(_har_text(GOOD_ENTRY, costly), encoding="utf-8")
    else:
        path.write_text(GOOD_LINE + "\n" + costly + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix, where", [(".har", "entry 2"), (".jsonl", "line 2")])
@pytest.mark.parametrize(
    "padding",
    [[{}] * (readers.MAX_ENTRY_VALUES + 1), [1000] * (readers.MAX_ENTRY_VALUES + 1)],
    ids=["empty objects", "numbers"],
)
def test_an_entry_of_too_many_small_values_is_refused_before_it_is_decoded(
    tmp_path: Path, suffix: str, where: str, padding: list[object]
) -> None:
    path = _file_of(tmp_path, suffix, _costly_entry(suffix, "_padding", padding))
    with pytest.raises(RecordingError) as caught:
        list(iter_exchanges(path))
    message = str(caught.value)
    assert message == (
        f"{path}: {where} (GET http://user:[redacted]@h.test/v1/payments) holds more than "
        f"{readers.MAX_ENTRY_VALUES:,} JSON values (objects, arrays, strings, numbers)"
    )
    assert "s3cr3t" not in message


@pytest.mark.parametrize("suffix", [".har", ".jsonl"])
def test_values_inside_strings_do_not_count(tmp_path: Path, suffix: str) -> None:
    body = json.dumps([{}] * (readers.MAX_ENTRY_VALUES + 1))  # one string of many commas
    path = _file_of(tmp_path, suffix, _costly_entry(suffix, "comment", body))
    assert len(list(iter_exchanges(path))) == 2


@pytest.mark.parametrize("suffix, where", [(".har", "entry 2"), (".jsonl", "line 2")])
def test_a_message_with_more_headers_than_any_server_takes_is_refused(
    tmp_path: Path, suffix: str, where: str
) -> None:
    at_the_limit = exchange("GET", "/v1/a", request_headers=[("X-H", "v")] * readers.MAX_HEADERS)
    beyond = exchange(
        "POST",
        "/v1/b",
        status=200,
        response_headers=[("X-H", "v")] * (readers.MAX_HEADERS + 1),
        base_url=SECRET_URL,
    )
    write = write_har if suffix == ".har" else write_jsonl
    path = write(tmp_path / f"headers{suffix}", [at_the_limit, beyond])
    read = iter_exchanges(path)
    assert len(next(read).request_headers) == readers.MAX_HEADERS
    with pytest.raises(RecordingError) as caught:
        next(read)
    assert str(caught.value) == (
        f"{path}: {where} (POST http://user:[redacted]@h.test/v1/b): response.headers holds "
        f"{readers.MAX_HEADERS + 1:,} headers, more than {readers.MAX_HEADERS:,}"
    )


def test_a_symbolic_link_loop_is_named_as_one(tmp_path: Path) -> None:
    (tmp_path / "a.har").symlink_to(tmp_path / "b.har")
    (tmp_path / "b.har").symlink_to(tmp_path / "a.har")
    with pytest.raises(RecordingError, match=r"a\.har: a symbolic link loop"):
        iter_exchanges(tmp_path / "a.har")


def test_a_dangling_symbolic_link_is_named_as_one(tmp_path: Path) -> None:
    (tmp_path / "gone.har").symlink_to(tmp_path / "deleted.har")
    with pytest.raises(RecordingError, match=r"gone\.har: a symbolic link to a missing file"):
        iter_exchanges(tmp_path / "gone.har")


def test_a_device_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / "zero.har").symlink_to("/dev/zero")
    with pytest.raises(RecordingError, match=r"zero\.har is a character device, not a file"):
        iter_exchanges(tmp_path / "zero.har")


def test_a_file_without_read_permission_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_har(tmp_path / "locked.har", SAMPLE)

    def denied(*args: object, **kwargs: object) -> int:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    monkeypatch.setattr(os, "open", denied)  # the tests may run as root, who reads anything
    with pytest.raises(RecordingError, match=r"locked\.har: permission denied"):
        iter_exchanges(path)


def test_a_pipe_is_read_as_a_stream(tmp_path: Path) -> None:
    # validate <(zcat traffic.har.gz): the shell passes a pipe as /dev/fd/N
    reader, writer = os.pipe()
    data = write_har(tmp_path / "t.har", SAMPLE).read_bytes()
    feeder = threading.Thread(target=lambda: (os.write(writer, data), os.close(writer)))
    feeder.start()
    try:
        got = list(iter_exchanges(Path(f"/dev/fd/{reader}"), format="har"))
    finally:
        feeder.join()
        os.close(reader)
    assert [ex.url for ex in got] == [ex.url for ex in SAMPLE]


def test_a_named_pipe_nobody_writes_to_never_hangs(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.har")
    probe = "from conformance.validator.readers import iter_exchanges as i; list(i(__import__('pathlib').Path('pipe.har')))"  # noqa: E501
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert "pipe.har: the file is empty (a named pipe nothing was written to)" in result.stderr


# -- compressed recordings, bodies not captured, durations ------------------------------------
@pytest.mark.parametrize(
    "write, name", [(write_har, "traffic.har.gz"), (write_jsonl, "t.jsonl.gz")]
)
def test_a_gzip_recording_reads_as_the_file_it_holds(
    tmp_path: Path, write: object, name: str
) -> None:
    plain = write(tmp_path / name.removesuffix(".gz"), SAMPLE)  # type: ignore[operator]
    packed = tmp_path / name
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert _strip_source(list(iter_exchanges(packed))) == SAMPLE
    # by its content, whatever the suffix
    disguised = tmp_path / f"disguised{plain.suffix}"
    disguised.write_bytes(packed.read_bytes())
    assert len(list(iter_exchanges(disguised))) == len(SAMPLE)


def test_a_gzip_bomb_is_refused_after_a_bounded_read(tmp_path: Path) -> None:
    """A HAR of 200 MiB of blanks compresses to about 200 KiB: refused once the text grows
    more than MAX_GZIP_RATIO times the bytes read, never decompressed whole."""
    path = tmp_path / "bomb.har.gz"
    with gzip.open(path, "wb") as out:
        out.write(b'{"log": {"entries": [')
        blanks = b" " * (1024 * 1024)
        for _ in range(200):
            out.write(blanks)
        out.write(b"]}}")
    assert path.stat().st_size < 1024 * 1024
    with pytest.raises(RecordingError, match=r"bomb\.har\.gz: decompresses to more than 500 times"):
        list(iter_exchanges(path))


def test_cut_or_corrupt_gzip_gets_a_clear_error(tmp_path: Path) -> None:
    data = gzip.compress(write_har(tmp_path / "t.har", SAMPLE).read_bytes())
    (tmp_path / "cut.har.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(RecordingError, match=r"cut\.har\.gz: the gzip data ends early"):
        list(iter_exchanges(tmp_path / "cut.har.gz"))
    (tmp_path / "bad.har.gz").write_bytes(data[:10] + b"\xff" * 40 + data[50:])
    with pytest.raises(RecordingError, match=r"bad\.har\.gz: not valid gzip data"):
        list(iter_exchanges(tmp_path / "bad.har.gz"))


def test_a_har_response_without_text_is_a_body_not_captured(tmp_path: Path) -> None:
    """Browsers often leave content.text out: the body is missing, not empty; a body known
    to be empty (size 0, a 204) is captured."""
    entries = []
    for status, content in (
        (201, {"size": 35, "mimeType": "application/json"}),
        (200, {"size": 0, "mimeType": "application/json"}),
        (204, {}),
        (200, {"size": 2, "mimeType": "application/json", "text": "{}"}),
    ):
        entry = har_entry(exchange("POST", "/v1/payments", status=status))
        entry["response"]["content"] = content
        entry["time"] = 54.25
        entries.append(entry)
    path = tmp_path / "browser.har"
    path.write_text(json.dumps({"log": {"entries": entries}}), encoding="utf-8")
    missing, empty, no_content, whole = iter_exchanges(path)
    assert missing.response_body == b"" and missing.response_body_missing == readers.NOT_CAPTURED
    assert "content.text absent" in readers.NOT_CAPTURED
    assert empty.response_body_missing is None and no_content.response_body_missing is None
    assert whole.response_body == b"{}" and whole.response_body_missing is None
    assert whole.duration_ms == 54.25
