"""The data a shard creates carries its tag (``run --shard i/N``, ``engine.shards``).

Shards of one run test the same server at the same time. Every order number, user id and
Idempotency-Key the suite makes up is unique by itself (random), and a shard's also carries the
shard's tag, so that the resources and keys of concurrent shards are told apart by their value
and none of one shard can be taken for another's. Outside a sharded run the tag is empty and
the values are what they always were.
"""

from __future__ import annotations

import uuid

_tag = ""  # "s2o4" in shard 2/4
_marker = ""  # "0204" in shard 2/4: hex digits, for UUIDs


def set_shard(index: int, total: int) -> None:
    """Tag the data of this process as shard ``index`` of ``total`` from now on (0, 0: none)."""
    global _tag, _marker
    _tag = f"s{index}o{total}" if total else ""
    _marker = f"{index:02d}{total:02d}" if total else ""


def unique_hex(length: int) -> str:
    """``length`` characters, unique: the shard's tag, then random hex digits."""
    return (_tag + uuid.uuid4().hex)[:length]


def unique_uuid() -> str:
    """A random (version 4) UUID whose first group starts with the shard's marker in a shard
    (``0204xxxx-...`` in shard 2/4), so a key of one shard is never one of another's."""
    value = str(uuid.uuid4())
    return _marker + value[len(_marker) :]
