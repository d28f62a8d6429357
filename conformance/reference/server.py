"""``ReferenceServer``: the reference server on a loopback port, in a background thread.

    with ReferenceServer(profile=load_profile(), faults=("auth-nonce-not-checked",)) as srv:
        httpx.get(srv.base_url + "/v1/payments", headers=...)

The socket is bound before the server starts, so ``base_url`` is known at once; ``start()``
returns when the server answers; ``stop()`` (idempotent) ends the thread and removes the
temporary database.
"""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import uvicorn

from conformance.core.profile import Profile, load_profile
from conformance.reference.app import Runtime, create_app
from conformance.reference.config import ServerConfig
from conformance.reference.store import Store

START_TIMEOUT_SECS = 10.0


class ServerStartError(RuntimeError):
    """The server could not start (port in use, bad address, startup failure)."""


class ReferenceServer:
    def __init__(
        self,
        profile: Profile | None = None,
        faults: Iterable[str] = (),
        db_path: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.profile = profile if profile is not None else load_profile()
        self.faults = frozenset(faults)
        self.db_path = Path(db_path) if db_path is not None else None
        self.host = host
        self.port = port
        ServerConfig(self.profile, self.faults)  # rejects unknown faults before binding
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._runtime: Runtime | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        if self._socket is None:
            raise RuntimeError("the server is not running")
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"http://{host}:{self.port}"

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
            config = ServerConfig(self.profile, self.faults, self.base_url, self.db_path)
            try:
                app = create_app(config)
            except (sqlite3.Error, OSError) as exc:
                self._close_socket()
                raise ServerStartError(f"cannot open the database {self.db_path}: {exc}") from None
            except BaseException:
                self._close_socket()
                raise
            self._runtime = app.state.runtime
            uv_config = uvicorn.Config(
                app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=30
            )
            server = uvicorn.Server(uv_config)
            thread = threading.Thread(
                target=server.run, kwargs={"sockets": [sock]}, name="reference-server", daemon=True
            )
            self._server, self._thread = server, thread
            thread.start()
            deadline = time.monotonic() + START_TIMEOUT_SECS
            while not server.started:
                if not thread.is_alive() or time.monotonic() > deadline:
                    self._shutdown()
                    raise ServerStartError("the reference server did not start")
                time.sleep(0.002)
            return self

    def stop(self) -> None:
        with self._lock:
            self._shutdown()

    def _shutdown(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None
        self._close_socket()
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None

    def _close_socket(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def serve_forever(self) -> None:
        """Block until the server thread ends (Ctrl-C in the caller stops it)."""
        thread = self._thread
        while thread is not None and thread.is_alive():
            thread.join(timeout=0.5)

    def __enter__(self) -> ReferenceServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
