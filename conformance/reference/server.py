"""``ReferenceServer``: the reference server on a loopback port, in a background thread.

    with ReferenceServer(profile=load_profile(), faults=("auth-nonce-not-checked",)) as srv:
        httpx.get(srv.base_url + "/v1/payments", headers=...)

The socket is bound before the server starts, so ``base_url`` is known at once; ``start()``
returns when the server answers. ``stop()`` (idempotent) shuts down in order: uvicorn stops
accepting, lets in-flight requests finish (``SHUTDOWN_GRACE_SECS``, or until ``abort()``) and
aborts the rest; its thread ends; the webhook dispatcher's threads are joined; the database is
closed and the temporary one removed. No thread the server started is left running.

The deployment modes (``tls_cert``/``tls_key``, ``rate_limit``, ``require_header``,
``base_path``) put the server behind HTTPS and a gateway (``conformance.reference.gateway``), as
implementers' staging servers are; ``base_url`` then starts with ``https://`` and ends with the
base path. The defaults serve plain HTTP with no gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sqlite3
import ssl
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from conformance.core.profile import Profile, load_profile
from conformance.reference import connections
from conformance.reference.app import Runtime, create_app
from conformance.reference.config import ServerConfig, reads_literally
from conformance.reference.gateway import GatewaySettings, wrap
from conformance.reference.gateway import base_path as normalised
from conformance.reference.store import Store
from conformance.reference.tls import TlsFileError, TlsFiles

START_TIMEOUT_SECS = 60.0  # a ceiling: a healthy machine starts it in milliseconds
SHUTDOWN_GRACE_SECS = 5.0  # in-flight requests get this long to finish before they are aborted
# A ceiling on each wait of stop(), for a server that never ends: never reached otherwise.
STOP_CEILING_SECS = 60.0
TICK_SECS = 0.1  # uvicorn's tick: its Date header and its limits are refreshed this often

log = logging.getLogger(__name__)


class ServerStartError(RuntimeError):
    """The server could not start (port in use, bad address, startup failure)."""


class _Uvicorn(uvicorn.Server):
    """uvicorn whose shutdown aborts the connections still open after the grace period (a
    client that never sends its body would otherwise hold the shutdown forever)."""

    def __init__(self, config: uvicorn.Config, grace_secs: float, abort: threading.Event) -> None:
        super().__init__(config)
        self.grace_secs = grace_secs
        self.abort = abort
        self.loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()  # set by request_exit(), from any thread, through the loop

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets=sockets)

    def request_exit(self) -> None:
        """Stop from another thread: at once, not at uvicorn's next tick (up to 0.1 s later;
        the project's tests start and stop a server over a thousand times)."""
        self.should_exit = True
        loop = self.loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended already
                loop.call_soon_threadsafe(self._wake.set)

    async def main_loop(self) -> None:
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864_000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), TICK_SECS)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if not self.server_state.connections and not self.server_state.tasks:
            # Nothing in flight: uvicorn's own shutdown would still wait 0.1 s for it.
            for server in self.servers:
                server.close()
            for sock in sockets or []:
                sock.close()
            return
        aborter = asyncio.ensure_future(self._abort_after_grace())
        try:
            await super().shutdown(sockets=sockets)
        finally:
            aborter.cancel()

    async def _abort_after_grace(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.grace_secs
        while loop.time() < deadline and not self.abort.is_set():
            await asyncio.sleep(0.05)
        # The application sees a disconnect and returns; uvicorn then ends.
        for connection in list(self.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.abort()

    def worker_threads(self) -> list[threading.Thread]:
        """The threads that ran this server's synchronous work (anyio's thread pool, one per
        event loop): told to stop when the loop ends, joined by ``ReferenceServer.stop``."""
        if self.loop is None:
            return []
        return [t for t in threading.enumerate() if getattr(t, "loop", None) is self.loop]


class ReferenceServer:
    def __init__(
        self,
        profile: Profile | None = None,
        faults: Iterable[str] = (),
        db_path: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        shutdown_grace_secs: float = SHUTDOWN_GRACE_SECS,
        latency_ms: int = 0,
        *,
        tls_cert: str | Path | None = None,
        tls_key: str | Path | None = None,
        tls_client_ca: str | Path | None = None,
        rate_limit: float | None = None,
        require_header: tuple[str, str] | None = None,
        base_path: str = "",
        header_timeout: float = connections.HEADER_TIMEOUT_SECS,
        max_connections: int | None = None,
        escape_reading: str | None = None,
    ) -> None:
        self.profile = profile if profile is not None else load_profile()
        self.escape_reading = escape_reading
        self.faults = frozenset(faults)
        self.db_path = Path(db_path) if db_path is not None else None
        self.host = host
        self.port = port
        self.shutdown_grace_secs = shutdown_grace_secs
        self.latency_ms = latency_ms
        # rejects unknown faults and a bad latency before binding
        ServerConfig(
            self.profile, self.faults, latency_ms=latency_ms, escape_reading=escape_reading
        )
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("tls_cert and tls_key go together: give both or neither")
        if tls_client_ca is not None and tls_cert is None:
            raise ValueError("tls_client_ca needs tls_cert and tls_key")
        self.tls = (
            TlsFiles(
                Path(tls_cert),
                Path(tls_key),
                Path(tls_client_ca) if tls_client_ca is not None else None,
            )
            if tls_cert is not None and tls_key is not None
            else None
        )
        # rejects a bad rate limit, header or base path before binding
        self.gateway = GatewaySettings(rate_limit, require_header, normalised(base_path))
        # rejects a bad header timeout or connection cap before binding (None: the default)
        self.header_timeout = connections.header_timeout(header_timeout)
        self.max_connections = (
            connections.max_connections(max_connections)
            if max_connections is not None
            else connections.default_max_connections()
        )
        self._server: _Uvicorn | None = None
        self._thread: threading.Thread | None = None
        # Set when the server's thread has ended. Waiting on this rather than on
        # ``Thread.join``: in Python 3.11 a signal that interrupts ``join`` marks the thread
        # finished while it still runs (the store was then closed under a running uvicorn).
        self._done: threading.Event | None = None
        self._abort = threading.Event()
        self._socket: socket.socket | None = None
        self._runtime: Runtime | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        if self._socket is None:
            raise RuntimeError("the server is not running")
        host = self.host if ":" not in self.host else f"[{self.host}]"
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{host}:{self.port}{self.gateway.base_path}"

    @property
    def literal_escapes(self) -> bool:
        """Whether a malformed percent-escape is read as the text it is."""
        return reads_literally(self.profile, self.escape_reading)

    @property
    def config(self) -> ServerConfig:
        if self._runtime is None:
            raise RuntimeError("the server is not running")
        return self._runtime.config

    @property
    def store(self) -> Store:
        """The server's database (for tests that need to look behind the API)."""
        if self._runtime is None:
            raise RuntimeError("the server is not running")
        return self._runtime.store

    def start(self) -> ReferenceServer:
        with self._lock:
            if self._thread is not None:
                return self
            try:
                return self._start()
            except BaseException:  # Ctrl-C or SIGTERM while starting included
                self._shutdown()
                raise

    def _start(self) -> ReferenceServer:  # under self._lock
        if self.tls is not None:
            try:
                self.tls.check()
            except TlsFileError as exc:
                raise ServerStartError(str(exc)) from None
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            # Accepted connections inherit it: without it, a response written in two parts
            # (head, body) waits for the client's delayed ACK, some 40 ms per request.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.bind((self.host, self.port))
            sock.listen(128)
        except OSError as exc:
            sock.close()
            raise ServerStartError(
                f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}"
            ) from None
        self._socket = sock
        self.port = sock.getsockname()[1]
        config = ServerConfig(
            self.profile,
            self.faults,
            self.base_url,
            self.db_path,
            latency_ms=self.latency_ms,
            escape_reading=self.escape_reading,
        )
        try:
            app = create_app(config)
        except (sqlite3.Error, OSError) as exc:
            self._close_socket()
            raise ServerStartError(f"cannot open the database {self.db_path}: {exc}") from None
        self._runtime = app.state.runtime
        uv_config = uvicorn.Config(
            wrap(app, self.gateway, not_found=self._not_found()),
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_keep_alive=30,
            http=connections.protocol_class(
                connections.ConnectionGuard(self.header_timeout, self.max_connections)
            ),
            **self._tls_options(),
        )
        self._abort.clear()
        server = _Uvicorn(uv_config, self.shutdown_grace_secs, self._abort)
        done = threading.Event()
        thread = threading.Thread(
            target=_serve, args=(server, sock, done), name="reference-server", daemon=True
        )
        self._server, self._thread, self._done = server, thread, done
        thread.start()
        deadline = time.monotonic() + START_TIMEOUT_SECS
        while not server.started:
            if done.is_set() or time.monotonic() > deadline:
                raise ServerStartError("the reference server did not start")
            time.sleep(0.002)
        return self

    def _not_found(self) -> tuple[int, str]:
        spec = self.profile.error("status", "not_found")
        return spec.status, spec.code or "not_found"

    def _tls_options(self) -> dict[str, Any]:
        if self.tls is None:
            return {}
        options: dict[str, Any] = {
            "ssl_certfile": str(self.tls.cert),
            "ssl_keyfile": str(self.tls.key),
        }
        if self.tls.client_ca is not None:
            options["ssl_ca_certs"] = str(self.tls.client_ca)
            options["ssl_cert_reqs"] = ssl.CERT_REQUIRED
        return options

    def stop(self) -> None:
        """Shut down in order (see the module's docstring); returns when all is done."""
        with self._lock:
            self._shutdown()

    def abort(self) -> None:
        """Abort in-flight requests now rather than after the grace period (a second Ctrl-C);
        safe from a signal handler or another thread, while ``stop()`` runs or before."""
        self._abort.set()

    def _shutdown(self) -> None:
        server, thread, done = self._server, self._thread, self._done
        interrupted = False
        if server is not None and done is not None:
            # uvicorn stops accepting, then finishes or aborts in-flight requests and ends
            server.request_exit()
            try:
                finished = done.wait(STOP_CEILING_SECS)
            except KeyboardInterrupt:  # a second Ctrl-C: abort now, clean up, then re-raise
                interrupted, finished = True, False
            if not finished:
                server.force_exit = True
                self._abort.set()
                if not done.wait(STOP_CEILING_SECS):
                    log.warning("the reference server did not stop; closing its database")
        if thread is not None:
            thread.join(STOP_CEILING_SECS)
        self._server = self._thread = self._done = None
        self._close_socket()  # uvicorn closed it already, unless it never started
        if self._runtime is not None:
            self._runtime.close()  # the background workers (joined), then the database
            self._runtime = None
        if interrupted:
            raise KeyboardInterrupt

    def _close_socket(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def serve_forever(self, until: threading.Event | None = None) -> None:
        """Block until the server's thread ends or ``until`` is set (Ctrl-C in the caller
        interrupts it too); ``stop()`` shuts down."""
        done = self._done
        while done is not None and not done.wait(0.1):
            if until is not None and until.is_set():
                return

    def __enter__(self) -> ReferenceServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _serve(server: _Uvicorn, sock: socket.socket, done: threading.Event) -> None:
    """The server's thread: uvicorn until it ends, then its worker threads."""
    try:
        server.run(sockets=[sock])
    finally:
        for worker in server.worker_threads():
            worker.join(STOP_CEILING_SECS)
        done.set()
