"""What every subcommand shares: how it fails, and how it reads lists of selectors."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import IO, Any, NoReturn, TypeVar

import click

USAGE_ERROR = 2  # could not run: bad options, bad files, nothing to test
T = TypeVar("T")


class NonNegativeInt(click.ParamType):  # type: ignore[type-arg]
    """An integer 0 or more (a seed): anything else says so, not "not a valid integer range"."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        text = str(value).strip()
        if not text.isascii() or not text.isdigit():
            self.fail(f"{value!r} is not a non-negative integer (0, 1, 2, ...)", param, ctx)
        return int(text)


SEED = NonNegativeInt()


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on standard error and exit with the could-not-run code."""
    click.echo(f"error: {message}", err=True)
    raise SystemExit(USAGE_ERROR)


def _show_usage_error(error: click.UsageError, file: IO[Any] | None = None) -> None:
    """Click's usage errors in our form: ``error: <message>`` and a hint, nothing else."""
    click.echo(f"error: {error.format_message()}", err=True)
    if error.ctx is not None:
        click.echo(f"see '{error.ctx.command_path} --help'", err=True)


@contextlib.contextmanager
def _our_usage_errors() -> Iterator[None]:
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise  # a group called bare shows its help, as click does
    except click.UsageError as error:
        # click prints the error it catches with its ``show``; the instance's own wins
        setattr(error, "show", functools.partial(_show_usage_error, error))  # noqa: B010
        raise


class ConformanceGroup(click.Group):
    """The ``payment-conformance`` group: every usage error below it prints as ``fail`` does.

    Options of the group and of every subcommand are parsed within ``make_context`` and
    ``invoke`` of this group, so wrapping those two catches every usage error; exit code 2
    (``USAGE_ERROR``) is click's own for them.
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        with _our_usage_errors():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _our_usage_errors():
            return super().invoke(ctx)


def split_selectors(values: tuple[str, ...]) -> tuple[str, ...]:
    """``("IDEM,AUTH-003", "spec 5")`` -> ``("IDEM", "AUTH-003", "spec 5")``."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def refuse_empty_selectors(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    """A click callback for ``--only``/``--skip``: a value with no selector in it (``""``,
    blanks, commas) is a usage error, never "no filter" (``--only ""`` would test everything)."""
    for value in values:
        if not split_selectors((value,)):
            raise click.UsageError(
                f"--{param.name}: an empty selector selects nothing ({value!r}); give "
                "requirement ids, id prefixes or sections (IDEM, AUTH-003, 'spec 5'), or leave "
                f"--{param.name} out",
                ctx,
            )
    return values


profile_option = click.option(
    "--profile",
    "profile_name",
    default="default",
    show_default=True,
    help="A shipped profile name or the path of a profile .toml file.",
)


def parsed_by(
    parse: Callable[[Any], T],
) -> Callable[[click.Context, click.Parameter, Any], T | None]:
    """A click callback: the option's value through ``parse`` (None stays None); its ValueError
    is click's usage error (exit 2)."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> T | None:
        if value is None:
            return None
        try:
            return parse(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None

    return callback


def server_rate_limit_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--server-rate-limit N``: the embedded reference server's rate limit (``serve
    --rate-limit``): 429 with Retry-After past N requests a second per API key."""
    from conformance.reference.gateway import rate_limit

    return click.option(
        "--server-rate-limit",
        type=float,
        callback=parsed_by(rate_limit),
        metavar="N",
        help=help,
    )


def latency_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--latency-ms MS``: the reference server answers every request this much later."""
    from conformance.reference.config import MAX_LATENCY_MS

    return click.option(
        "--latency-ms",
        type=click.IntRange(0, MAX_LATENCY_MS),
        default=0,
        show_default=True,
        metavar="MS",
        help=help,
    )


def escape_reading_option(
    name: str, help: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--escape-reading refuse|literal`` (``name``): how the reference server reads a "%" not
    followed by two hex digits where the profile allows either reading."""
    from conformance.reference.config import ESCAPE_READINGS

    return click.option(
        name, "escape_reading", type=click.Choice(ESCAPE_READINGS), default=None, help=help
    )
