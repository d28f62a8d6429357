"""Tests of the suite's plumbing: client, transports, TLS, proxy, gateway, rate limits, tap, HAR."""
