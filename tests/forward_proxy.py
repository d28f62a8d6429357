"""A logging forward proxy on loopback, for the tests of ``run --proxy`` and of proxies ignored.

``ForwardProxy().running()`` yields the proxy's URL. A request in absolute form
(``GET http://host:port/path HTTP/1.1``) is forwarded to its host and the answer relayed; a
``CONNECT host:port`` opens a tunnel (https). Every request line is logged in ``seen``, the
``User-Agent`` of each forwarded request in ``agents``, and ``connections`` counts the
connections made to the proxy. With ``password`` the proxy wants
``Proxy-Authorization: Basic user:password`` and answers 407 without it; with ``tls`` (an
``ssl.SSLContext`` for the server side) it is an https:// proxy.
"""

from __future__ import annotations

import base64
import http.client
import select
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

# not forwarded: they are about the connection to the proxy, not the request
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-connection",
    "transfer-encoding",
    "content-length",
}
USER = "proxy-user"


class ForwardProxy:
    def __init__(self, password: str | None = None, tls: ssl.SSLContext | None = None) -> None:
        self.password = password
        self.tls = tls
        self.seen: list[str] = []
        self.agents: set[str] = set()
        self.connections = 0
        self.refused = 0  # requests answered 407
        self._lock = threading.Lock()

    def _log(self, line: str) -> None:
        with self._lock:
            self.seen.append(line)

    def _authorized(self, header: str | None) -> bool:
        if self.password is None:
            return True
        token = base64.b64encode(f"{USER}:{self.password}".encode()).decode()
        if header == f"Basic {token}":
            return True
        with self._lock:
            self.refused += 1
        return False

    @contextmanager
    def running(self) -> Iterator[str]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # headers and body go in separate writes: without this each answer waits for
                # the client's delayed ACK (40 ms)
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with proxy._lock:
                    proxy.connections += 1

            def log_message(self, format: str, *args: object) -> None:
                """Quiet: the tests read ``seen``."""

            def _refuse(self) -> bool:
                if proxy._authorized(self.headers.get("Proxy-Authorization")):
                    return False
                self.send_response(407)
                self.send_header("Proxy-Authenticate", 'Basic realm="tests"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return True

            def do_CONNECT(self) -> None:
                proxy._log(f"CONNECT {self.path}")
                if self._refuse():
                    return
                host, _, port = self.path.rpartition(":")
                try:
                    upstream = socket.create_connection((host, int(port)), timeout=10)
                except OSError:
                    self.send_error(502)
                    return
                self.send_response(200, "Connection established")
                self.end_headers()
                self.close_connection = True
                _pipe(self.connection, upstream)

            def _forward(self) -> None:
                proxy._log(f"{self.command} {self.path}")
                with proxy._lock:
                    proxy.agents.add(self.headers.get("User-Agent", "").split("/", 1)[0])
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if self._refuse():
                    return
                target = urlsplit(self.path)
                if target.scheme != "http" or not target.hostname:
                    self.send_error(400, "absolute-form http:// requests only")
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                upstream = http.client.HTTPConnection(
                    target.hostname, target.port or 80, timeout=30
                )
                try:
                    path = target.path + (f"?{target.query}" if target.query else "")
                    upstream.request(self.command, path or "/", body=body, headers=headers)
                    answer = upstream.getresponse()
                    content = answer.read()
                    self.send_response(answer.status, answer.reason)
                    for name, value in answer.getheaders():
                        if name.lower() not in HOP_BY_HOP:
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(content)))
                    self.end_headers()
                    self.wfile.write(content)
                finally:
                    upstream.close()

            def __getattr__(self, name: str) -> Any:
                if name.startswith("do_"):
                    return self._forward
                raise AttributeError(name)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if self.tls is not None:
            # the handshake in the request's thread: a refused one does not stall the accept loop
            server.socket = self.tls.wrap_socket(
                server.socket, server_side=True, do_handshake_on_connect=False
            )
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        thread.start()
        userinfo = f"{USER}:{self.password}@" if self.password is not None else ""
        scheme = "http" if self.tls is None else "https"
        try:
            yield f"{scheme}://{userinfo}127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=2)


def _pipe(client: socket.socket, upstream: socket.socket) -> None:
    """Relay bytes both ways until either side closes."""
    with upstream:
        sockets = [client, upstream]
        while True:
            readable, _, _ = select.select(sockets, [], [], 30)
            if not readable:
                return
            for sock in readable:
                try:
                    data = sock.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                (upstream if sock is client else client).sendall(data)
