"""The reference server behind a TLS front that changes mid-run, as a server restarted with
another certificate, or one whose host starts resetting connections.

``switching_server(certs, other, profile)`` serves the reference application over HTTPS with
``certs``' server certificate; once ``front.switch(mode)`` is called, every live connection is
cut and each new one either presents ``other``'s certificate (a CA the client does not trust:
``Switch.CERTIFICATE``) or is reset (``Switch.RESET``).
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import uvicorn

from conformance.core.profile import Profile
from conformance.reference.certificates import CertFiles


class Switch(StrEnum):
    CERTIFICATE = "certificate"  # the handshake presents a certificate of another CA
    RESET = "reset"  # the connection is reset before any byte


@dataclass
class Front:
    url: str
    _trusted: ssl.SSLContext
    _other: ssl.SSLContext
    _backend: tuple[str, int]
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _live: set[ssl.SSLSocket] = field(default_factory=set)
    _mode: Switch | None = None
    switched: int = 0  # connections met by the switch

    def switch(self, mode: Switch) -> None:
        """``mode`` for every new connection; the live ones are cut (kept-alive ones too)."""
        with self._lock:
            self._mode = mode
            live, self._live = self._live, set()
        for tls in live:  # the raw socket's shutdown: the relay's thread sees the end
            with contextlib.suppress(OSError):
                socket.socket.shutdown(tls, socket.SHUT_RDWR)

    def _serve(self, conn: socket.socket) -> None:
        with self._lock:
            mode = self._mode
            self.switched += mode is not None
        if mode is Switch.RESET:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
            return
        try:
            tls = (self._trusted if mode is None else self._other).wrap_socket(
                conn, server_side=True
            )
        except (OSError, ssl.SSLError):
            conn.close()  # the client refused the certificate
            return
        with tls:
            if mode is not None:
                return
            with self._lock:
                if self._mode is not None:
                    return  # switched during the handshake
                self._live.add(tls)
            try:
                with socket.create_connection(self._backend) as backend:
                    _relay(tls, backend)
            finally:
                with self._lock:
                    self._live.discard(tls)

    def accept_loop(self, listener: socket.socket, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()


def _relay(tls: ssl.SSLSocket, backend: socket.socket) -> None:
    """Bytes both ways until either side closes; one thread, as an SSL socket wants."""
    try:
        while True:
            readable = [tls] if tls.pending() else select.select([tls, backend], [], [], 1.0)[0]
            for source in readable:
                data = source.recv(65536)
                if not data:
                    return
                (backend if source is tls else tls).sendall(data)
    except (OSError, ssl.SSLError, ValueError):
        return


def _context(cert: CertFiles) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert.server_cert), str(cert.server_key))
    return context


def _listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


@contextlib.contextmanager
def switching_server(certs: CertFiles, other: CertFiles, profile: Profile) -> Iterator[Front]:
    """The reference application (plain HTTP, loopback) behind a TLS front on its own port."""
    from conformance.reference.app import create_app
    from conformance.reference.config import ServerConfig

    front_socket, backend_socket = _listener(), _listener()
    front_socket.settimeout(0.1)
    url = f"https://127.0.0.1:{front_socket.getsockname()[1]}"
    app: Any = create_app(ServerConfig(profile, frozenset(), url))
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    )
    serving = threading.Thread(target=server.run, kwargs={"sockets": [backend_socket]}, daemon=True)
    serving.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    front = Front(url, _context(certs), _context(other), backend_socket.getsockname())
    stop = threading.Event()
    accepting = threading.Thread(target=front.accept_loop, args=(front_socket, stop), daemon=True)
    accepting.start()
    try:
        yield front
    finally:
        stop.set()
        accepting.join(2)
        front_socket.close()
        server.should_exit = True
        serving.join(10)
        backend_socket.close()
        app.state.runtime.close()
