"""The gates, verbs whose exit code is a verdict for a pipeline (ETL, CI): `check` (is the
duplicate rate of a table at most a limit?) and `drift` (has precision per score band held since
the labels were sampled? the quarterly re-check of a threshold in one command). 0 passed, 1
failed; the code is kept (`GATE`) before anything is printed, so a closed pipe keeps it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from linkage.cli.common import (
    GATE,
    encoding_option,
    id_column_option,
    json_option,
    parse_bands,
    rules_option,
    sep_option,
    suggested_rules,
)


@click.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@rules_option()
@click.option("--max-duplicate-rate", required=True, type=float,
              help="Fail when more than this share of the records are duplicates (0.01 = 1%).")
@id_column_option()
@sep_option(None)
@encoding_option(None)
@json_option
def check(input_path, rules_path, max_duplicate_rate, id_column, sep, encoding, as_json):
    """A data-quality gate for ETL: exit 0 when INPUT's duplicate rate is at most
    --max-duplicate-rate, 1 when it is above, 2 on bad input or rules (the message says what
    to fix; also a table this machine's memory cannot hold), 3 when the model is unreliable
    (a diagnostic, e.g. one giant cluster, says the duplicate rate cannot be trusted; it is
    printed with what to do), 4 on a bug in linkage: 1 always means the gate failed.

    \b
    linkage check sample_data/customers.csv --rules rules/customers.yaml \\
        --max-duplicate-rate 0.01 --json
    """
    import json as json_module

    from linkage.gate import check as gate
    from linkage.gate import check_rate

    check_rate(max_duplicate_rate)
    if rules_path is None:  # suggested with the command's own notice
        rules_path = suggested_rules([input_path], sep, encoding, False)
    verdict = gate(input_path, rules_path, max_duplicate_rate=max_duplicate_rate,
                   id_column=id_column, sep=sep, encoding=encoding)
    code, report = verdict.code, {**verdict.report, "input": str(input_path)}
    click.get_current_context().meta[GATE] = code  # also when stdout is closed
    if as_json:
        click.echo(json_module.dumps(report, ensure_ascii=False))
    else:
        click.echo(verdict.format())
    sys.stdout.flush()
    sys.exit(code)


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
def drift(new_run, labels_path, baseline, bands, on, max_drop, as_json):
    """How precision per score band moved between the run LABELS were sampled from and
    NEW_RUN: for each labelled pair its band then and now, precision per band then and now
    (95% Wilson intervals), the pairs whose decision flipped and those no longer scored.
    Exit 0, or 1 when --max-drop is given and a band fell by more.

    \b
    linkage drift out/customers-q2 out/customers-q1.labels.csv --baseline out/customers-q1
    linkage drift out/customers-q2 out/customers-q1.labels.csv --max-drop 0.05 --json
    """
    import json

    from linkage.drift import drift as measure_drift
    from linkage.errors import RulesError

    if max_drop is not None and not 0 <= max_drop <= 1:
        raise RulesError(f"--max-drop must be a share of precision in [0, 1]. Got {max_drop!r} "
                         "instead (5 points is 0.05).")
    report = measure_drift(new_run, labels_path, baseline=baseline, on=on, bands=parse_bands(bands),
                   max_drop=max_drop)
    code = 0 if report.passed else 1
    click.get_current_context().meta[GATE] = code  # also when stdout is closed
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False))
    else:
        click.echo(report.format())
    sys.exit(code)


COMMANDS = (check, drift)
