"""Tests of the robustness family (conformance/suite/robustness/): its proof and its request
variants."""
