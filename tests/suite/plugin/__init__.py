"""Tests of the suite's pytest plugin, one module per module of ``conformance.suite.plugin``."""
