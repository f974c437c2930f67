"""The verbs that write a run folder: `dedupe` and `link` make one, `update` adds records to
one, `forget` removes a person from one. Each holds its `--out` for the whole command (`claim`)
and shows the rules' warnings on standard error."""

from __future__ import annotations

from pathlib import Path

import click

from linkage.cli.common import (
    EXAMPLES,
    LABELS_LOOP,
    claim,
    encoding_option,
    id_column_option,
    labels_loop,
    out_folder_option,
    rules_option,
    sep_option,
    suggested_rules,
    warnings_to_stderr,
)
from linkage.engines import engine_names


def _run_options(func):
    """The options of `dedupe` and `link`."""
    options = [
        rules_option("Rules YAML file (see rules/customers.yaml). Without it, the rules that "
                     "`linkage suggest` would write are used and saved in --out."),
        out_folder_option("Output folder: new, empty or an earlier run's; replaced only when "
                          "the run succeeds."),
        id_column_option("Column holding record ids (overrides `id_column` in the rules). "
                         "Without one, row numbers become ids in column `row_id`."),
        sep_option("CSV separator; sniffed from the file when not given."),
        encoding_option("CSV text encoding, e.g. cp949 for Korean Windows exports."),
        click.option("--progress/--no-progress", default=None,
                     help="Progress bars (default: only on a terminal)."),
        click.option("--model", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="model.json of an earlier run: score with its trained weights "
                          "instead of training again."),
        click.option("--engine", type=click.Choice(engine_names()), default="local",
                     show_default=True,
                     help="local: this machine (numpy, pandas, RapidFuzz). spark: the same rules "
                          "on Spark (pyspark; see --spark-master)."),
        click.option("--spark-master", default="local[2]", show_default=True,
                     help="Spark master URL for --engine spark, e.g. spark://host:7077."),
        click.option("--chunk-rows", type=click.IntRange(min=1), default=None,
                     help="Process records and pairs this many at a time, streaming pairs to "
                          "Parquet (out of core). Default: by itself above 2M records or 10M "
                          "candidate pairs."),
        click.option("--resume", is_flag=True,
                     help="Keep stage checkpoints in OUT.checkpoint/ and start after the last "
                          "finished stage of an interrupted run of the same rules and inputs; "
                          "removed when the run succeeds."),
        click.option("--labels", "labels_paths", multiple=True,
                     type=click.Path(dir_okay=False, path_type=Path),
                     help="Labelled pairs to learn from (CSV: id_l, id_r, label 1 or 0, as "
                          "`linkage sample` writes it); repeat for several files. When --out "
                          "holds an earlier run made with labels, its labels.csv is read first "
                          "and these add to it. See LABELS below."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _checkpoint(out: Path, resume: bool) -> Path | None:
    return out.with_name(out.name + ".checkpoint") if resume else None



def _labels(paths: tuple[Path, ...], out: Path) -> list[Path] | None:
    """The labels files of a run: the earlier run's in --out first (when it kept some), then
    those given; None without --labels."""
    if not paths:
        return None
    from linkage.active import LABELS_FILE

    earlier = out / LABELS_FILE
    if earlier.is_file():
        click.echo(f"--labels: adding to the {LABELS_FILE} of the run in {out}/", err=True)
        return [earlier, *paths]
    return list(paths)


def _finish(result, out: Path, checkpoint: Path | None = None,
            progress: bool | None = None) -> None:
    from linkage.progress import stage_line

    with stage_line("writing the outputs", progress):
        result.write(out)
    if checkpoint is not None:
        import shutil

        shutil.rmtree(checkpoint, ignore_errors=True)
    click.echo(result.format_summary(out))
    used = result.summary().get("labels")
    if used:
        click.echo(f"  labels            {used['pairs']:,} ({used['matches']:,} matches, "
                   f"{used['non_matches']:,} non-matches): {used['mode']}, threshold "
                   f"{used['threshold']:.4g} from {used['threshold_source']}")
    click.echo(f"  wrote {out}/")


@click.command(epilog=LABELS_LOOP + EXAMPLES)
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@_run_options
def dedupe(input_path, rules_path, out, id_column, sep, encoding, progress, model, engine,
           spark_master, chunk_rows, resume, labels_paths):
    """Find duplicate records inside INPUT (CSV or Parquet)."""
    from linkage.api import dedupe as run

    warnings_to_stderr()
    with claim(out, input_path, rules_path, model, *labels_paths):
        labels = _labels(labels_paths, out)
        rules = rules_path or suggested_rules([input_path], sep, encoding, progress)
        result = run(input_path, rules, id_column=id_column, sep=sep, encoding=encoding,
                     progress=progress, model=model, checkpoint=_checkpoint(out, resume),
                     engine=engine, spark_master=spark_master, chunk_rows=chunk_rows,
                     labels=labels)
        _finish(result, out, _checkpoint(out, resume), progress)


@click.command(epilog=labels_loop("link sample_data/link_left.csv sample_data/link_right.csv "
                                  "--rules rules/link.yaml", "sample_data/link_truth.csv")
              + EXAMPLES)
@click.argument("left", type=click.Path(path_type=Path))
@click.argument("right", type=click.Path(path_type=Path))
@_run_options
def link(left, right, rules_path, out, id_column, sep, encoding, progress, model, engine,
         spark_master, chunk_rows, resume, labels_paths):
    """Link the records of LEFT and RIGHT that describe the same thing."""
    from linkage.api import link as run

    warnings_to_stderr()
    with claim(out, left, right, rules_path, model, *labels_paths):
        labels = _labels(labels_paths, out)
        rules = rules_path or suggested_rules([left, right], sep, encoding, progress)
        result = run(left, right, rules, id_column=id_column, sep=sep, encoding=encoding,
                     progress=progress, model=model, checkpoint=_checkpoint(out, resume),
                     engine=engine, spark_master=spark_master, chunk_rows=chunk_rows,
                     labels=labels)
        _finish(result, out, _checkpoint(out, resume), progress)


@click.command("update")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("new_input", metavar="NEW_INPUT", type=click.Path(path_type=Path))
@out_folder_option("Folder for the new run; RUN_DIR is never changed.")
@sep_option("CSV separator of NEW_INPUT; sniffed when not given.")
@encoding_option()
def update(run_dir, new_input, out, sep, encoding):
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
    from linkage.update import update as run_update

    warnings_to_stderr()
    with claim(out, run_dir, new_input):
        done = run_update(run_dir, new_input, out=out, sep=sep, encoding=encoding)
    click.echo(done.format_summary())
    click.echo(f"  wrote {out}/ ({run_dir}/ is unchanged)")


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("record_id", required=False)
@click.option("--column", default=None, help="Find the records by this column's value instead.")
@click.option("--value", default=None, help="The value to look for in --column.")
@out_folder_option("Folder for the new run; the original run is never changed.")
@click.option("--only-record", is_flag=True,
              help="Remove only the matching record(s), not their whole clusters; a new "
                   "representative is chosen by the keeper policy where needed.")
def forget(run_dir, record_id, column, value, out, only_record):
    """Remove every copy of a person from a run: RECORD_ID's whole cluster (or the records
    whose --column equals --value), written as a new run in --out.

    \b
    linkage forget out/customers C-000019 --out out/customers-forgotten
    linkage forget out/customers --column email --value kim@example.kr --out out/f
    """
    from linkage.forget import forget as run_forget

    if (record_id is None) == (column is None):
        raise click.UsageError("give a RECORD_ID, or --column and --value (not both)")
    if column is not None and value is None:
        raise click.UsageError("--column needs --value")
    with claim(out, run_dir):
        plan = run_forget(run_dir, out, record_id, column=column, value=value,
                          only_record=only_record)
    click.echo(plan.describe())
    click.echo(f"  wrote {out}/ ({run_dir}/ is unchanged)")


COMMANDS = (dedupe, link, update, forget)
