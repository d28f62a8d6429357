"""Routing and transport-level refusals (profile 3, spec 9): which requests no operation serves,
the answer the profile demands for each, and the verdict on the answer.

- a known path with a method it does not have: ``status.method_not_allowed`` (with an ``Allow``
  header listing the path's methods when the profile says so: STATUS-017);
- a path no operation has: the profile's not-found error (STATUS-020), or, without the API's
  authentication headers where the profile checks authentication before routing, its auth error
  for missing headers (STATUS-019);
- an operation's path without its ``/v1`` prefix: not served (VER-001), the not-found error;
- a body over ``status.max_body_bytes``: ``status.payload_too_large`` (STATUS-018);
- a body of a media type other than JSON: one of ``status.unsupported_media_type`` (STATUS-021).

An answer's ``code`` is its body's ``code`` (``NOT_READ`` when the body is unknown: the status
alone is compared). A caller that knows the rest of its request valid (``known_valid``) fails
any other answer; one that cannot know leaves another refusal unjudged.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from conformance.core.profile import ErrorSpec, Profile
from conformance.core.results import Outcome
from conformance.judge.auth import NOT_READ
from conformance.judge.findings import Finding
from conformance.judge.outcomes import media_type

CHECK = "operation"
SIZE_CHECK, MEDIA_CHECK = "request_size", "media_type"
METHOD_NOT_ALLOWED = "STATUS-017"
TOO_LARGE = "STATUS-018"
UNKNOWN_PATH_AUTH = "STATUS-019"
UNKNOWN_PATH = "STATUS-020"
UNSUPPORTED_MEDIA = "STATUS-021"
VERSIONED = "VER-001"
VERSION_PREFIX = "/v1"


def _matches(spec: ErrorSpec, status: int, code: object) -> bool:
    return spec.matches(status, code) if code is not NOT_READ else status == spec.status


def _wanted(specs: Iterable[ErrorSpec]) -> str:
    return " or ".join(f"{s.status} {s.code}" if s.code else str(s.status) for s in specs)


def _answered(status: int, code: object) -> str:
    return f"{status} {code}" if isinstance(code, str) else str(status)


class RoutingRules:
    def __init__(self, profile: Profile) -> None:
        status = profile.status
        self._not_found = profile.error("status", "not_found")
        self._auth_missing = profile.auth.error_for("missing")
        self._not_allowed = ErrorSpec(status.method_not_allowed.status)
        self._allow_header = status.method_not_allowed.allow_header
        self._before_routing = status.auth_before_routing
        self._max_body = status.max_body_bytes
        self._too_large = status.payload_too_large
        self._media_answers = status.unsupported_media_type

    def unknown(
        self,
        what: str,
        methods: Collection[str] | None,
        *,
        authenticated: bool,
        status: int | None,
        code: object,
        allow: str | None = None,
    ) -> Finding:
        """The answer to a request no operation serves: its path has no operation (``methods``
        None) or only ``methods``. ``authenticated``: it carries the API's authentication
        headers; ``allow``: the answer's ``Allow`` header (its values joined)."""
        if methods is not None:
            what = f"{what}: the path has no such operation (it has {', '.join(sorted(methods))})"
            ids: tuple[str, ...] = (METHOD_NOT_ALLOWED,)
            expected = self._not_allowed
        else:
            what = f"{what}: no operation of the contract has this path"
            ids, expected = (UNKNOWN_PATH,), self._not_found
        if status is None:
            return Finding(CHECK, ids, Outcome.NOT_EXERCISED, f"{what}; no response recorded")
        acceptable: tuple[ErrorSpec, ...] = (expected,)
        if self._before_routing and not authenticated:
            acceptable = (self._auth_missing,)
            ids = (UNKNOWN_PATH_AUTH,) if methods is None else ids
        elif not authenticated and methods is None:
            # the profile does not say that routing comes first either: either answer is right
            acceptable = (expected, self._auth_missing)
        if not any(_matches(spec, status, code) for spec in acceptable):
            message = f"{what}; answered {_answered(status, code)}, not {_wanted(acceptable)}"
            return Finding(CHECK, ids, Outcome.FAILED, message)
        if methods is not None and status == expected.status and self._allow_header:
            return self._allow(what, ids, status, methods, allow)
        return Finding(CHECK, ids, Outcome.PASSED, f"{what}; answered {status}")

    @staticmethod
    def _allow(
        what: str, ids: tuple[str, ...], status: int, methods: Collection[str], allow: str | None
    ) -> Finding:
        """A 405 lists the path's methods in ``Allow`` (RFC 9110)."""
        listed = {m.strip().upper() for m in (allow or "").split(",")}
        missing = sorted({m.upper() for m in methods} - listed)
        if allow is None:
            problem = "without an Allow header"
        elif missing:
            problem = f"with Allow {allow[:80]!r}, which leaves out {', '.join(missing)}"
        else:
            return Finding(CHECK, ids, Outcome.PASSED, f"{what}; answered {status} with Allow")
        return Finding(CHECK, ids, Outcome.FAILED, f"{what}; answered {status} {problem}")

    def unversioned(
        self, what: str, path: str, *, status: int, code: object, known_valid: bool
    ) -> list[Finding]:
        """The answer to an operation's request sent to its ``path`` without the ``/v1``
        prefix: never served (VER-001), the not-found error (STATUS-020). Empty when ``path``
        has the prefix."""
        if path == VERSION_PREFIX or path.startswith(VERSION_PREFIX + "/"):
            return []
        what = f"{what} without its /v1 prefix"
        if 200 <= status < 300:
            message = f"{what} was served ({status}), not {_wanted([self._not_found])}"
            return [Finding(CHECK, (VERSIONED, UNKNOWN_PATH), Outcome.FAILED, message)]
        if _matches(self._not_found, status, code):
            message = f"{what}; answered {status}"
            return [Finding(CHECK, (VERSIONED, UNKNOWN_PATH), Outcome.PASSED, message)]
        found = [Finding(CHECK, (VERSIONED,), Outcome.PASSED, f"{what}; not served ({status})")]
        message = f"{what}; answered {_answered(status, code)}, not {_wanted([self._not_found])}"
        if known_valid or status >= 500:
            found.append(Finding(CHECK, (UNKNOWN_PATH,), Outcome.FAILED, message))
        else:
            found.append(
                Finding(
                    CHECK,
                    (UNKNOWN_PATH,),
                    Outcome.NOT_EXERCISED,
                    f"{message}: refused for a reason of its own",
                )
            )
        return found

    def too_large(
        self, size: int, *, status: int, code: object, known_valid: bool
    ) -> Finding | None:
        """The answer to a request whose body has ``size`` bytes; None when that is within the
        profile's limit."""
        if size <= self._max_body:
            return None
        what = f"a body of {size} bytes (the limit is {self._max_body})"
        if _matches(self._too_large, status, code):
            return Finding(
                SIZE_CHECK, (TOO_LARGE,), Outcome.PASSED, f"{what} refused with {status}"
            )
        message = f"{what} answered {_answered(status, code)}, not {_wanted([self._too_large])}"
        if known_valid or not 400 <= status < 500:
            return Finding(SIZE_CHECK, (TOO_LARGE,), Outcome.FAILED, message)
        return Finding(
            SIZE_CHECK,
            (TOO_LARGE,),
            Outcome.NOT_EXERCISED,
            f"{message}: refused for a reason of its own",
        )

    def media(self, content_type: str | None, *, status: int, code: object) -> Finding | None:
        """The answer to a request whose body is sent as ``content_type``; None when that is
        JSON (or absent); not judged when the profile declares no answer to another media
        type."""
        media = media_type(content_type)
        if not media or media == "application/json":
            return None
        what = f"a {media} body"
        if not self._media_answers:
            message = f"{what}: the profile declares no status.unsupported_media_type"
            return Finding(MEDIA_CHECK, (UNSUPPORTED_MEDIA,), Outcome.NOT_EXERCISED, message)
        if any(_matches(a, status, code) for a in self._media_answers):
            return Finding(
                MEDIA_CHECK, (UNSUPPORTED_MEDIA,), Outcome.PASSED, f"{what} refused with {status}"
            )
        message = f"{what} answered {_answered(status, code)}, not {_wanted(self._media_answers)}"
        return Finding(MEDIA_CHECK, (UNSUPPORTED_MEDIA,), Outcome.FAILED, message)
