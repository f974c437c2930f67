"""The verbs that show a finished run to a person: `explain` (why a record is where it is) and
`report` (the run's report.html rebuilt from its folder, optionally with labelled pairs for the
precision per score band)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from linkage.cli.common import parse_bands


def _write(path: Path, page: str) -> None:
    """Write through a temporary file in the same folder, so a reader never sees half a page."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(page.encode("utf-8"))
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise


def _check_run_dir(run_dir: Path) -> None:
    from linkage.errors import InputError

    if not run_dir.is_dir():
        raise InputError(f"{run_dir}: no such folder. Pass the --out folder of `linkage dedupe` "
                         "or `linkage link`.")
    for name in ("clusters.parquet", "pairs.parquet", "summary.json", "rules.yaml"):
        if not (run_dir / name).is_file():
            raise InputError(f"{run_dir}: not a run folder (no {name}). Pass the --out folder "
                             "of `linkage dedupe` or `linkage link`, as that run wrote it.")


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("record_id")
@click.argument("other_id", required=False)
def explain(run_dir, record_id, other_id):
    """Why RECORD_ID is in its cluster, or why it and OTHER_ID were or were not linked.

    RUN_DIR is the --out folder of a dedupe or link run. Each pair is shown with every
    comparison's level, similarity and contribution to the match weight.
    """
    from linkage.explain import explain_run

    click.echo(explain_run(run_dir, record_id, other_id))



@click.command("report")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--labels", "labels_path", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Labelled pairs (the CSV of `linkage sample`, `label` filled in): adds the "
                   "precision per score band, as `linkage calibrate` measures it.")
@click.option("--bands", default=None,
              help="Band edges for the precision (default: the bands the labels were sampled "
                   "in, from their `band` column).")
@click.option("--on", type=click.Choice(["probability", "weight"]), default=None,
              help="Band on the match probability or the match weight (default: as sampled).")
@click.option("--target", default=0.95, show_default=True, type=float,
              help="The precision a recommended threshold must reach.")
@click.option("--out", "out_path", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the page (default: RUN_DIR/report.html; with --redact, "
                   "RUN_DIR/report_redacted.html, so the full report stays).")
@click.option("--redact", default=None, metavar="COL[,COL]",
              help="Columns whose values the page must not hold (a report to share): "
                   "hashed or masked wherever the page would show them.")
@click.option("--redact-mode", type=click.Choice(["hash", "mask"]), default="hash",
              show_default=True,
              help="hash: equal values stay equal (a value from a small set can be guessed "
                   "back: use mask for phones and dates); mask: only the shape stays.")
def report(run_dir, labels_path, bands, on, target, out_path, redact, redact_mode):
    """Write the self-contained report.html of the run in RUN_DIR (the --out folder of
    `linkage dedupe` or `link`): stage counts, scores and threshold, the scorer's weights,
    removals by source, the largest clusters, guards, and the LSH S-curve.

    \b
    linkage report out/customers
    linkage report out/customers --labels out/customers.labels.csv \\
        --out out/customers/report-labelled.html
    linkage report out/customers --redact email,phone --out shared.html
    """
    from linkage.report import render_html
    from linkage.result import Result

    chosen = parse_bands(bands)  # a bad --bands fails before any reading
    _check_run_dir(Path(run_dir))
    if not 0.0 < target <= 1.0:
        raise click.BadParameter(f"--target must be a precision in (0, 1]. Got {target!r}.")
    result = Result.load(run_dir)
    page = render_html(result, labels=labels_path, bands=chosen, on=on, target=target,
                       redact=redact, redact_mode=redact_mode)
    # A redacted page is a second page to share; the run's own report stays as it is.
    out = out_path or Path(run_dir) / ("report_redacted.html" if redact else "report.html")
    _write(out, page)
    click.echo(f"wrote {out}")


COMMANDS = (explain, report)
