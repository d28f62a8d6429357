"""The order numbers, user ids and Idempotency-Keys a shard makes up carry its tag, so the data
of shards running at the same time against one server never meet."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from conformance.suite import shard_data
from conformance.suite.factories import Factories


@pytest.fixture(autouse=True)
def no_shard_after() -> Iterator[None]:
    yield
    shard_data.set_shard(0, 0)


def test_outside_a_shard_the_values_are_plain_random_ones() -> None:
    assert len(shard_data.unique_hex(20)) == 20
    assert shard_data.unique_hex(20) != shard_data.unique_hex(20)
    assert uuid.UUID(shard_data.unique_uuid()).version == 4


def test_in_a_shard_order_numbers_and_ids_start_with_its_tag() -> None:
    shard_data.set_shard(2, 4)
    made = Factories.unique("order-")
    assert made.startswith("order-s2o4")
    assert len(made) == len("order-") + 20


def test_in_a_shard_idempotency_keys_are_uuids_starting_with_its_marker() -> None:
    shard_data.set_shard(12, 16)
    key = shard_data.unique_uuid()
    assert key.startswith("1216")
    assert uuid.UUID(key).version == 4
    shard_data.set_shard(1, 2)
    assert shard_data.unique_uuid().startswith("0102")
