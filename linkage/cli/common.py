"""Command-line verbs that live in their own modules; each exposes a click command `command`,
registered on `linkage.cli.main`. Heavy imports stay inside the command functions so that
`linkage --help` stays fast."""

import click

JSON_ERRORS = "linkage.json_errors"  # ctx.meta: the command was asked for JSON (`--json`)


def _remember_json(ctx: click.Context, _param, value: bool) -> bool:
    if value:
        ctx.meta[JSON_ERRORS] = True  # meta is shared by the whole context chain
    return value


def json_option(function):
    """`--json`: the result as one JSON object on standard output, and errors too (an object
    with `error`, `exit_code` and `kind`), so that a pipeline parses one format whatever
    happens. Eager, so that it is known before the other options are checked."""
    return click.option("--json", "as_json", is_flag=True, is_eager=True,
                        callback=_remember_json,
                        help="Print the result as one JSON object (errors too).")(function)
