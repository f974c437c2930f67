"""`linkage drift NEW_RUN LABELS`: the quarterly re-check of a threshold in one command."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from linkage.cli.common import json_option
from linkage.cli.labels import _bands


@click.command("drift")
@click.argument("new_run", type=click.Path(file_okay=False, path_type=Path))
@click.argument("labels_path", metavar="LABELS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--baseline", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="The run the labels were sampled from: its scores and decisions are 'then' "
                   "(default: the scores and decisions the labels file carries).")
@click.option("--bands", default=None,
              help="Band edges (default: the bands the labels were sampled with).")
@click.option("--on", type=click.Choice(["auto", "probability", "weight"]), default="auto",
              show_default=True, help="Score scale; auto: probabilities when both runs give them.")
@click.option("--max-drop", default=None, type=float,
              help="Fail (exit 1) when precision in any band fell by more than this (0.05 = 5 "
                   "points).")
@json_option
def command(new_run, labels_path, baseline, bands, on, max_drop, as_json):
    """How precision per score band moved between the run LABELS were sampled from and
    NEW_RUN: for each labelled pair its band then and now, precision per band then and now
    (95% Wilson intervals), the pairs whose decision flipped and those no longer scored.
    Exit 0, or 1 when --max-drop is given and a band fell by more.

    \b
    linkage drift out/customers-q2 out/customers-q1.labels.csv --baseline out/customers-q1
    linkage drift out/customers-q2 out/customers-q1.labels.csv --max-drop 0.05 --json
    """
    import json

    from linkage.cli import GATE
    from linkage.drift import drift
    from linkage.errors import RulesError

    if max_drop is not None and not 0 <= max_drop <= 1:
        raise RulesError(f"--max-drop must be a share of precision in [0, 1]. Got {max_drop!r} "
                         "instead (5 points is 0.05).")
    report = drift(new_run, labels_path, baseline=baseline, on=on, bands=_bands(bands),
                   max_drop=max_drop)
    code = 0 if report.passed else 1
    click.get_current_context().meta[GATE] = code  # also when stdout is closed
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False))
    else:
        click.echo(report.format())
    sys.exit(code)
