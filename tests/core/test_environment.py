"""``environ``: variables set for a block and put back after it."""

from __future__ import annotations

import os

import pytest

from conformance.core.environment import environ


def test_variables_are_set_and_removed_within_the_block_and_restored_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PC_TEST_KEPT", "before")
    monkeypatch.setenv("PC_TEST_REMOVED", "before")
    monkeypatch.delenv("PC_TEST_NEW", raising=False)
    with environ({"PC_TEST_KEPT": "inside", "PC_TEST_REMOVED": None, "PC_TEST_NEW": "new"}):
        assert os.environ["PC_TEST_KEPT"] == "inside"
        assert "PC_TEST_REMOVED" not in os.environ
        assert os.environ["PC_TEST_NEW"] == "new"
    assert os.environ["PC_TEST_KEPT"] == "before"
    assert os.environ["PC_TEST_REMOVED"] == "before"
    assert "PC_TEST_NEW" not in os.environ


def test_the_environment_is_restored_when_the_block_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PC_TEST_NEW", raising=False)
    with pytest.raises(RuntimeError), environ({"PC_TEST_NEW": "x"}):
        raise RuntimeError
    assert "PC_TEST_NEW" not in os.environ
