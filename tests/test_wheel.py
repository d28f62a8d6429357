"""The built wheel works on its own: installed in a fresh virtual environment, run elsewhere.

The wheel is built offline (``--no-build-isolation``, hatchling from the dev extra). The new
environment sees the current one's dependencies through a ``.pth`` file instead of downloading
them, and the wheel is installed with ``--no-deps``. The ``.pth`` lines add plain directories,
so the editable install of the source tree (itself a ``.pth`` in those directories) is not
activated: ``conformance`` can only come from the wheel.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{result.args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("hatchling", reason="install the dev extra: hatchling builds the wheel")
    dist = tmp_path_factory.mktemp("dist")
    _ok(
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--quiet",
                "--wheel-dir",
                str(dist),
                str(ROOT),
            ],
            cwd=dist,
        )
    )
    (built,) = dist.glob("payment_conformance-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    env_dir = tmp_path_factory.mktemp("venv")
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], cwd=env_dir))
    python = env_dir / "bin" / "python"
    purelib = _ok(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], env_dir)
    ).strip()
    lines = [*site.getsitepackages(), site.getusersitepackages()]
    (Path(purelib) / "_outer_dependencies.pth").write_text("\n".join(lines) + "\n")
    _ok(
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(python),
                "install",
                "--no-deps",
                "--no-index",
                "--quiet",
                str(wheel),
            ],
            cwd=env_dir,
        )
    )
    return env_dir


@pytest.mark.slow
def test_the_wheel_carries_the_openapi_document_and_the_profiles(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "conformance/_openapi/payment-service.yaml" in names
    assert "conformance/profiles/default.toml" in names
    assert "conformance/profiles/profile.schema.json" in names
    assert "conformance/core/shard_costs.toml" in names  # run --shard balances by it


@pytest.mark.slow
def test_the_wheel_holds_the_conformance_package_and_no_benchmarks(wheel: Path) -> None:
    """The benchmarks are a developer's tools in the repository (``python -m benchmarks.flakes``
    from its root), not part of what a user installs."""
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names}
    assert {top for top in top_level if not top.endswith(".dist-info")} == {"conformance"}
    assert not [name for name in names if "benchmarks/" in name]


@pytest.mark.slow
def test_the_installed_console_script_prints_the_effective_contract(
    venv: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _ok(
        _run(
            [str(venv / "bin" / "python"), "-c", "import conformance; print(conformance.__file__)"],
            cwd=elsewhere,
        )
    ).strip()
    assert Path(where).resolve().is_relative_to(venv.resolve()), where

    output = _ok(
        _run([str(venv / "bin" / "payment-conformance"), "contract", "--format", "json"], elsewhere)
    )
    doc = json.loads(output)
    operations = [
        op["operationId"]
        for item in doc["paths"].values()
        for method, op in item.items()
        if method in ("get", "put", "post", "delete")
    ]
    assert len(operations) == len(set(operations)) == 20
    assert doc["info"]["x-profile"]["name"] == "default"


@pytest.mark.slow
def test_the_installed_console_script_fails_cleanly_on_a_bad_profile(
    venv: Path, tmp_path: Path
) -> None:
    result = _run(
        [str(venv / "bin" / "payment-conformance"), "contract", "--profile", "nonexistent"],
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert "no profile named 'nonexistent'" in result.stderr
    assert "Traceback" not in result.stderr
