"""Slow and idle clients: the reference server's header-read timeout and connection cap."""

from __future__ import annotations

import logging
import math
import selectors
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest

from conformance.core.profile import Profile
from conformance.reference import connections
from conformance.reference.server import ReferenceServer

# A ceiling for waits on a healthy machine's events: never reached unless something is broken.
CEILING_SECS = 30.0
PARTIAL_HEAD = b"GET /v1/payments HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: mk_"


@contextmanager
def half_open(
    server: ReferenceServer, count: int, head: bytes = b""
) -> Iterator[list[socket.socket]]:
    """``count`` connections that send ``head`` (never a complete request head), then nothing."""
    with ExitStack() as stack:
        sockets = []
        for _ in range(count):
            sock = stack.enter_context(socket.create_connection(("127.0.0.1", server.port)))
            if head:
                sock.sendall(head)
            sockets.append(sock)
        yield sockets


def closed_by_server(sock: socket.socket, wait: float) -> bool:
    """Whether the server closes ``sock`` within ``wait`` seconds (whatever it wrote first)."""
    deadline = time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            if not sock.recv(4096):
                return True
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
    return False


def closed_among(sockets: list[socket.socket], wait: float, enough: int) -> list[socket.socket]:
    """The sockets of ``sockets`` the server closes within ``wait`` seconds (or before
    ``enough`` of them are)."""
    closed: list[socket.socket] = []
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + wait
        while len(closed) < enough and (left := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(left):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if closed_by_server(sock, 0.001):
                    selector.unregister(sock)
                    closed.append(sock)
    return closed


def answered(server: ReferenceServer) -> bool:
    """A normal request gets the server's answer (401: it is not signed)."""
    return httpx.get(server.base_url + "/v1/payments", timeout=CEILING_SECS).status_code == 401


# -- the header-read timeout -----------------------------------------------------------------
@pytest.mark.parametrize("head", [b"", PARTIAL_HEAD], ids=["nothing sent", "part of a head"])
def test_connections_without_a_complete_request_head_are_closed_after_the_header_timeout(
    profile: Profile, head: bytes
) -> None:
    server = ReferenceServer(profile=profile, header_timeout=1.0)
    with server, half_open(server, 200, head) as sockets:
        assert answered(server)  # the others are served meanwhile
        assert all(closed_by_server(s, CEILING_SECS) for s in sockets)


def test_a_connection_is_held_until_the_header_timeout_not_closed_before(
    profile: Profile,
) -> None:
    server = ReferenceServer(profile=profile, header_timeout=3.0)
    with server, half_open(server, 1, PARTIAL_HEAD) as (sock,):
        assert not closed_by_server(sock, 1.0)
        assert closed_by_server(sock, CEILING_SECS)


def test_a_head_sent_in_pieces_within_the_timeout_is_answered(profile: Profile) -> None:
    server = ReferenceServer(profile=profile, header_timeout=2.0)
    with server, socket.create_connection(("127.0.0.1", server.port)) as sock:
        for piece in (b"GET /v1/payments HTTP/1.1\r\n", b"Host: x\r\n", b"\r\n"):
            sock.sendall(piece)
            time.sleep(0.3)
        sock.settimeout(CEILING_SECS)
        assert sock.recv(4096).startswith(b"HTTP/1.1 401 ")


def test_the_next_request_on_a_kept_alive_connection_has_its_own_header_timeout(
    profile: Profile,
) -> None:
    server = ReferenceServer(profile=profile, header_timeout=1.0)
    with server, socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"GET /v1/payments HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(CEILING_SECS)
        assert sock.recv(4096).startswith(b"HTTP/1.1 401 ")
        time.sleep(1.5)  # idle between requests: the keep-alive timeout's business
        sock.sendall(b"GET /v1/payments HTTP/1.1\r\n")  # then a head that never ends
        started = time.monotonic()
        assert closed_by_server(sock, CEILING_SECS)
        assert 0.8 < time.monotonic() - started < 10


# -- the connection cap ----------------------------------------------------------------------
def test_at_the_cap_the_longest_idle_connections_make_room_with_one_log_line(
    profile: Profile, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=connections.__name__)
    server = ReferenceServer(profile=profile, header_timeout=6.0, max_connections=50)
    with server, half_open(server, 200) as sockets:
        closed = closed_among(sockets, CEILING_SECS, enough=150)
        assert closed == sockets[:150]  # the longest idle
        held = sockets[150:]
        assert closed_among(held, 0.5, enough=1) == []
        lines = [r.getMessage() for r in caplog.records if r.name == connections.__name__]
        assert len(lines) == 1
        assert "50 connections open" in lines[0] and "--max-connections" in lines[0]
        # A request still gets in: it makes room too.
        assert answered(server)
        assert closed_among(held, CEILING_SECS, enough=1) == held[:1]


def test_at_the_cap_a_kept_alive_connection_makes_room(profile: Profile) -> None:
    server = ReferenceServer(profile=profile, max_connections=1)
    with server, httpx.Client(timeout=CEILING_SECS) as kept_alive:
        assert kept_alive.get(server.base_url + "/v1/payments").status_code == 401
        assert answered(server)  # another connection


def stalled_request(server: ReferenceServer) -> socket.socket:
    """A connection whose request is running: its body never comes."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(
        b"POST /v1/payments HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: 100\r\n\r\n{"
    )
    return sock


def test_at_the_cap_with_every_request_running_a_new_connection_is_told_503(
    profile: Profile,
) -> None:
    server = ReferenceServer(profile=profile, header_timeout=1.0, max_connections=2)
    with server, stalled_request(server) as first, stalled_request(server) as second:
        time.sleep(0.2)  # both heads read: their requests run
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.settimeout(CEILING_SECS)
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 503 ")
        assert b"retry-after: 1" in answer.lower()
        # Running requests are neither closed for the cap nor by the header timeout.
        assert closed_among([first, second], 1.5, enough=1) == []


def test_the_cap_is_logged_again_only_after_the_log_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=connections.__name__)
    moments = iter([0.0, 1.0, 2.0, connections.LOG_INTERVAL_SECS + 5])
    guard = connections.ConnectionGuard(1.0, 1, clock=lambda: next(moments))
    guard.open.add(object())  # type: ignore[arg-type]  # a request runs: nothing idle to close
    assert [guard.admit(object()) for _ in range(4)] == [False] * 4  # type: ignore[arg-type]
    lines = [r.getMessage() for r in caplog.records if r.name == connections.__name__]
    assert len(lines) == 2
    assert "1 connections open" in lines[0]
    assert "0 idle connections closed and 3 new ones refused in the last 15 s" in lines[1]
    assert guard.refused == 4


# -- settings ----------------------------------------------------------------------------------
def test_the_defaults_are_in_force_without_settings(profile: Profile) -> None:
    server = ReferenceServer(profile=profile)
    assert server.header_timeout == connections.HEADER_TIMEOUT_SECS
    assert server.max_connections == connections.default_max_connections()
    assert 0 < connections.default_max_connections() <= connections.MAX_CONNECTIONS


@pytest.mark.parametrize("value", [0.0, -1.0, math.nan, math.inf, 3601.0])
def test_a_header_timeout_out_of_range_is_refused(profile: Profile, value: float) -> None:
    with pytest.raises(ValueError, match="header timeout"):
        ReferenceServer(profile=profile, header_timeout=value)


@pytest.mark.parametrize("value", [0, -5, 10**9])
def test_a_connection_cap_out_of_range_is_refused(profile: Profile, value: int) -> None:
    with pytest.raises(ValueError, match="connections"):
        ReferenceServer(profile=profile, max_connections=value)
