"""SQLite storage: one connection, write transactions serialised by a lock.

The database is a file: the one given (``--db PATH``: data survives restarts) or a fresh
temporary file removed on ``close()``. Money is stored as TEXT (decimal strings, raw integers).
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class Store:
    def __init__(self, db_path: Path | None = None) -> None:
        self._tmpdir: str | None = None
        if db_path is None:
            self._tmpdir = tempfile.mkdtemp(prefix="payment-reference-")
            db_path = Path(self._tmpdir) / "reference.sqlite3"
        else:
            db_path.parent.mkdir(parents=True, exist_ok=True)
        self.path = db_path
        self._lock = threading.RLock()
        # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE ... COMMIT).
        self._conn = sqlite3.connect(str(db_path), check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._closed = False

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One serialised transaction: committed when the block ends, rolled back on error."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the store is closed")
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def apply_schema(self, sql: str) -> None:
        with self._lock:
            self._conn.executescript(sql)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._conn.close()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
