"""The Python entry points behind the façade: `dedupe` and `link`."""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

import pandas as pd

from linkage.engines import get_engine
from linkage.io import (
    TableLike,
    as_frame,
    checksum,
    count_records,
    header,
    is_path,
    read,
    read_batches,
)
from linkage.pipeline import input_projection
from linkage.result import Result
from linkage.run.chunks import auto_chunk_rows, resolve_chunk_rows
from linkage.run.state import Table
from linkage.settings import Rules


def as_rules(rules: Rules | str | Path | dict) -> Rules:
    """`Rules` as they are; a dict or a YAML path read into `Rules`."""
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, dict):
        return Rules.from_dict(rules)
    return Rules.from_yaml(rules)




def as_native(source: TableLike, what: str = "the table") -> str | os.PathLike | pd.DataFrame:
    """A path as it is; any table object as a pandas DataFrame (`linkage.io.as_frame`)."""
    return source if is_path(source) else as_frame(source, what)


def as_table(source: TableLike, sep: str | None, encoding: str,
             columns: list[str] | None = None) -> Table:
    """The input as a `Table`; with `columns`, a file is read for those columns only, and
    its whole rows are read again in batches when the outputs need them."""
    start = time.perf_counter()
    if columns is None or isinstance(source, pd.DataFrame) or Path(source).is_dir():
        frame = read(source, sep=sep, encoding=encoding)
        name = frame.attrs.get("linkage_source", "table")
        return Table(frame, name, checksum(source, frame), time.perf_counter() - start)
    every = header(source, sep=sep, encoding=encoding)
    if set(every) <= set(columns):  # the rules read every column: one pass is enough
        return as_table(source, sep, encoding)
    frame = read(source, sep=sep, encoding=encoding, columns=columns)
    name = frame.attrs.get("linkage_source", "table")
    return Table(frame, name, checksum(source, frame), time.perf_counter() - start,
                 all_columns=every, rows=partial(read_batches, source, sep=sep,
                                                 encoding=encoding))


def _columns(sources: list[TableLike], rules: Rules, id_column: str | None, engine: str,
             chunk_rows: int | None) -> list[str] | None:
    """The columns to read of input files, for a local run in chunks (asked for, or automatic
    for a big input) whose rules read only some columns: everything else stays on disk until
    the kept records are written. None: read whole tables."""
    if not get_engine(engine).projects_columns:
        return None
    columns = input_projection(rules, id_column)
    if columns is None or all(isinstance(s, pd.DataFrame) for s in sources):
        return None
    if resolve_chunk_rows(chunk_rows) is not None:
        return columns
    sizes = [len(s) if isinstance(s, pd.DataFrame) else count_records(s) for s in sources]
    return columns if auto_chunk_rows(sum(sizes)) is not None else None


def dedupe(
    table: TableLike,
    rules: Rules | str | Path | dict,
    *,
    id_column: str | None = None,
    sep: str | None = None,
    encoding: str = "utf-8",
    progress: bool | None = None,
    model: str | Path | None = None,
    checkpoint: str | Path | None = None,
    engine: str = "local",
    spark_master: str = "local[2]",
    chunk_rows: int | None = None,
    labels=None,
) -> Result:
    """Find duplicates inside one table (a path or a DataFrame) with the given rules.

    `model`: the `model.json` of an earlier run, to score with its trained weights.
    `checkpoint`: a folder for stage checkpoints; a rerun resumes after the last finished one.
    `engine`: "local" (this machine) or "spark" (the same rules on Spark at `spark_master`).
    `chunk_rows`: process records and pairs this many at a time (out of core); by default
    chunks start by themselves above 2M records or 10M candidate pairs.
    `labels`: labelled pairs to learn from: a CSV path (columns id_l, id_r, label: 1 match,
    0 non-match, blank left out), a DataFrame with those columns, or a list of them (a later
    one's label wins for a pair labelled twice). They fix Fellegi-Sunter's m and prior
    (semi-supervised EM), or train the supervised scorer where it misclassifies fewer of them
    in cross-validation; the threshold comes from them too. `Result.labels` keeps them
    (`labels.csv` in the run folder); `summary()["labels"]` says how they were used (see
    `linkage.active`).
    """
    rules = as_rules(rules)
    if rules.rename_right:
        from linkage.errors import InputError

        raise InputError(f"{rules.source}: rename_right renames the right table of a link; a "
                         "dedupe has one table. Remove it, or run `linkage link`.")
    found = _run_sources("dedupe", [table], rules, id_column=id_column, sep=sep,
                         encoding=encoding, progress=progress, model=model,
                         checkpoint=checkpoint, engine=engine, spark_master=spark_master,
                         labels=labels)
    if found is not None:
        return found
    table = as_native(table)
    columns = _columns([table], rules, id_column, engine, chunk_rows)
    return _run("dedupe", [as_table(table, sep, encoding, columns)], rules, id_column=id_column,
                progress=progress, model=model, checkpoint=checkpoint, engine=engine,
                spark_master=spark_master, chunk_rows=chunk_rows, labels=labels)


