"""Tests of the x402 family (conformance/suite/x402/)."""
