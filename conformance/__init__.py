"""payment-conformance: contract-conformance suite for the Payment Service API."""

from __future__ import annotations

__version__ = "0.1.0"
