"""Fellegi-Sunter fitted from what Spark aggregates: level-pattern counts.

`FellegiSunter.fit` starts by counting the distinct level patterns of the candidate pairs;
on Spark that count is a `groupBy` over the level columns, and only the distinct patterns with
their counts reach the driver, where `FellegiSunter.fit_patterns` runs the scorer's own EM
over them, weighted by the counts. Spark returns the groups in no particular order, so they
are put in the order `fit` sees them (sorted, as `np.unique` sorts rows): every weighted sum
then adds in the same order and the model is the local engine's to the last bit.
"""

from __future__ import annotations

import numpy as np

from linkage.scoring import ComparisonMatrix, FellegiSunter


def _as_matrix(comparisons: list, levels: np.ndarray) -> ComparisonMatrix:
    return ComparisonMatrix(list(comparisons), levels,
                            np.zeros(levels.shape, dtype=np.float32))


def sorted_patterns(patterns: np.ndarray, counts: np.ndarray, k: int):
    """Distinct patterns in sorted order with their counts (repeats merged)."""
    patterns = np.asarray(patterns, dtype=np.int64).reshape(-1, k)
    unique, inverse = np.unique(patterns, axis=0, return_inverse=True)
    merged = np.bincount(inverse.reshape(-1), weights=np.asarray(counts, dtype=np.float64),
                         minlength=len(unique))
    return unique, merged.astype(np.int64)


def random_matrix(comparisons: list, patterns: np.ndarray,
                  counts: np.ndarray) -> ComparisonMatrix:
    """The levels of the random pairs, rebuilt from their pattern counts (u from random pairs
    counts each comparison's levels; the order of the pairs does not matter)."""
    repeated = np.repeat(np.asarray(patterns, dtype=np.int64).reshape(-1, len(comparisons)),
                         np.asarray(counts, dtype=np.int64), axis=0).astype(np.int8)
    return _as_matrix(comparisons, repeated)


def fit_counts(
    scorer: FellegiSunter,
    comparisons: list,
    patterns: np.ndarray,
    counts: np.ndarray,
    *,
    random: ComparisonMatrix | None = None,
    exact_frequencies: dict[str, np.ndarray] | None = None,
    chance: dict[str, tuple[float, float]] | None = None,
) -> FellegiSunter:
    """`scorer.fit` on candidate pairs given as distinct level `patterns` with `counts`, in
    any order. `exact_frequencies`: per TF-adjusted comparison, the term frequencies of the
    pairs that agree exactly, in pair order (left row, then right row). `chance` (a link):
    `chance_agreement`'s counts."""
    patterns, counts = sorted_patterns(patterns, counts, len(comparisons))
    extra = {} if chance is None else {"chance": chance}
    return scorer.fit_patterns(comparisons, patterns, counts, random=random,
                               exact_frequencies=exact_frequencies, **extra)


def chance_agreement(work, comparisons: list, names: dict[str, str]
                     ) -> dict[str, tuple[float, float]]:
    """`linkage.pipeline.chance_agreement` on Spark: the same (C, E) per comparison whose top
    level is "exact", from per-value counts of each side that Spark sums into a few numbers
    (no value reaches the driver). The sums are whole numbers, so C and E are the local
    engine's to the last bit."""
    from pyspark.sql import functions as F

    from linkage.pipeline import chance_from_sums

    out: dict[str, tuple[float, float]] = {}
    for comparison in comparisons:
        labels = list(comparison.level_labels)
        if len(labels) < 2 or labels[-1] != "exact" or comparison.column not in names:
            continue
        column = F.col(names[comparison.column])
        values = (work.select(F.col("source"),
                              F.when(F.trim(column) != "", column).alias("v"))
                  .where(F.col("v").isNotNull()))
        side = {k: F.sum(F.when(F.col("source") == k, 1).otherwise(0)).cast("long")
                for k in (0, 1)}
        counts = values.groupBy("v").agg(side[0].alias("l"), side[1].alias("r"))
        row = counts.agg(
            F.sum(F.col("l") * F.col("r")).alias("cross"),
            F.sum("l").alias("n_l"), F.sum("r").alias("n_r"),
            F.sum(F.col("l") * (F.col("l") - 1)).alias("same_l"),
            F.sum(F.col("r") * (F.col("r") - 1)).alias("same_r")).first()
        found = chance_from_sums(*(int(row[k] or 0) for k in ("cross", "n_l", "n_r", "same_l",
                                                               "same_r")))
        if found is not None:
            out[comparison.output_name] = found
    return out
