"""API errors: an exception carrying the status, code, message and details of the response."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.reference.context import RequestContext


class ApiError(Exception):
    """An error response; ``headers`` are extra response headers (e.g. ``Allow`` on a 405)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            body["details"] = self.details
        return body


def profile_error(ctx: RequestContext, section: str, key: str, message: str) -> ApiError:
    spec = ctx.config.profile.error(section, key)
    return ApiError(spec.status, spec.code or key, message)


def not_found(ctx: RequestContext, what: str = "resource") -> ApiError:
    if ctx.fault("not-found-wrong-code"):
        wanted = ctx.config.profile.error("status", "not_found")
        # the bug: a code of its own, never the profile's (resource_not_found unless that is it)
        code = "not_found" if wanted.code == "resource_not_found" else "resource_not_found"
        return ApiError(wanted.status, code, f"{what} not found")
    return profile_error(ctx, "status", "not_found", f"{what} not found")


def invalid_state(ctx: RequestContext, message: str) -> ApiError:
    return profile_error(ctx, "status", "invalid_state", message)


def business_rule(ctx: RequestContext, code: str, message: str) -> ApiError:
    return ApiError(ctx.config.profile.error("status", "business_rule").status, code, message)


def validation_error(ctx: RequestContext, details: list[dict[str, str]]) -> ApiError:
    return validation_failure(ctx.config.profile, details)


def validation_failure(profile: Any, details: list[dict[str, str]]) -> ApiError:
    """The 400 of a request that breaks the contract, without a context (framework stages)."""
    spec = profile.error("status", "validation")
    first = details[0] if details else {"field": "", "message": "invalid request"}
    where = f"{first['field']}: " if first.get("field") else ""
    return ApiError(
        spec.status,
        spec.code or "validation_error",
        f"request does not satisfy the contract: {where}{first['message']}",
        details,
    )


def media_type_failure(profile: Any, details: list[dict[str, str]]) -> ApiError:
    """A body sent with another Content-Type than application/json: the validation error when
    the profile's ``status.unsupported_media_type`` allows it (or declares no answer), else its
    first answer."""
    refusal = validation_failure(profile, details)
    answers = profile.status.unsupported_media_type
    if not answers or any(
        a.status == refusal.status and a.code in (None, refusal.code) for a in answers
    ):
        return refusal
    first = answers[0]
    code = first.code or "unsupported_media_type"
    return ApiError(first.status, code, refusal.message, details)
