"""The ``auth.signer`` hook: the worked example of docs/profile.md signs every request of the
auth family, reports name it with its module's hash, and a hook that signs otherwise, or
fails, is refused at preflight with a message naming it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.core.profile import load_profile
from conformance.engine.options import RunError, RunOptions
from conformance.engine.runner import run_suite
from conformance.reference.server import ReferenceServer
from tests.suite.proofs import family_failures, family_passed

pytestmark = pytest.mark.slow

DOCS = Path(__file__).parents[3] / "docs" / "profile.md"


def documented_hook() -> str:
    """The Python block of the section "A signing hook" in docs/profile.md."""
    section = DOCS.read_text(encoding="utf-8").split("### A signing hook", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


def hooked_profile(tmp_path: Path, module: str, source: str) -> Path:
    (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
    path = tmp_path / "hooked.toml"
    path.write_text(
        f'extends = "default"\n[profile]\nname = "hooked"\n[auth]\nsigner = "{module}:sign"\n',
        encoding="utf-8",
    )
    return path


def run(profile: Path, base_url: str | None = None) -> RunOptions:
    return RunOptions(
        base_url=base_url, profile=str(profile), seed=29, only=("AUTH",), quick=True, workers=1
    )


@pytest.fixture(scope="module")
def default_server() -> Iterator[str]:
    with ReferenceServer(profile=load_profile()) as server:
        yield server.base_url


def test_the_documented_hook_signs_every_request_and_is_recorded(tmp_path: Path) -> None:
    source = documented_hook()
    result = run_suite(run(hooked_profile(tmp_path, "my_signer_29a", source)))
    assert family_failures(result, "auth") == {}
    assert family_passed(result, "auth") >= {f"AUTH-{n:03d}" for n in range(1, 21)}
    assert result.options["auth_signer"] == "my_signer_29a:sign"
    digest = hashlib.sha256((tmp_path / "my_signer_29a.py").read_bytes()).hexdigest()
    assert result.options["auth_signer_sha256"] == digest


def test_a_hook_that_signs_otherwise_is_refused_at_preflight(
    tmp_path: Path, default_server: str
) -> None:
    source = documented_hook().replace("hashlib.sha256", "hashlib.sha512")
    with pytest.raises(RunError, match=r"rejected the signed request \(401"):
        run_suite(run(hooked_profile(tmp_path, "my_signer_29b", source), default_server))


def test_a_hook_that_raises_is_named_and_no_traceback(tmp_path: Path, default_server: str) -> None:
    source = "def sign(request, credential):\n    raise KeyError(credential.api_secret)\n"
    with pytest.raises(RunError) as refused:
        run_suite(run(hooked_profile(tmp_path, "my_signer_29c", source), default_server))
    message = str(refused.value)
    assert "the auth.signer hook my_signer_29c:sign raised KeyError" in message
    assert "sk_test_alpha" not in message


def test_a_hook_that_returns_no_headers_is_named(tmp_path: Path, default_server: str) -> None:
    source = "def sign(request, credential):\n    return None\n"
    with pytest.raises(RunError, match="must return a mapping of header names to strings"):
        run_suite(run(hooked_profile(tmp_path, "my_signer_29d", source), default_server))


def test_a_hook_failing_mid_run_leaves_its_checks_not_judged_never_failed(tmp_path: Path) -> None:
    source = documented_hook().replace(
        "    message = (",
        '    if request.method == "POST":\n        raise ValueError("no")\n    message = (',
    )
    result = run_suite(run(hooked_profile(tmp_path, "my_signer_29e", source)))
    assert family_failures(result, "auth") == {}
    reasons = {c.reason_not_exercised for c in result.checks if c.operation_id == "createPayment"}
    said = "the auth.signer hook my_signer_29e:sign raised ValueError"
    assert any(said in str(reason) for reason in reasons)
