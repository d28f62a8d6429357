"""The SQLite store: transactions commit or roll back whole, temporary files are removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.reference.store import Store


def test_transaction_commits_or_rolls_back(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite3")
    store.apply_schema("CREATE TABLE t (v TEXT);")
    with store.transaction() as conn:
        conn.execute("INSERT INTO t VALUES ('kept')")
    with pytest.raises(RuntimeError), store.transaction() as conn:
        conn.execute("INSERT INTO t VALUES ('lost')")
        raise RuntimeError("boom")
    with store.transaction() as conn:
        assert [r[0] for r in conn.execute("SELECT v FROM t")] == ["kept"]
    store.close()
    store.close()
    reopened = Store(tmp_path / "db.sqlite3")
    with reopened.transaction() as conn:
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 1
    reopened.close()


def test_temporary_store_is_removed_and_closed_store_refuses() -> None:
    store = Store()
    path = store.path
    assert path.exists()
    store.close()
    assert not path.exists()
    with pytest.raises(RuntimeError, match="closed"), store.transaction():
        pass
