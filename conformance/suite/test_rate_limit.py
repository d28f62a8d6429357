"""Rate limits (profile 7): how the server answers a request it rate limits.

A rate limit is the server's right (the specification says "Rate limits: not shown"): every
client of the suite waits and resends (``conformance.suite.wire.ratelimit``), and no check is judged
on a rate-limit answer. When the profile declares ``[rate_limit]``, every such answer of the run
is judged against it under RATE-001 by the plugin (``rate_limit_checks``), in whichever test it
came. This test sends nothing: it says why RATE-001 is not exercised when no answer was judged.
"""

from __future__ import annotations

import pytest

from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.suite.rate_limit_checks import CHECK_ID, FAMILY, REQUIREMENT
from conformance.suite.wire.check_properties import CheckRecorder

NO_RULE = "the profile declares no [rate_limit], so rate-limit answers are not judged"
NO_ANSWER = "no request of the run was rate limited, so no rate-limit answer could be judged"


@pytest.mark.family(FAMILY)
@pytest.mark.requirement(REQUIREMENT)
def test_rate_limit_answers(conformance_profile: Profile, check_recorder: CheckRecorder) -> None:
    """Not exercised by itself: the verdict comes from the rate-limit answers the run saw."""
    reason = NO_RULE if conformance_profile.rate_limit is None else NO_ANSWER
    check_recorder.record(CHECK_ID, (REQUIREMENT,), Outcome.NOT_EXERCISED, reason)
