"""tomlsafe: TOML nested too deep, or with a key of too many parts, is refused before parsing."""

from __future__ import annotations

import tomllib

import pytest

from conformance.core import tomlsafe
from conformance.core.profile import SHIPPED_PROFILES_DIR

DEEP = "x = " + "[" * 200_000 + "]" * 200_000
LONG_KEY = "a" + ".a" * 100_000 + " = 1"


def test_arrays_nested_deeper_than_the_bound_are_refused_with_the_line() -> None:
    with pytest.raises(tomlsafe.TomlTooComplex, match="line 2: arrays or inline tables nested"):
        tomlsafe.loads("ok = 1\n" + DEEP)


def test_inline_tables_count_as_arrays_do() -> None:
    nested = "x = " + "{a = " * 40 + "1" + "}" * 40
    with pytest.raises(tomlsafe.TomlTooComplex, match="deeper than 32 levels"):
        tomlsafe.loads(nested)


def test_a_dotted_key_of_too_many_parts_is_refused() -> None:
    # tomllib's memory grows with the square of the parts: 100,000 parts exhaust a machine
    with pytest.raises(tomlsafe.TomlTooComplex, match="a dotted key of more than 32 parts"):
        tomlsafe.loads(LONG_KEY)
    with pytest.raises(tomlsafe.TomlTooComplex, match="a dotted key"):
        tomlsafe.loads("[" + " . ".join(['"t"'] * 40) + "]\n")


def test_the_bound_itself_is_accepted() -> None:
    value = tomlsafe.loads("x = " + "[" * 32 + "]" * 32)["x"]
    for _ in range(31):
        value = value[0]
    assert value == []
    key = ".".join(["k"] * 32)
    assert tomlsafe.loads(f"{key} = 1") == tomllib.loads(f"{key} = 1")


def test_brackets_and_dots_in_strings_and_comments_do_not_count() -> None:
    text = "\n".join(
        [
            f'a = "{"[" * 100}"',
            f"b = '{'{' * 100}'",
            f'c = """\n{"[" * 100}\n"""',
            f"d = '''{'.' * 100}'''",
            f"# {'[' * 100}",
            f"e = [{', '.join(['1.5'] * 100)}]",
        ]
    )
    assert tomlsafe.loads(text)["e"] == [1.5] * 100


def test_the_shipped_profiles_pass() -> None:
    for path in SHIPPED_PROFILES_DIR.glob("*.toml"):
        text = path.read_text(encoding="utf-8")
        assert tomlsafe.loads(text) == tomllib.loads(text)
