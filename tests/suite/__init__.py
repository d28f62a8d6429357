"""Tests of the conformance suite package: plugin, client and check families."""
