"""HTTPS servers for the tests of TLS and gateway headers.

- ``echo_server``: a small stdlib HTTPS server answering every request with an empty payment
  list, noting the headers and the client certificate of each request (``Seen``);
- ``reference_server``: the reference application behind uvicorn over TLS, optionally behind a
  gateway that refuses (403) any request without a given header, noting every request's value
  of that header;
- ``expired_certificate``: a self-signed certificate for 127.0.0.1 that expired yesterday.
"""

from __future__ import annotations

import contextlib
import datetime
import http.server
import ipaddress
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conformance.core.profile import Profile
from conformance.reference.certificates import CertFiles

LIST_BODY = json.dumps({"payments": [], "has_more": False}).encode()


@dataclass(frozen=True)
class Seen:
    """One request the echo server received."""

    path: str
    headers: dict[str, str]
    client_cn: str | None  # the common name of the client certificate presented, if any


@dataclass
class EchoServer:
    url: str
    seen: list[Seen] = field(default_factory=list)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _EchoHTTPServer

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        peer = self.connection.getpeercert() if isinstance(self.connection, ssl.SSLSocket) else None
        client_cn = None
        for rdn in (peer or {}).get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    client_cn = value
        self.server.echo.seen.append(Seen(self.path, dict(self.headers.items()), client_cn))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(LIST_BODY)))
        self.end_headers()
        self.wfile.write(LIST_BODY)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _EchoHTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    echo: EchoServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # refused handshakes are what the tests provoke


def server_context(cert: Path, key: Path, client_ca: Path | None = None) -> ssl.SSLContext:
    """A server context for ``cert``; with ``client_ca``, a client certificate it signed is
    required."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    if client_ca is not None:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cafile=str(client_ca))
    return context


@contextlib.contextmanager
def echo_server(
    cert: Path, key: Path, *, client_ca: Path | None = None, host: str = "127.0.0.1"
) -> Iterator[EchoServer]:
    """An HTTPS echo server on ``host`` with ``cert``; ``client_ca``: mutual TLS required."""
    server = _EchoHTTPServer((host, 0), _Handler)
    # The handshake in the request's thread: a refused one does not stall the accept loop.
    server.socket = server_context(cert, key, client_ca).wrap_socket(
        server.socket, server_side=True, do_handshake_on_connect=False
    )
    server.echo = EchoServer(f"https://{host}:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.echo
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class GatewayLog:
    """The value of the gateway header on every request that reached the gateway."""

    values: list[str | None] = field(default_factory=list)


class _Gateway:
    """ASGI: refuses a request without ``header: value`` (403, as a gateway would)."""

    def __init__(self, app: Any, header: str, value: str, log: GatewayLog) -> None:
        self.app = app
        self.header = header.lower().encode()
        self.value = value
        self.log = log

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(self.header)
        found = None if given is None else given.decode("latin-1")
        self.log.values.append(found)
        if found != self.value:
            body = b'{"message":"missing or wrong gateway key"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


@contextlib.contextmanager
def reference_server(
    certs: CertFiles,
    profile: Profile,
    gateway: tuple[str, str] | None = None,
    *,
    mutual: bool = False,
) -> Iterator[tuple[str, GatewayLog]]:
    """The reference application over HTTPS (``certs``' server certificate), behind a gateway
    wanting ``gateway`` (name, value) when given, requiring a client certificate of ``certs``'
    CA when ``mutual``; yields its base URL and the gateway's log."""
    from conformance.reference.app import create_app
    from conformance.reference.config import ServerConfig

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # as ReferenceServer does: without it a response in two writes waits for a delayed ACK
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    url = f"https://127.0.0.1:{sock.getsockname()[1]}"
    app: Any = create_app(ServerConfig(profile, frozenset(), url))
    runtime = app.state.runtime
    log = GatewayLog()
    if gateway is not None:
        app = _Gateway(app, gateway[0], gateway[1], log)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        ssl_certfile=str(certs.server_cert),
        ssl_keyfile=str(certs.server_key),
        ssl_ca_certs=str(certs.ca) if mutual else None,
        ssl_cert_reqs=ssl.CERT_REQUIRED if mutual else ssl.CERT_NONE,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield url, log
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
        runtime.close()


def expired_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 that expired yesterday, and its key: trusted as
    its own CA, it fails only for its dates."""
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=10))
        .not_valid_after(now - datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "expired.pem", directory / "expired.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path
