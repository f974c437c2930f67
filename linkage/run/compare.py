"""The compare and score steps over work columns: each candidate pair's comparison levels,
similarities and term frequencies (`compare_pairs`), and its match weight and probability
(`weights_of`, `weights_in_blocks`). The local engine, `update`, `Result.match`, active learning
and the `Linker` all compare and weigh pairs with this one code."""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.normalize import EncodedColumn
from linkage.scoring import ComparisonMatrix

# Pairs from which the comparisons run in threads: below, a comparison takes milliseconds and
# the progress bar is updated after each one.
PARALLEL_PAIRS = 200_000


def compare_pairs(
    comparisons: list,
    work: dict[str, np.ndarray],
    left: np.ndarray,
    right: np.ndarray,
    bar=None,
    *,
    tf_columns: list[str] = (),
) -> ComparisonMatrix:
    """The comparison matrix of the pairs (left[i], right[i]) of row numbers.

    `work` holds each column as an object array of values, or as an `EncodedColumn` (what the
    local engine keeps), which is compared once per distinct pair of values.
    """
    from linkage.parallel import thread_map

    k = len(comparisons)
    levels = np.empty((len(left), k), dtype=np.int8)
    sims = np.empty((len(left), k), dtype=np.float32)
    tf: dict[str, np.ndarray] = {}

    def one(c: int) -> None:
        # Comparisons run side by side (their codes' gathers and hash tables release the
        # GIL); each writes its own column of `levels` and `sims`, and its own `tf` entry.
        comparison = comparisons[c]
        values = work[comparison.column]
        if isinstance(values, EncodedColumn):
            levels[:, c], sims[:, c] = comparison.compare_codes(values, left, right)
        else:
            levels[:, c], sims[:, c] = comparison.compare(values[left], values[right])
        if getattr(comparison, "swapped_with", None):
            _mark_swaps(comparison, values, work[comparison.swapped_with], left, right,
                        levels[:, c])
        if comparison.output_name in tf_columns:
            exact = levels[:, c] == len(comparison.level_labels) - 1
            if isinstance(values, EncodedColumn):
                tf[comparison.output_name] = encoded_frequencies(values, left, exact)
            else:
                tf[comparison.output_name] = term_frequencies(values, left, exact)

    if len(left) < PARALLEL_PAIRS:
        for c in range(k):
            one(c)
            if bar is not None:
                bar.update(1)
    else:
        thread_map(one, range(k))
        if bar is not None:
            bar.update(k)
    return ComparisonMatrix(list(comparisons), levels, sims,
                            {c.output_name: tf[c.output_name] for c in comparisons
                             if c.output_name in tf})


def _mark_swaps(comparison, own, other, left: np.ndarray, right: np.ndarray,
                levels: np.ndarray) -> None:
    """Move the pairs that disagree ("else") but read as `comparison.swaps` to the level
    `swapped`, in place."""
    rows = np.flatnonzero(levels == 0)
    if not len(rows):
        return
    if isinstance(own, EncodedColumn) and isinstance(other, EncodedColumn):
        swapped = comparison.swaps_codes(own, other, left[rows], right[rows])
    else:
        own = own.values() if isinstance(own, EncodedColumn) else own
        other = other.values() if isinstance(other, EncodedColumn) else other
        swapped = comparison.swaps(own[left[rows]], other[right[rows]], other[left[rows]],
                                   own[right[rows]])
    levels[rows[swapped]] = comparison.level_labels.index("swapped")


def encoded_frequencies(column: EncodedColumn, left: np.ndarray,
                         exact: np.ndarray) -> np.ndarray:
    """`term_frequencies` of an encoded column: one share per code, looked up per pair."""
    out = np.full(len(left), np.nan)
    if exact.any():
        out[exact] = column.shares()[column.codes[left[exact]]]
    return out


def term_frequencies(values: np.ndarray, left: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Per pair: the share of records holding the agreed value; NaN unless exact."""
    series = pd.Series(values, dtype=object)
    shares = series.value_counts(normalize=True, dropna=True)
    out = np.full(len(left), np.nan)
    if exact.any():
        agreed = pd.Series(values[left[exact]], dtype=object)
        out[exact] = agreed.map(shares).to_numpy(dtype=float)
    return out


SCORE_ROWS = 1 << 16  # pairs weighed per call: fixed, so chunking never changes a weight


def weights_of(scorer, matrix: ComparisonMatrix) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's match weight and probability (computed together where the scorer can)."""
    if hasattr(scorer, "weight_and_probability"):
        return scorer.weight_and_probability(matrix)
    return scorer.match_weight(matrix), scorer.match_probability(matrix)


def weights_in_blocks(scorer, pairs: int, rows) -> tuple[np.ndarray, np.ndarray]:
    """`weights_of` over `SCORE_ROWS` pairs at a time, `rows(start, stop)` giving each block's
    comparison matrix. A scorer whose arithmetic depends on how many rows it sees at once (a
    BLAS dot product in a logistic regression) then gives the same weights whether the run
    holds its pairs in memory or streams them."""
    from linkage.parallel import thread_map

    weight = np.empty(pairs, dtype=np.float64)
    probability = np.empty(pairs, dtype=np.float64)

    def weigh(start: int) -> None:  # each block into its own rows: blocks run side by side
        stop = min(start + SCORE_ROWS, pairs)
        weight[start:stop], probability[start:stop] = weights_of(scorer, rows(start, stop))

    thread_map(weigh, range(0, pairs, SCORE_ROWS))
    return weight, probability
