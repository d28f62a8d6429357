"""Keep secrets out of output and reports: API secrets, signatures, webhook secrets, and the
headers the run was told to send (``run -H``, registered with ``secret_headers``)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping

REDACTED = "[redacted]"
# A signature ``run --record`` masked after checking it against its request with the key's
# secret, saying what it signs (``judge.signatures.Signed``): validate can then judge the
# signature rules without the secret.
SIGNATURE_VERIFIES = "[redacted: verifies]"
SIGNATURE_DOES_NOT_VERIFY = "[redacted: does not verify]"
SIGNATURE_MARKS = frozenset(
    {
        SIGNATURE_VERIFIES,
        SIGNATURE_DOES_NOT_VERIFY,
        "[redacted: signed with another secret]",
        "[redacted: signed over another body]",
        "[redacted: signed over another method or target]",
    }
)
MASKED_VALUES = frozenset({REDACTED, *SIGNATURE_MARKS})
SECRET_HEADERS = frozenset({"x-signature", "webhook-signature", "authorization", "cookie"})
SECRET_FIELDS = frozenset({"secret", "api_secret", "signature", "private_key"})
# Webhook secrets in standard or URL-safe base64.
WEBHOOK_SECRET = re.compile(r"whsec_[A-Za-z0-9+/=_-]+")


# A gateway key shorter than this is masked by its header's name only: replacing "abc" in every
# text would wreck the evidence.
MIN_VALUE_LENGTH = 4
_RUN_HEADERS: list[dict[str, str]] = []  # lower-case name -> value, one dict per active block


@contextlib.contextmanager
def secret_headers(headers: Iterable[tuple[str, str]]) -> Iterator[None]:
    """Within the block the values of ``headers`` are secrets: masked under their names in any
    headers, and as text wherever they appear (``run_secrets``)."""
    _RUN_HEADERS.append({name.lower(): value for name, value in headers})
    try:
        yield
    finally:
        _RUN_HEADERS.pop()


def is_secret_header(name: str) -> bool:
    lowered = name.lower()
    return lowered in SECRET_HEADERS or any(lowered in block for block in _RUN_HEADERS)


def run_secrets() -> tuple[str, ...]:
    """The secret header values of the active blocks, long enough to replace as text."""
    return tuple(
        value
        for block in _RUN_HEADERS
        for value in block.values()
        if len(value.strip()) >= MIN_VALUE_LENGTH
    )


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: (REDACTED if is_secret_header(k) else v) for k, v in headers.items()}


# One token of a JSON text: a string (to its closing quote, or to the end of the text when cut
# short), one of {}[]:, or a run of anything else (whitespace, numbers, literals, commas). The
# alternatives start with different characters and a string body never backtracks: one linear
# pass, whatever the nesting depth.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[{}\[\]:]|[^"{}\[\]:]+', re.DOTALL)
_FIELD_WORDS = ("secret", "signature", "private_key")  # every SECRET_FIELDS name holds one
_REDACTED_VALUE = json.dumps(REDACTED)


def names_a_secret_field(text: str) -> bool:
    """Whether ``text`` holds the name of a secret field in any case, as a case-insensitive
    regular expression would find it (case folding: "ſecret" names one too). A cheap test that
    spares long bodies the slow scans; escaped names (``\\u0073ecret``) are not seen."""
    folded = text.casefold()
    return any(word in folded for word in _FIELD_WORDS)


def _key(token: str) -> str:
    if "\\" not in token:
        return token[1:-1]
    try:
        return str(json.loads(token))
    except ValueError:
        return token[1:-1]


def _secret_value_spans(text: str) -> list[tuple[int, int]]:
    """Where the values of secret fields are in a JSON text, outermost first.

    Lenient: the text need not be valid JSON (a body cut short, two documents...). A secret value
    still open where the text ends runs to the end.
    """
    spans: list[tuple[int, int]] = []
    stack: list[tuple[str, int | None]] = []  # open containers, with the start of a secret one
    key_position = False  # the next string is an object key
    key_is_secret: bool | None = None  # a key was read, its colon not yet
    pending = -1  # >= 0: a secret value starts after this offset
    for match in _TOKEN.finditer(text):
        token, start, end = match.group(), match.start(), match.end()
        first = token[0]
        if first == '"':
            if key_position:
                key_is_secret = _key(token).lower() in SECRET_FIELDS
                key_position = False
            elif pending >= 0:
                spans.append((start, end))
                pending = -1
        elif first == ":":
            if key_is_secret:
                pending = end
            key_is_secret = None
        elif first in "{[":
            stack.append((first, start if pending >= 0 else None))
            pending = -1
            key_position = first == "{"
        elif first in "}]":
            pending = -1  # a scalar before it was handled with its run
            if stack:
                _, secret_start = stack.pop()
                if secret_start is not None:
                    spans.append((secret_start, end))
            key_position = False
        else:  # whitespace, scalars, commas
            value, comma, _ = token.partition(",")
            if pending >= 0 and value.strip():
                offset = start + len(value) - len(value.lstrip())
                spans.append((offset, start + len(value.rstrip())))
                pending = -1
            if comma:
                pending = -1
                key_position = bool(stack) and stack[-1][0] == "{"
    if pending >= 0 and text[pending:].strip():
        spans.append((pending + len(text[pending:]) - len(text[pending:].lstrip()), len(text)))
    spans.extend((start, len(text)) for _, start in stack if start is not None)
    return sorted(spans)


def redact_json_fields(text: str) -> str:
    """``text`` with the value of every secret field (any type, any depth) replaced by
    ``"[redacted]"``, and every other byte as it was: duplicate keys, number spellings (``1e999``),
    whitespace. Text that is not JSON is returned as is."""
    if "\\u" not in text and not names_a_secret_field(text):
        return text  # no secret field name, even escaped: nothing to scan
    parts: list[str] = []
    done = 0
    for start, end in _secret_value_spans(text):
        if start < done:
            continue  # inside a secret value already replaced
        parts += [text[done:start], _REDACTED_VALUE]
        done = end
    parts.append(text[done:])
    return "".join(parts)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Redact a body in place: secret JSON fields, ``whsec_`` values and any known secret string.

    Only the secret values change; the rest is the body as received (see ``redact_json_fields``).
    """
    redacted = WEBHOOK_SECRET.sub(REDACTED, redact_json_fields(text))
    for secret in (*secrets, *run_secrets()):
        if secret:
            redacted = redacted.replace(secret, REDACTED)
    return redacted
