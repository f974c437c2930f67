"""`linkage update`: add new records to a finished dedupe run, keeping its cluster ids."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("update")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("new_input", metavar="NEW_INPUT", type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the new run; RUN_DIR is never changed.")
@click.option("--sep", default=None, help="CSV separator of NEW_INPUT; sniffed when not given.")
@click.option("--encoding", default="utf-8", show_default=True, help="CSV text encoding.")
def command(run_dir, new_input, out, sep, encoding):
    """Link the records of NEW_INPUT against the dedupe run in RUN_DIR, without comparing the
    old pairs again, and write the combined run to --out.

    Only pairs with a new record are blocked, compared and scored, with the run's trained
    scorer; clusters then form over all pairs as in a full run. Cluster ids are stable: a
    cluster keeps its id when it gains records, a merge keeps the oldest id, and
    lineage.parquet in --out says what changed. --out also holds records.parquet (old and
    new records), so it can be updated in turn.

    \b
    linkage update out/customers sample_data/customers_day2.csv --out out/customers-2
    """
    from linkage.cli import _warnings_to_stderr, claim
    from linkage.incremental import update

    _warnings_to_stderr()
    with claim(out, run_dir, new_input):
        done = update(run_dir, new_input, out=out, sep=sep, encoding=encoding)
    click.echo(done.format_summary())
    click.echo(f"  wrote {out}/ ({run_dir}/ is unchanged)")
