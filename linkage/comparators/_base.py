"""Comparisons turn a candidate pair into a level, keeping the raw similarity beside it.

Levels are small integers: -1 is null (either side missing: neither agreement nor
disagreement), 0 is "else", and higher levels are stronger agreement, the top one "exact".
`level_labels[k]` names level k. Work is done once per distinct value pair, vectorised over
whole columns; there is no Python loop per pair.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd

from linkage._schema import Configurable, check
from linkage.normalize import EncodedColumn

NULL_LEVEL = -1


def is_missing(values: np.ndarray) -> np.ndarray:
    """Boolean mask of missing entries in an object array (None, NaN, pd.NA, empty string)."""
    mask = np.asarray(pd.isna(values), dtype=bool)
    if values.dtype == object:
        # Compare only the present values: pd.NA == "" is NA, not False.
        present = ~mask
        mask[present] = values[present] == ""
    return mask


class Comparison(Configurable):
    """Base of every comparison; subclasses implement `_score` over distinct value pairs."""

    family: ClassVar[str] = "comparison"
    # Whether two equal values always reach the top level with similarity 1 (then
    # `compare_codes` skips them); comparisons whose levels say otherwise leave it False.
    equal_is_exact: ClassVar[bool] = False
    # Whether `compare_codes` scores each distinct pair of values once (worth it where a pair
    # costs a string distance); False where scoring reads per-value arrays anyway.
    distinct_pairs: ClassVar[bool] = True
    # Whether `compare` reads nothing but the two values of each pair, so that any partition
    # of the pairs gets what the whole table would: an engine that compares partitions apart
    # (Spark) runs only these. Left False where scoring reads the whole column (weights by
    # frequency) or a model in batches.
    per_pair: ClassVar[bool] = False

    def __init__(self, column: str, *, name: str | None = None):
        check(isinstance(column, str) and column != "", self, "column", "must be a column name",
              column)
        self.column = column
        self.name = name

    @property
    def columns(self) -> list[str]:
        """Every column this comparison reads (its own, and any it reads beside it)."""
        return [self.column]

    @property
    def output_name(self) -> str:
        """The name used for this comparison's columns in `pairs` and in scorer weights."""
        return self.name or self.column

    @property
    def level_labels(self) -> list[str]:
        raise NotImplementedError

    def label_of(self, level: int) -> str:
        return "null" if level == NULL_LEVEL else self.level_labels[level]

    def compare(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Levels (int8) and similarities (float32, NaN where null) for aligned value arrays."""
        left = np.asarray(left, dtype=object)
        right = np.asarray(right, dtype=object)
        n = len(left)
        levels = np.full(n, NULL_LEVEL, dtype=np.int8)
        sims = np.full(n, np.nan, dtype=np.float32)
        present = ~(is_missing(left) | is_missing(right))
        if not present.any():
            return levels, sims
        # One code space for both sides, then one computation per distinct (left, right) pair.
        lv, rv = left[present], right[present]
        codes, uniques = pd.factorize(np.concatenate([lv, rv]))
        k = len(uniques)
        pair_codes = codes[: len(lv)].astype(np.int64) * k + codes[len(lv) :]
        distinct, inverse = np.unique(pair_codes, return_inverse=True)
        uniq = np.asarray(uniques, dtype=object)
        lev_u, sim_u = self._score(uniq[distinct // k], uniq[distinct % k])
        levels[present] = lev_u[inverse]
        sims[present] = sim_u[inverse]
        return levels, sims

    def compare_codes(
        self, column: EncodedColumn, left: np.ndarray, right: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """`compare` of the records `left[i]` and `right[i]` of an encoded column: the same
        levels and similarities, computed once per distinct pair of values."""
        cl, cr = column.codes[left], column.codes[right]
        n = len(cl)
        levels = np.full(n, NULL_LEVEL, dtype=np.int8)
        sims = np.full(n, np.nan, dtype=np.float32)
        present = column.present(cl) & column.present(cr)
        if self.equal_is_exact:
            # The same value on both sides: the top level and similarity 1, nothing to compute.
            same = present & (cl == cr)
            if same.any():
                self._check_values(column.pick(np.unique(cl[same])))
            levels[same] = len(self.level_labels) - 1
            sims[same] = 1.0
            present &= ~same
        if not present.any():
            return levels, sims
        k = max(column.distinct, 1)
        if self.distinct_pairs:
            pair_codes = cl[present].astype(np.int64) * k + cr[present]
            inverse, distinct = pd.factorize(pair_codes)
            a, b = distinct // k, distinct % k
        else:  # scored pair by pair from values read once each
            a, b = cl[present], cr[present]
        # Only the values these pairs hold are looked at (as Python str), numbered 0.. in
        # code order: a lookup table, not a sort.
        held = np.zeros(k, dtype=bool)
        held[a] = True
        held[b] = True
        position = np.cumsum(held) - 1
        lev_u, sim_u = self._score_codes(column.pick(np.flatnonzero(held)), position[a],
                                         position[b])
        levels[present] = lev_u[inverse] if self.distinct_pairs else lev_u
        sims[present] = sim_u[inverse] if self.distinct_pairs else sim_u
        return levels, sims

    def _check_values(self, values: np.ndarray) -> None:
        """Raise for values this comparison cannot read (`equal_is_exact` skips scoring
        them); nothing by default."""

    def _score_codes(
        self, uniques: np.ndarray, a: np.ndarray, b: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """`_score` of the distinct value pairs (uniques[a[i]], uniques[b[i]]); subclasses
        that can work per distinct value (parse each date once) override it."""
        return self._score(uniques[a], uniques[b])

    def _score(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError


def levels_from_thresholds(
    sims: np.ndarray, exact: np.ndarray, thresholds: list[float]
) -> np.ndarray:
    """Level 0 below every threshold, k for the k-th lowest threshold met, top for exact."""
    levels = np.zeros(len(sims), dtype=np.int8)
    for k, t in enumerate(sorted(thresholds)):
        levels[sims >= t] = k + 1
    levels[exact] = len(thresholds) + 1
    return levels


def check_thresholds(owner: object, thresholds: list[float]) -> list[float]:
    thresholds = list(thresholds)
    for t in thresholds:
        check(isinstance(t, int | float) and 0.0 <= t <= 1.0, owner, "thresholds",
              "must hold numbers in [0, 1]", thresholds)
    check(len(set(thresholds)) == len(thresholds), owner, "thresholds",
          "must not repeat a value", thresholds)
    return sorted(thresholds, reverse=True)


class SimilarityComparison(Comparison):
    """A similarity in [0, 1] cut into levels: else, one per threshold (lowest first), exact
    (equal values). Subclasses give `_similarity` over arrays of distinct value pairs.

    `swapped_with` names a second column whose values may have been entered in this one's
    place (a given name in the surname field and the surname in the given-name field, a
    transposition common in forms). A pair that disagrees here ("else") but where this column
    of each record agrees with the other column of the other record (both ways, each at the
    lowest threshold or above) gets the level `swapped`, just below exact. The similarity
    stays the one of this column.
    """

    equal_is_exact = True

    def __init__(
        self, column: str, *, thresholds: list[float] = (0.92, 0.8), name: str | None = None,
        swapped_with: str | None = None,
    ):
        super().__init__(column, name=name)
        self.thresholds = check_thresholds(self, thresholds)
        check(swapped_with is None or (isinstance(swapped_with, str) and swapped_with != ""
                                       and swapped_with != column), self, "swapped_with",
              "must be the name of another column (or null)", swapped_with)
        self.swapped_with = swapped_with

    @property
    def columns(self) -> list[str]:
        return [self.column] + ([self.swapped_with] if self.swapped_with else [])

    @property
    def level_labels(self) -> list[str]:
        swapped = ["swapped"] if self.swapped_with else []
        return ["else", *(f">={t:g}" for t in sorted(self.thresholds)), *swapped, "exact"]

    def swaps(self, own_left: np.ndarray, other_right: np.ndarray, other_left: np.ndarray,
              own_right: np.ndarray) -> np.ndarray:
        """Which pairs read as swapped: this column of the left record agrees with the other
        column of the right one, and the other way round (values as object arrays)."""
        out = np.zeros(len(own_left), dtype=bool)
        floor = min(self.thresholds) if self.thresholds else 1.0
        first = self.compare(own_left, other_right)[1] >= floor  # NaN (missing) is False
        rows = np.flatnonzero(first)
        if len(rows):
            out[rows] = self.compare(other_left[rows], own_right[rows])[1] >= floor
        return out

    def swaps_codes(self, own: EncodedColumn, other: EncodedColumn, left: np.ndarray,
                    right: np.ndarray) -> np.ndarray:
        """`swaps` of the records `left[i]`, `right[i]` of two encoded columns, each distinct
        pair of values scored once (one code space for both columns' values)."""
        out = np.zeros(len(left), dtype=bool)
        if not len(left):
            return out
        values = np.concatenate([own.all_uniques(), other.all_uniques()])
        joint, uniques = pd.factorize(values)
        uniques = np.asarray(uniques, dtype=object)
        to_own, to_other = joint[: own.distinct], joint[own.distinct:]
        floor = min(self.thresholds) if self.thresholds else 1.0

        def agree(a_col, a_map, a_rows, b_col, b_map, b_rows) -> np.ndarray:
            ca, cb = a_col.codes[a_rows], b_col.codes[b_rows]
            ok = a_col.present(ca) & b_col.present(cb)
            result = np.zeros(len(a_rows), dtype=bool)
            if not ok.any():
                return result
            ja, jb = a_map[ca[ok]].astype(np.int64), b_map[cb[ok]].astype(np.int64)
            inverse, distinct = pd.factorize(ja * len(uniques) + jb)
            a, b = distinct // len(uniques), distinct % len(uniques)
            held = np.zeros(len(uniques), dtype=bool)
            held[a] = True
            held[b] = True
            position = np.cumsum(held) - 1
            sims = np.asarray(self._similarity_codes(uniques[held], position[a], position[b]),
                              dtype=np.float32)
            sims[a == b] = 1.0
            result[ok] = (sims >= floor)[inverse]
            return result

        first = agree(own, to_own, left, other, to_other, right)
        rows = np.flatnonzero(first)
        if len(rows):
            out[rows] = agree(other, to_other, left[rows], own, to_own, right[rows])
        return out

    def _similarity(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _similarity_codes(self, uniques: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """`_similarity` of the distinct value pairs (uniques[a[i]], uniques[b[i]])."""
        return self._similarity(uniques[a], uniques[b])

    def _score(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        exact = np.asarray(left == right, dtype=bool)
        sims = np.clip(np.asarray(self._similarity(left, right), dtype=np.float32), 0.0, 1.0)
        sims[exact] = 1.0
        return self._levels(sims, exact), sims

    def _levels(self, sims: np.ndarray, exact: np.ndarray) -> np.ndarray:
        levels = levels_from_thresholds(sims, np.zeros(len(sims), dtype=bool), self.thresholds)
        levels[exact] = len(self.level_labels) - 1
        return levels

    def _score_codes(
        self, uniques: np.ndarray, a: np.ndarray, b: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        exact = a == b  # distinct values have distinct codes
        sims = np.asarray(self._similarity_codes(uniques, a, b), dtype=np.float32)
        sims = np.clip(sims, 0.0, 1.0)
        sims[exact] = 1.0
        return self._levels(sims, exact), sims


def workers(pairs: int) -> int:
    """RapidFuzz threads for `pairs` comparisons: all cores for big batches; one for a handful,
    where starting threads costs more (about 2 ms a call) than the comparisons themselves."""
    return -1 if pairs >= 10_000 else 1
