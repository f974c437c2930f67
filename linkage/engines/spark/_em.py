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
) -> FellegiSunter:
    """`scorer.fit` on candidate pairs given as distinct level `patterns` with `counts`, in
    any order. `exact_frequencies`: per TF-adjusted comparison, the term frequencies of the
    pairs that agree exactly, in pair order (left row, then right row)."""
    patterns, counts = sorted_patterns(patterns, counts, len(comparisons))
    return scorer.fit_patterns(comparisons, patterns, counts, random=random,
                               exact_frequencies=exact_frequencies)
