"""Developer sessions: ``nox -s tests``, ``nox -s lint``, ``nox -s typecheck``, ``nox -s bench``,
``nox -s compare``, ``nox -s flakes``, ``nox -s deployments``, ``nox -s validate_faults``."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_existing_virtualenvs = True


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    session.install("-e", ".[dev]")
    session.run("pytest", "-n", "4", *session.posargs)


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6")
    session.run("ruff", "check", "conformance", "benchmarks", "tests", "noxfile.py")
    session.run("ruff", "format", "--check", "conformance", "benchmarks", "tests", "noxfile.py")


@nox.session(python="3.11")
def typecheck(session: nox.Session) -> None:
    session.install("-e", ".[dev]")
    session.run("mypy")


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    session.install("-e", ".[dev]")
    session.run("python", "-m", "benchmarks.server", *session.posargs)
    session.run("python", "-m", "benchmarks.suite")


@nox.session(python="3.11")
def compare(session: nox.Session) -> None:
    """Our run --quick and run against plain schemathesis over the fault catalogue (~1 hour)."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "benchmarks.compare", *session.posargs)


@nox.session(python="3.11")
def flakes(session: nox.Session) -> None:
    """The flake gate: 20 default runs with new seeds against the unfaulted reference server."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "benchmarks.flakes", "--runs", "20", *session.posargs)


@nox.session(python="3.11")
def deployments(session: nox.Session) -> None:
    """The suite against each deployment the reference server stands in for (TLS, mutual TLS,
    rate limits, a gateway header, a base path, latency): verdict, wall, CPU, 429s."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "benchmarks.deployments", *session.posargs)


@nox.session(python="3.11")
def validate_faults(session: nox.Session) -> None:
    """The passive validator on a scripted merchant client's HAR recordings of the reference
    server, unfaulted (3 seeds) and once per fault: caught / visible / total per category."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "benchmarks.validate_faults", *session.posargs)
