"""Which hosts are this machine's own: the profile lets plain ``http`` webhook URLs point only at
loopback (WH-007, WH-008), and ``serve`` warns when it listens anywhere else."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """A loopback address (``127.0.0.1``, ``[::1]``) or ``localhost`` and its subdomains (RFC
    6761); any other name is not looked up and counts as another machine."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:
        return False
