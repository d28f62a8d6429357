"""Tests of the payments family (conformance/suite/payments/)."""
