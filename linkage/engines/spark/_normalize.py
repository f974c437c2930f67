"""Read and normalize on Spark: the records as a DataFrame, normalized by the local code.

Each normalizer works one distinct value at a time, so running it over a partition of the
records gives each record exactly what it gets over the whole table; `mapInPandas` calls the
very same `Normalize.apply` the local engine calls.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.engines.spark._frames import text
from linkage.engines.spark.session import task_errors
from linkage.io import as_text
from linkage.pipeline import identity_columns
from linkage.settings import Rules


def work_columns(rules: Rules) -> tuple[dict[str, str], list[str]]:
    """The Spark column name of every value blocking and comparing read (`c0`, `c1` ...:
    rules may name columns with spaces, dots or Hangul), and the input columns among them."""
    read = set(rules.columns())
    needed: list[str] = []
    for step in rules.normalize:
        needed += [*step.inputs, step.target]
    for blocker in rules.blocking:
        needed += list(blocker.columns)
    needed += [c for comparison in rules.comparisons for c in comparison.columns]
    needed += identity_columns(rules)  # the guards' columns: copies must agree on them too
    # every column the local engine holds: an oversized block of a one-key blocker is sorted
    # by the data's other columns, in the local order (`local_order`)
    needed += local_order(rules)
    names = list(dict.fromkeys(needed))
    return {name: f"c{k}" for k, name in enumerate(names)}, [n for n in names if n in read]


def local_order(rules: Rules) -> list[str]:
    """The columns of the local engine's `work`, in its order (`normalize_columns`)."""
    order = list(rules.columns())
    for step in rules.normalize:
        if step.target not in order:
            order.append(step.target)
    return order


def records_frame(spark, combined: pd.DataFrame, source: np.ndarray, raw: list[str],
                  names: dict[str, str]):
    """The input values the rules read, as text (what the local engine reads), by row."""
    frame = pd.DataFrame({"row": np.arange(len(combined), dtype=np.int64),
                          "source": np.asarray(source, dtype=np.int8)})
    for column in raw:
        frame[names[column]] = pd.Series(as_text(combined[column]), dtype=object)
    schema = ", ".join(["row long", "source byte", *(f"{names[c]} string" for c in raw)])
    return spark.createDataFrame(frame, schema=schema)


def _normalize_batches(steps: list, names: dict[str, str], raw: list[str]):
    """The mapInPandas function: every step in order, with per-record change flags."""
    outputs = list(names)

    def run(batches):
        for batch in batches:
            work = {c: text(batch[names[c]]) for c in raw}
            flags = {}
            for j, step in enumerate(steps):
                before = step.joined(work)
                series = pd.Series(before, name=step.column, dtype=object)
                after = step.apply(series).to_numpy(dtype=object)
                work[step.target] = after
                flags[f"_changed{j}"] = (pd.Series(before).fillna("\0").to_numpy()
                                         != pd.Series(after).fillna("\0").to_numpy())
                flags[f"_missing{j}"] = np.asarray(pd.isna(after), dtype=bool)
                # The value a step emptied, for `lost_values` (None where it kept one).
                lost = pd.notna(before) & pd.isna(after)
                lost &= pd.Series(before).fillna("").str.strip().ne("").to_numpy()
                flags[f"_lost{j}"] = pd.Series(np.where(lost, before, None), dtype=object)
            out = pd.DataFrame({"row": batch["row"].to_numpy(), "source": batch["source"]})
            for c in outputs:
                out[names[c]] = pd.Series(work[c], dtype=object)
            for name, values in flags.items():
                out[name] = values
            yield out

    return run


def _normalize_locally(rules: Rules, combined: pd.DataFrame, ids: pd.Series) -> None:
    """The local engine's normalize loop: run on a failure in Spark, so the error raised is
    the one the local engine raises (its counts and examples are over the whole table)."""
    work = {c: as_text(combined[c]) for c in rules.columns()}
    for step in rules.normalize:
        series = pd.Series(step.joined(work), index=ids.to_numpy(), name=step.column,
                           dtype=object)
        work[step.target] = step.apply(series).to_numpy(dtype=object)


def _lost_examples(flagged, column: str) -> list[str]:
    """The first distinct emptied values in sorted order, as `lost_values` picks them (Spark
    orders strings by their UTF-8 bytes, which is code point order, as Python does)."""
    from linkage.normalize import LOST_EXAMPLES, examples

    rows = (flagged.where(flagged[column].isNotNull()).select(column).distinct()
            .orderBy(column).limit(LOST_EXAMPLES).collect())
    return examples(row[0] for row in rows)


def normalize(records, rules: Rules, names: dict[str, str], raw: list[str],
              combined: pd.DataFrame, ids: pd.Series):
    """The normalized values by row (cached), and the per-step stats of the local engine."""
    from pyspark.sql import functions as F

    steps = list(rules.normalize)
    schema = ", ".join(["row long", "source byte", *(f"{names[c]} string" for c in names),
                        *(f"_changed{j} boolean, _missing{j} boolean, _lost{j} string"
                          for j in range(len(steps)))])
    flagged = records.mapInPandas(_normalize_batches(steps, names, raw), schema).cache()
    sums = [F.sum(F.col(f"_{kind}{j}").cast("long")).alias(f"_{kind}{j}")
            for j in range(len(steps)) for kind in ("changed", "missing")]
    sums += [F.count(F.col(f"_lost{j}")).alias(f"_lost{j}") for j in range(len(steps))]
    try:
        with task_errors():
            totals = flagged.agg(F.count(F.lit(1)).alias("_n"), *sums).collect()[0]
    except Exception:
        if combined is not None:  # the driver route holds the table
            _normalize_locally(rules, combined, ids)  # raises the local engine's error
        raise
    stats = {}
    for j, step in enumerate(steps):
        stats[step.target] = {
            "normalizer": step.type,
            "from": step.column,
            "changed": int(totals[f"_changed{j}"] or 0),
            "missing": int(totals[f"_missing{j}"] or 0),
            "emptied": int(totals[f"_lost{j}"] or 0),
            "emptied_examples": _lost_examples(flagged, f"_lost{j}")
            if totals[f"_lost{j}"] else [],
        }
    work = flagged.select("row", "source", *names.values())
    return work, stats
