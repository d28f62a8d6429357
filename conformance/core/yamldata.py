"""The project's own YAML data files (catalogues, rules, the contract), read with PyYAML's C
loader where PyYAML has it: a run reads them in every test process, and the pure-Python loader
took a tenth of a small run. Safe loading either way; never for a file a user gives."""

from __future__ import annotations

from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(source: str | bytes) -> Any:
    """The data of a YAML document; ``yaml.YAMLError`` when it is not YAML."""
    return yaml.load(source, Loader=_LOADER)
