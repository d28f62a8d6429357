"""Tests of the robustness family's request variants (conformance/suite/robustness/)."""
