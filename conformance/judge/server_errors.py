"""A request answered with a server error (5xx): besides ERR-006 (no request, however malformed,
gets one: the caller names it), the refusal the request should have got did not come.

``ServerErrors.refusals(call, shape)`` names it, in this order, as the robustness and boundaries
families, the schema phase and the validator all judge a 5xx:

- the admission rules the request breaks (``admission.AdmissionChecks.server_error``);
- else a body over the profile's size limit (``routing``, STATUS-018);
- else the contract constraints it breaks (``request_schemas``), under the ids a refusal of
  them is judged by (``constraint_ids.rejection_ids``).

A request that breaks nothing had to succeed: ERR-006 alone.
"""

from __future__ import annotations

from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.judge.admission import AdmissionChecks
from conformance.judge.answers import Call
from conformance.judge.constraint_ids import ConstraintIds
from conformance.judge.findings import Finding
from conformance.judge.request_schemas import RequestSchemas, RequestShape, summary
from conformance.judge.routing import RoutingRules
from conformance.judge.schema_requirements import ANY_4XX, requirement_ids

CHECK = "request_schema"
NEGATIVE_CHECK = "negative_data_rejection"


class ServerErrors:
    def __init__(self, profile: Profile, requests: RequestSchemas) -> None:
        self._profile = profile
        self._requests = requests
        self._admission = AdmissionChecks(profile)
        self._routing = RoutingRules(profile)
        self._constraints = ConstraintIds(profile)
        self._validation = profile.error("status", "validation")

    def refusals(self, call: Call, shape: RequestShape) -> list[Finding]:
        """The refusals ``call`` (answered with a 5xx, with well-formed credentials) did not
        get; empty when its request breaks nothing."""
        named = self._admission.server_error(call)
        if named:
            return named
        size = self._routing.too_large(
            len(call.request_body), status=call.status, code=call.code, known_valid=False
        )
        if size is not None:
            return [size]
        problems = self._requests.problems(
            shape, call.path_params, call.raw_query, call.request_body, call.request
        )
        if not problems:
            return []
        oid = call.operation_id
        candidates = requirement_ids(NEGATIVE_CHECK, oid, ANY_4XX, profile=self._profile)
        ids = self._constraints.rejection_ids(oid, problems, candidates)
        message = (
            f"the request breaks the contract: {summary(problems)}; answered {call.status}, "
            f"the profile's answer is {self._validation.status}"
        )
        return [Finding(CHECK, ids, Outcome.FAILED, message)]
