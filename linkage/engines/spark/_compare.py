"""Compare and score on Spark: the local comparators and scorers inside `mapInPandas`.

Each comparison reads only the two values of a pair and each scorer only a pair's levels
(and term frequencies), so a batch of pairs gets exactly the levels, similarities and weights
the local engine computes for them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.engines.spark._frames import text
from linkage.scoring import ComparisonMatrix


def with_values(pairs, work, comparisons: list, names: dict[str, str]):
    """The pairs (l, r, ...) with both records' compared values: `L<c>` and `R<c>`."""
    from pyspark.sql import functions as F

    columns = list(dict.fromkeys(names[c] for comparison in comparisons
                                 for c in comparison.columns))
    left = work.select(F.col("row").alias("l"), *[F.col(c).alias(f"L{c}") for c in columns])
    right = work.select(F.col("row").alias("r"), *[F.col(c).alias(f"R{c}") for c in columns])
    return pairs.join(left, "l").join(right, "r")


def with_shares(pairs, work, comparisons: list, names: dict[str, str], tf_columns: list[str]):
    """Add `share<k>`: the share of records holding the left record's value of comparison k
    (its term frequency, as `value_counts(normalize=True)` gives it), for the TF columns."""
    from pyspark.sql import functions as F

    for k, comparison in enumerate(comparisons):
        if comparison.output_name not in tf_columns:
            continue
        column = names[comparison.column]
        present = work.where(F.col(column).isNotNull())
        total = present.count()
        shares = present.groupBy(column).count().select(
            F.col(column).alias(f"_v{k}"),
            (F.col("count").cast("double") / F.lit(float(total))).alias(f"share{k}"))
        pairs = pairs.join(shares, F.col(f"L{column}") == F.col(f"_v{k}"), "left") \
            .drop(f"_v{k}")
    return pairs


def compared_schema(comparisons: list, tf_columns: list[str]) -> str:
    fields = ["l long", "r long", "mask long"]
    for k, comparison in enumerate(comparisons):
        fields += [f"lev{k} byte", f"sim{k} float"]
        if comparison.output_name in tf_columns:
            fields.append(f"tf{k} double")
    return ", ".join(fields)


def compare_batches(comparisons: list, names: dict[str, str], tf_columns: list[str]):
    """mapInPandas: each comparison's level and similarity (`Comparison.compare`), and the
    term frequency where the pair agrees exactly (NaN elsewhere), as `compare_pairs` gives."""

    def run(batches):
        for batch in batches:
            out = pd.DataFrame({"l": batch["l"].to_numpy(), "r": batch["r"].to_numpy(),
                                "mask": batch["mask"].to_numpy()})
            for k, comparison in enumerate(comparisons):
                column = names[comparison.column]
                levels, sims = comparison.compare(text(batch[f"L{column}"]),
                                                  text(batch[f"R{column}"]))
                if getattr(comparison, "swapped_with", None):
                    other = names[comparison.swapped_with]
                    rows = np.flatnonzero(levels == 0)
                    swapped = comparison.swaps(
                        text(batch[f"L{column}"])[rows], text(batch[f"R{other}"])[rows],
                        text(batch[f"L{other}"])[rows], text(batch[f"R{column}"])[rows])
                    levels[rows[swapped]] = comparison.level_labels.index("swapped")
                out[f"lev{k}"] = levels
                out[f"sim{k}"] = sims
                if comparison.output_name in tf_columns:
                    exact = levels == len(comparison.level_labels) - 1
                    shares = batch[f"share{k}"].to_numpy(dtype=np.float64, na_value=np.nan)
                    out[f"tf{k}"] = np.where(exact, shares, np.nan)
            yield out

    return run


def matrix_of(frame: pd.DataFrame, comparisons: list, tf_columns: list[str]) -> ComparisonMatrix:
    """The local `ComparisonMatrix` of compared pairs (a pandas frame of lev/sim/tf columns)."""
    k = len(comparisons)
    levels = np.empty((len(frame), k), dtype=np.int8)
    sims = np.empty((len(frame), k), dtype=np.float32)
    tf = {}
    for c, comparison in enumerate(comparisons):
        levels[:, c] = frame[f"lev{c}"].to_numpy(dtype=np.int8)
        sims[:, c] = frame[f"sim{c}"].to_numpy(dtype=np.float32, na_value=np.nan)
        if comparison.output_name in tf_columns:
            tf[comparison.output_name] = frame[f"tf{c}"].to_numpy(dtype=np.float64,
                                                                   na_value=np.nan)
    return ComparisonMatrix(list(comparisons), levels, sims, tf)


def score_batches(scorer, comparisons: list, tf_columns: list[str]):
    """mapInPandas: each pair's match weight and probability from the fitted scorer."""

    def run(batches):
        for batch in batches:
            matrix = matrix_of(batch, comparisons, tf_columns)
            out = batch.copy()
            out["match_weight"] = np.asarray(scorer.match_weight(matrix), dtype=np.float64)
            out["match_probability"] = np.asarray(scorer.match_probability(matrix),
                                                  dtype=np.float64)
            yield out

    return run


def compare(pairs, work, comparisons: list, names: dict[str, str], tf_columns: list[str]):
    """Compared pairs: l, r, mask, lev<k>, sim<k> (and tf<k>) per comparison."""
    joined = with_values(pairs, work, comparisons, names)
    if tf_columns:
        joined = with_shares(joined, work, comparisons, names, tf_columns)
    return joined.mapInPandas(compare_batches(comparisons, names, tf_columns),
                              compared_schema(comparisons, tf_columns))


def level_patterns(compared, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct level patterns of compared pairs and how many pairs have each."""
    from pyspark.sql import functions as F

    levels = [f"lev{c}" for c in range(k)]
    rows = compared.groupBy(*levels).agg(F.count(F.lit(1)).alias("n")).collect()
    patterns = np.array([[row[name] for name in levels] for row in rows],
                        dtype=np.int64).reshape(-1, k)
    counts = np.array([row["n"] for row in rows], dtype=np.float64)
    return patterns, counts


def exact_tf_columns(comparisons: list, tf_columns: list[str]):
    """Per TF comparison (the comparison, its `tf` column, and whether a pair
    agrees exactly with a known term frequency), for the sums and means taken over them."""
    from pyspark.sql import functions as F

    for c, comparison in enumerate(comparisons):
        if comparison.output_name not in tf_columns:
            continue
        column = F.col(f"tf{c}")
        exact = (F.col(f"lev{c}") == len(comparison.level_labels) - 1) & column.isNotNull() \
            & ~F.isnan(column)
        yield comparison, column, exact


def exact_frequencies(compared, comparisons: list, tf_columns: list[str]) -> dict:
    """Per TF comparison: the term frequencies of the pairs that agree exactly, in pair order
    (what `FellegiSunter.fit_patterns` averages into the typical agreed value's frequency;
    in the local engine's order, so the mean adds up to the same bits)."""

    out = {}
    for comparison, column, exact in exact_tf_columns(comparisons, tf_columns):
        frame = compared.where(exact).select("l", "r", column.alias("tf")).toPandas()
        frame = frame.sort_values(["l", "r"], kind="stable")
        out[comparison.output_name] = frame["tf"].to_numpy(dtype=np.float64)
    return out
