"""The Python entry points behind the façade: `dedupe` and `link`."""

from __future__ import annotations

import time
from pathlib import Path

from linkage.io import TableLike, checksum, read
from linkage.pipeline import Table, run_local
from linkage.result import Result
from linkage.settings import Rules


def _rules(rules: Rules | str | Path | dict) -> Rules:
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, dict):
        return Rules.from_dict(rules)
    return Rules.from_yaml(rules)


def _table(source: TableLike, sep: str | None, encoding: str) -> Table:
    start = time.perf_counter()
    frame = read(source, sep=sep, encoding=encoding)
    name = frame.attrs.get("linkage_source", "table")
    return Table(frame, name, checksum(source, frame), time.perf_counter() - start)


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
) -> Result:
    """Find duplicates inside one table (a path or a DataFrame) with the given rules.

    `model`: the `model.json` of an earlier run, to score with its trained weights.
    `checkpoint`: a folder for stage checkpoints; a rerun resumes after the last finished one.
    """
    return run_local("dedupe", [_table(table, sep, encoding)], _rules(rules),
                     id_column=id_column, progress=progress, model=model, checkpoint=checkpoint)


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
) -> Result:
    """Find the records of `left` and `right` that describe the same thing."""
    tables = [_table(left, sep, encoding), _table(right, sep, encoding)]
    return run_local("link", tables, _rules(rules), id_column=id_column, progress=progress,
                     model=model, checkpoint=checkpoint)
