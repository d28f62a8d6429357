"""What a handler receives: the authenticated merchant, the validated request, the transaction."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from conformance.reference.config import ServerConfig


@dataclass
class RequestContext:
    operation_id: str
    merchant_id: str
    api_key: str
    body: Any
    path: dict[str, str]
    query: dict[str, Any]
    conn: sqlite3.Connection
    config: ServerConfig
    now: datetime

    def fault(self, name: str) -> bool:
        return self.config.fault(name)

    def emit(self, key: str, data: dict[str, Any]) -> None:
        """Emit the event the profile's ``[webhooks.emits]`` names for ``key`` (if any)."""
        from conformance.reference import events

        event_type = self.config.profile.webhooks.emitted(key)
        if event_type is None:
            return
        events.emit(
            self.conn, self.merchant_id, event_type, data, self.now, fault=self.config.fault
        )
