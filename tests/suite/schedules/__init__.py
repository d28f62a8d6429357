"""Tests of the schedules family (conformance/suite/schedules/)."""
