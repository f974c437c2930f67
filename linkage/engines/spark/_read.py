"""Inputs of the distributed route, read by Spark: files and folders, or Spark DataFrames.

The records never reach the driver. Each table is numbered 0, 1, 2 ... in the order Spark
reads it (a file: its own order; a folder: Spark's order of its files; a DataFrame: its
partitions' order), the right table of a link after the left, by partition counts and offsets
(no single-task window). The checks of the local engine (`linkage.pipeline.validate_tables`)
are Spark aggregates here, with the same error classes and messages: an empty table, a column
the rules name that the table lacks or that is empty in every record, a nested column, the id
column missing, empty or repeated.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from linkage.engines.spark._frames import pinned
from linkage.errors import InputError
from linkage.run.state import ROW_ID

DRIVER_ROWS_VARIABLE = "LINKAGE_SPARK_DRIVER_ROWS"
DRIVER_ROWS = 200_000  # records (all tables together) up to which the driver route runs
ROW = "__linkage_row"  # each record's number in the run, beside the input's own columns


def driver_rows() -> int:
    """The size limit of the driver route: runs of at most this many records read their
    tables on the driver and write the local engine's single files; larger ones are
    distributed. `LINKAGE_SPARK_DRIVER_ROWS` sets it (0: always distributed)."""
    given = os.environ.get(DRIVER_ROWS_VARIABLE, "").strip()
    if not given:
        return DRIVER_ROWS
    try:
        value = int(given.replace("_", ""))
    except ValueError:
        raise InputError(f"{DRIVER_ROWS_VARIABLE}={given!r}: not a whole number of records. "
                         "Set it to e.g. 200000, or 0 to run every Spark run distributed."
                         ) from None
    if value < 0:
        raise InputError(f"{DRIVER_ROWS_VARIABLE}={given!r}: below 0. Set it to 0 or more.")
    return value


def is_spark_frame(source) -> bool:
    """Whether `source` is a pyspark DataFrame (classic or Connect), without importing
    pyspark."""
    kind = type(source)
    return kind.__module__.startswith("pyspark") and kind.__name__ == "DataFrame"


@dataclass
class SparkTable:
    """One input as Spark holds it: `frame` (its columns, and `ROW`: its record number in the
    run), its name and checksum for summary.json, its size and columns, its first number."""

    frame: object
    name: str
    records: int
    columns: list[str]
    checksum: str | None
    first_row: int = 0


def _read(spark, source, sep: str | None, encoding: str):
    """The Spark DataFrame of a path (Parquet file or folder, or CSV, by the local engine's
    rule) or a DataFrame as it is; and its name."""
    if is_spark_frame(source):
        return source, "a Spark DataFrame"
    from linkage.io import is_parquet, sniff_separator

    name = str(source)
    local = "://" not in name
    if local and not Path(name).exists():
        raise InputError(f"{name}: no such file or folder. Check the path.")
    if name.endswith((".csv", ".tsv", ".txt", ".csv.gz")) or (local and not is_parquet(
            Path(name))):
        if sep is None:
            sep = sniff_separator(Path(name), encoding) if local else ","
        # As the local reader reads a CSV: every value text, blank cells missing, spaces
        # after a separator skipped.
        return (spark.read.option("header", True).option("sep", sep)
                .option("encoding", encoding).option("inferSchema", False)
                .option("ignoreLeadingWhiteSpace", True)
                .option("multiLine", True).option("escape", '"').csv(name)), name
    return spark.read.parquet(name), name


def _numbered(frame, start: int):
    """`frame` with `ROW`: start, start + 1 ... in the order its partitions hold the rows, and
    its number of rows. Checkpointed, so every later pass sees the same numbers."""
    from pyspark.sql import functions as F

    tagged = frame.withColumn("__pid", F.spark_partition_id()).withColumn(
        "__mid", F.monotonically_increasing_id()).transform(pinned, lazy=True)  # by the counts
    counts = {r["__pid"]: r["count"] for r in tagged.groupBy("__pid").count().collect()}
    offsets, total = [], start
    for pid in range(max(counts, default=-1) + 1):
        offsets.append(total)
        total += counts.get(pid, 0)
    if not offsets:
        return tagged.drop("__pid", "__mid").withColumn(ROW, F.lit(0).cast("long")), 0
    offset = F.element_at(F.array(*[F.lit(o).cast("long") for o in offsets]),
                          F.col("__pid") + 1)
    within = F.col("__mid").bitwiseAND(F.lit((1 << 33) - 1))
    numbered = tagged.withColumn(ROW, offset + within).drop("__pid", "__mid")
    return numbered, total - start


def _checksum(source) -> str | None:
    """The local engine's checksum of an input file (its bytes, read in blocks); None for a
    DataFrame or a path the driver cannot open."""
    if is_spark_frame(source) or "://" in str(source):
        return None
    from linkage.io import checksum

    return checksum(source, None)


def read_tables(spark, sources: list, rules, id_column: str | None, sep: str | None,
                encoding: str, rename_right: dict[str, str] | None = None) -> list[SparkTable]:
    """The inputs as `SparkTable`s, numbered one after another and checked as the local
    engine checks them (`validate_tables`), by aggregates."""
    tables, start = [], 0
    for k, source in enumerate(sources):
        frame, name = _read(spark, source, sep, encoding)
        if k == 1 and rename_right:
            for old, new in rename_right.items():
                if old in frame.columns:
                    frame = frame.withColumnRenamed(old, new)
        numbered, count = _numbered(frame, start)
        tables.append(SparkTable(numbered, name, count, list(frame.columns), _checksum(source),
                                 start))
        start += count
    validate(tables, rules, id_column)
    return tables


def _nested(frame, column: str) -> str | None:
    from pyspark.sql import types as T

    kind = frame.schema[column].dataType
    if isinstance(kind, T.ArrayType):
        return "list"
    if isinstance(kind, T.StructType | T.MapType):
        return "struct"
    return None


def validate(tables: list[SparkTable], rules, id_column: str | None) -> None:
    """`linkage.pipeline.validate_tables` by Spark aggregates: the same errors, the same
    messages (one pass over each table for the blank columns and the missing ids, one
    groupBy for repeated ids)."""
    from pyspark.sql import functions as F

    from linkage._schema import did_you_mean

    needed = rules.columns()
    for table in tables:
        frame, columns = table.frame, table.columns
        if table.records == 0:
            raise InputError(f"{table.name}: the table has no records. Nothing to deduplicate "
                             "or link.")
        for column, where in needed.items():
            if column not in columns:
                hint = did_you_mean(column, columns)
                raise InputError(
                    f"{table.name}: column `{column}` (named in {rules.source}: {where}) is not "
                    f"in the table. Its columns are: {', '.join(columns)}.{hint} Fix the rules "
                    "or the input.")
            nested = _nested(frame, column)
            if nested is not None:
                raise InputError(
                    f"{table.name}: column `{column}` (named in {rules.source}: {where}) holds "
                    f"{nested} values, not one value per record; linkage compares text, "
                    "numbers and dates. Flatten it first (a column per field, or the list "
                    "joined into text), or remove it from the rules.")
        filled = [F.count(F.when(F.trim(F.col(f"`{c}`").cast("string")) != "", 1)).alias(f"f{i}")
                  for i, c in enumerate(needed)]
        checks = list(filled)
        by_id = (id_column is not None and id_column in columns
                 and _nested(frame, id_column) is None)
        if id_column is not None and id_column in columns:
            checks.append(F.count(F.when(F.col(f"`{id_column}`").isNull(), 1)).alias("nulls"))
        if by_id:
            # One job for every check: the counts per id, summed; the ids seen more than once.
            ids = F.col(f"`{id_column}`")
            per_id = frame.groupBy(ids.cast("string").alias("id")).agg(
                F.count(F.lit(1)).alias("_n"), *checks)
            counted = per_id.agg(*[F.sum(f"f{i}").alias(f"f{i}") for i in range(len(filled))],
                                 F.sum("nulls").alias("nulls"),
                                 F.count(F.when(F.col("_n") > 1, 1)).alias("repeated")).first()
        else:
            counted = frame.agg(*checks).first() if checks else None
        for i, (column, where) in enumerate(needed.items()):
            if counted[f"f{i}"] == 0:
                raise InputError(
                    f"{table.name}: column `{column}` (named in {rules.source}: {where}) is "
                    "empty in every record, so it cannot block or compare anything. Fill it, "
                    "or remove it from the rules.")
        if id_column is None and ROW_ID in columns:
            raise InputError(
                f"{table.name}: has a column `{ROW_ID}`, where a run without an id column "
                f"numbers the records. Pass `--id-column {ROW_ID}` (or set `id_column: "
                f"{ROW_ID}` in {rules.source}) if it holds the ids, or rename the column.")
        if id_column is None:
            continue
        if id_column not in columns:
            raise InputError(
                f"{table.name}: id column `{id_column}` is not in the table. Its columns "
                f"are: {', '.join(columns)}. Fix `id_column` in {rules.source} or "
                "`--id-column`, or leave it out to use row numbers.")
        if _nested(frame, id_column) is not None:
            raise InputError(
                f"{table.name}: column `{id_column}` (the id column) holds "
                f"{_nested(frame, id_column)} values, not one value per record; linkage "
                "compares text, numbers and dates. Flatten it first (a column per field, or "
                "the list joined into text), or remove it from the rules.")
        ids = F.col(f"`{id_column}`")
        if counted["nulls"]:
            first = frame.where(ids.isNull()).orderBy(ROW).select(ROW).limit(3)
            rows = [int(r[ROW]) - table.first_row for r in first.collect()]
            raise InputError(
                f"{table.name}: id column `{id_column}` is missing in {counted['nulls']} "
                f"record(s) (rows {rows}). Every record needs an id: fill them, or leave "
                "`id_column` out to use row numbers.")
        repeated = (frame.groupBy(ids.cast("string").alias("id"))
                    .agg(F.count(F.lit(1)).alias("n"), F.min(ROW).alias("first"),
                         F.first(ids).alias("value"))
                    .where(F.col("n") > 1))
        found = counted["repeated"]
        if found:
            shown = repeated.orderBy("first").limit(3).collect()
            examples = ", ".join(repr(r["value"]) for r in shown)
            raise InputError(
                f"{table.name}: id column `{id_column}` has {found} repeated value(s) (e.g. "
                f"{examples}). Ids must be unique as they print (1 and '1' are one id): fix "
                "the input, or leave `id_column` out to use row numbers.")
    if id_column is not None and len(tables) > 1:
        kinds = [t.frame.schema[id_column].dataType.simpleString() for t in tables]
        if len(set(kinds)) > 1:
            found = " and ".join(f"{t.name}: {k}" for t, k in zip(tables, kinds, strict=True))
            raise InputError(
                f"{tables[1].name}: id column `{id_column}` must hold values of one type in "
                f"every input; found {found}. Write the ids with one type (as text, say), or "
                "leave `id_column` out to use row numbers.")


def with_row_id(table: SparkTable, id_name: str):
    """The table's frame with `row_id` (its record number in the table) first, where the run
    has no id column, as `prepare_tables` adds it."""
    from pyspark.sql import functions as F

    if id_name != ROW_ID:
        return table.frame
    return table.frame.select((F.col(ROW) - F.lit(table.first_row)).alias(ROW_ID), "*")
