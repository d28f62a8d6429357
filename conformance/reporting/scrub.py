"""Make untrusted text safe to put in a report: no secret, no unprintable byte, bounded size.

Evidence reaches the reports already redacted by the suite; the reports redact it again
(defence in depth) with ``conformance.core.redaction`` and with every secret value they can
learn from the run itself. They learn secrets only from what the suite sent (secret headers and
secret fields of its requests, secret-looking options, the secrets the caller names) and from
the secret rotate-secret returned: a server controls everything else it answers, and a value
learnt from there (``{"signature": "Idempotency-Key"}``) would hide those words everywhere.
Secret fields and headers of responses are still redacted where they stand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from conformance.core import jsonsafe
from conformance.core.evidence import curl_command
from conformance.core.redaction import (
    REDACTED,
    SECRET_FIELDS,
    SECRET_HEADERS,
    WEBHOOK_SECRET,
    is_secret_header,
    names_a_secret_field,
    redact_headers,
    redact_text,
)
from conformance.core.results import Evidence, RunResult
from conformance.core.untrusted import mask_url_passwords, printable, split_url, url_password

# A learnt secret shorter than this is not replaced everywhere: replacing "1" or "abc" in every
# text would wreck the report and such values are not secrets anyway.
MIN_SECRET_LENGTH = 8

_SECRET_OPTION = re.compile(r"(?i).*(secret|password|token|signature|private[-_]?key).*")
# Wider than core.redaction's: a server may use base64url ("-", "_") for its webhook secrets.
_FIELD_NAMES = "|".join(re.escape(f) for f in sorted(SECRET_FIELDS))
# Secret fields in text no JSON parser accepts (a body cut short, a message quoting JSON), and
# in query strings or form bodies: the value goes, the name stays.
_TEXT_SECRET_FIELD = re.compile(
    r'(?i)("(?:' + _FIELD_NAMES + r')"\s*:\s*")((?:[^"\\]|\\.)*)'
    r"|((?<![A-Za-z0-9_])(?:" + _FIELD_NAMES + r")=)([^&\s'\"]*)"
)
_CURL_SECRET_HEADER = re.compile(
    r"(?i)(" + "|".join(re.escape(h) for h in sorted(SECRET_HEADERS)) + r")(\s*:\s*)[^'\"\r\n]*"
)
# Any ``-H 'Name: value'`` of a curl command: the run's gateway headers are secret by name.
_CURL_HEADER = re.compile(r"(?<=-H ['\"])([!#$%&*+.^_`|~0-9A-Za-z-]+)(\s*:\s*)[^'\"\r\n]*")
_CURL_USER = re.compile(r"(\s(?:-u|--user)\s+)('[^']*'|\"[^\"]*\"|[^\s]+)")
# The operation that hands out a webhook secret (spec section 4, operation 3), by URL path; the
# base URL may carry a path prefix.
_ROTATE_SECRET_PATH = re.compile(r"/v1/webhook-endpoints/[^/]+/rotate-secret/?")


def clip(text: str, limit: int) -> tuple[str, bool]:
    """At most ``limit`` characters of ``text``, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def _secret_pairs(text: str) -> list[tuple[str, Any]]:
    """Every (key, value) of a secret field in a JSON text, duplicates included; [] if not JSON."""
    found: list[tuple[str, Any]] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found.extend((k, v) for k, v in pairs if k.lower() in SECRET_FIELDS)
        return dict(pairs)

    try:
        jsonsafe.loads(text, object_pairs_hook=hook)
    except (ValueError, RecursionError):
        return []
    return found


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def hands_out_a_secret(evidence: Evidence) -> bool:
    """Whether ``evidence`` is a rotate-secret call, whose answer is a secret the run uses."""
    path = split_url(evidence.url).path  # the URL is masked
    return evidence.method.upper() == "POST" and _ROTATE_SECRET_PATH.search(path) is not None


