"""Webhook secret rotations across exchanges: a rotation gives a secret the endpoint never had
(WH-011).

``SecretRotations`` keeps, per owner (a merchant) and endpoint id, digests of the secrets the
endpoint's rotations answered, never the secrets, and judges each rotation fed to it in order.
Two answers of one endpoint with one secret break the rule whatever their order, so the
validator feeds overlapping exchanges too. A replayed rotation (its stored answer again) is no
rotation: the caller does not feed it.
"""

from __future__ import annotations

from conformance.judge.findings import Finding, verdict
from conformance.judge.tables import TABLE_LIMIT, BoundedTable, digest

CHECK = "secret_rotation"
IDS = ("WH-011",)


class SecretRotations:
    """The secrets each endpoint's rotations gave, and the rotations that gave one again."""

    def __init__(self, *, limit: int = TABLE_LIMIT) -> None:
        # digest of (owner, endpoint id, secret): where that secret was first answered
        self._secrets: BoundedTable[bytes, str] = BoundedTable(limit)

    def rotated(
        self, owner: str, endpoint: str, secret: str, where: str = "", *, also: tuple[str, ...] = ()
    ) -> Finding:
        """The verdict on a rotation of ``endpoint`` answering ``secret`` (``where``: the
        exchange, named in a later failure), which is remembered; ``also``: requirements the
        caller attributes the rule to as well."""
        slot = digest(owner, endpoint, secret)
        first = self._secrets.get(slot)
        if first is None:
            self._secrets.put(slot, where)
        problem = (
            None
            if first is None
            else f"rotate-secret of endpoint {endpoint} answered the secret already answered "
            f"in {first or 'an earlier rotation'}"
        )
        return verdict(CHECK, (*IDS, *also), problem)
