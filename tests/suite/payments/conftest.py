from __future__ import annotations

from pathlib import Path

import pytest

from tests.suite.payments.short_lived import short_lived_profile


@pytest.fixture
def short_lived(tmp_path: Path) -> str:
    """The path of a profile whose payments live seconds (``short_lived.py``)."""
    return short_lived_profile(tmp_path)
