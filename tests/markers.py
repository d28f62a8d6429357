"""Markers more than one test module applies."""

from __future__ import annotations

import pytest

# The budget's hard stop (engine/session.py) may land in a weakref callback, where Python can
# only report it as unraisable; the stop repeats each second for that reason, so in the tests
# of runs that outlast their budget the report is noise.
BUDGET_STOP_NOISE = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
