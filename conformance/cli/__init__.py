"""The ``payment-conformance`` command.

Each subcommand lives in its own module; this module only assembles them.
"""

from __future__ import annotations

import click

from conformance import __version__
from conformance.cli._common import ConformanceGroup
from conformance.cli.contract import contract, profile
from conformance.cli.diff import diff
from conformance.cli.merge import merge
from conformance.cli.profile_points import points
from conformance.cli.report import report
from conformance.cli.requirements import requirements
from conformance.cli.run import run
from conformance.cli.selftest import selftest
from conformance.cli.serve import faults, serve
from conformance.cli.validate import validate
from conformance.cli.verify import keygen, verify


@click.group(cls=ConformanceGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="payment-conformance")
def main() -> None:
    """Contract-conformance suite and validator for the Payment Service API."""


main.add_command(contract)
main.add_command(requirements)
profile.add_command(points)
main.add_command(profile)
main.add_command(run)
main.add_command(serve)
main.add_command(faults)
main.add_command(selftest)
main.add_command(report)
main.add_command(merge)
main.add_command(verify)
main.add_command(keygen)
main.add_command(validate)
main.add_command(diff)