def link(
    left: TableLike,
    right: TableLike,
    rules: Rules | str | Path | dict,
    *,
    id_column: str | None = None,
    sep: str | None = None,
    encoding: str = "utf-8",
    progress: bool | None = None,
    model: str | Path | None = None,
    checkpoint: str | Path | None = None,
    engine: str = "local",
    spark_master: str = "local[2]",
    chunk_rows: int | None = None,
    labels=None,
) -> Result:
    """Find the records of `left` and `right` that describe the same thing (the other
    arguments as for `dedupe`; `labels` ids: left ids in `id_l`, right ids in `id_r`)."""
    rules = as_rules(rules)
    found = _run_sources("link", [left, right], rules, id_column=id_column, sep=sep,
                         encoding=encoding, progress=progress, model=model,
                         checkpoint=checkpoint, engine=engine, spark_master=spark_master,
                         labels=labels)
    if found is not None:
        return found
    left, right = as_native(left, "the left table"), as_native(right, "the right table")
    columns = _columns([left, right], rules, id_column, engine, chunk_rows)
    rename = rules.rename_right or {}
    back = {v: k for k, v in rename.items()}
    right_columns = None if columns is None else [back.get(c, c) for c in columns]
    tables = [as_table(left, sep, encoding, columns),
              _renamed(as_table(right, sep, encoding, right_columns), rename)]
    return _run("link", tables, rules, id_column=id_column, progress=progress,
                model=model, checkpoint=checkpoint, engine=engine, spark_master=spark_master,
                chunk_rows=chunk_rows, labels=labels)


def _renamed(table: Table, rename: dict[str, str]) -> Table:
    """The right table of a link with its columns under the left names (`rename_right`)."""
    if not rename:
        return table
    from linkage.errors import InputError

    clash = [v for k, v in rename.items()
             if v in table.columns and k in table.columns and v not in rename]
    if clash:
        raise InputError(f"{table.name}: rename_right names the right table's columns "
                         f"{', '.join(clash)}, which it already has; rename only columns "
                         "the left table names differently.")
    rows = table.rows
    if rows is not None:
        def renamed_rows(batch_rows: int, rows=rows):
            for batch in rows(batch_rows):
                yield batch.rename(columns=rename)
    return Table(table.frame.rename(columns=rename), table.name, table.checksum,
                 table.read_seconds,
                 all_columns=[rename.get(c, c) for c in table.all_columns]
                 if table.all_columns else None,
                 rows=renamed_rows if rows is not None else None)


def _run_sources(mode, sources, rules, *, id_column, sep, encoding, progress, model,
                 checkpoint, engine, spark_master, labels) -> Result | None:
    """The run of an engine that reads the inputs itself when they are big (Spark's
    distributed route: `run_sources`); None where the engine has no such route or the inputs
    go the usual way (read here into `Table`s)."""
    runner = get_engine(engine)
    if not hasattr(runner, "run_sources"):
        return None
    _check_labels(labels, model)
    runner.check(rules, labels=labels, checkpoint=checkpoint)
    return runner.run_sources(mode, sources, rules, id_column=id_column, sep=sep,
                              encoding=encoding, progress=progress, model=model,
                              options={"master": spark_master}, checkpoint=checkpoint)


def _check_labels(labels, model) -> None:
    if labels is not None and model is not None:
        from linkage.errors import InputError

        raise InputError("--model scores with an earlier run's trained weights and --labels "
                         "trains new ones: pass one of them.")


def _run(mode, tables, rules, *, id_column, progress, model, checkpoint, engine, spark_master,
         chunk_rows, labels=None):
    _check_labels(labels, model)
    runner = get_engine(engine)
    runner.check(rules, labels=labels, checkpoint=checkpoint)
    return runner.run(mode, tables, rules, id_column=id_column, progress=progress, model=model,
                      checkpoint=checkpoint, chunk_rows=chunk_rows, labels=labels,
                      options={"master": spark_master})