def learn_secrets(run: RunResult, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Secret values the run itself reveals, longest first (so no partial replacement wins).

    Only what the suite sent and what rotate-secret returned: never a value the server put in
    any other response.
    """
    secrets: set[str] = {s for s in extra if s}
    password = url_password(run.target.base_url)  # of a --base-url user:password@host
    if password:
        secrets.add(password)
    for key, value in run.options.items():
        if Scrubber.is_secret_option(key):
            secrets.add(value)
    seen: set[int] = set()
    for check in _all_checks(run):
        evidence = check.evidence
        if evidence is None or id(evidence) in seen:
            continue
        seen.add(id(evidence))
        headers = evidence.request_headers
        secrets.update(v for k, v in headers.items() if is_secret_header(k))
        sent = [evidence.url, evidence.request_body]
        if hands_out_a_secret(evidence):
            sent.append(evidence.response_body)
        for text in sent:
            if text:
                for _, value in _secret_pairs(text):
                    secrets.update(_strings(value))
                secrets.update(_text_secret_values(text))
    usable = {s.strip() for s in secrets} - {REDACTED}
    long_enough = (s for s in usable if len(s) >= MIN_SECRET_LENGTH)
    return tuple(sorted(long_enough, key=lambda s: (-len(s), s)))


def _text_secret_values(text: str) -> list[str]:
    if not names_a_secret_field(text):
        return []
    return [m.group(2) or m.group(4) or "" for m in _TEXT_SECRET_FIELD.finditer(text)]


def _redact_text_fields(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return match.group(1) + REDACTED
        return match.group(3) + REDACTED

    if not names_a_secret_field(text):
        return text
    return _TEXT_SECRET_FIELD.sub(replace, text)


def _all_checks(run: RunResult) -> Iterable[Any]:
    yield from run.checks
    for requirement in run.requirements:
        yield from requirement.checks


class Scrubber:
    """Redacts and cleans every text of one run with the secrets learnt from it."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = tuple(secrets)

    @staticmethod
    def is_secret_option(name: str) -> bool:
        """An option whose value is a secret by its name (``api-secret``, ``token``...)."""
        return _SECRET_OPTION.fullmatch(name) is not None

    def _known(self, text: str) -> str:
        text = _redact_text_fields(WEBHOOK_SECRET.sub(REDACTED, mask_url_passwords(text)))
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def text(self, text: str) -> str:
        """A free text (message, reason, option): known secrets and URL passwords out, printable."""
        return printable(self._known(text))[0]

    @staticmethod
    def catalogue(text: str) -> str:
        """Text of the suite's catalogue (requirement, check id, family): made printable only.

        Never redacted: a secret that happened to equal catalogue words must not hide them.
        """
        return printable(text)[0]

    def url(self, url: str) -> str:
        return self.text(url)

    def headers(self, headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        return tuple((printable(k)[0], self.text(v)) for k, v in redact_headers(headers).items())

    def body(self, body: str) -> tuple[str, bool]:
        """A request or response body, and whether unprintable characters were escaped.

        Only secret values change (secret fields at any depth, duplicate keys included, and
        the secrets known to the run); every other byte is as received: duplicate keys, number
        spellings such as ``1e999``, layout.
        """
        return printable(self._known(redact_text(body, self.secrets)))

    def curl(self, curl: str) -> str:
        curl = _CURL_SECRET_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", curl)
        curl = _CURL_HEADER.sub(
            lambda m: f"{m[1]}{m[2]}{REDACTED}" if is_secret_header(m[1]) else m[0], curl
        )
        curl = _CURL_USER.sub(lambda m: f"{m.group(1)}{REDACTED}", curl)
        return self.text(curl)

    def evidence_curl(self, evidence: Evidence) -> str:
        """The evidence's curl command, or one built from the exchange when it has none."""
        if evidence.curl.strip():
            return self.curl(evidence.curl)
        return self.curl(
            curl_command(
                evidence.method, evidence.url, evidence.request_headers, evidence.request_body
            )
        )
