"""From and to the libraries record-linkage users come from: recordlinkage and datasketch.

recordlinkage (`pip install "linkage[recordlinkage]"`; it caps pandas below 3) shapes pairs as a
pandas MultiIndex of (left id, right id), the tables' index labels, and features as a DataFrame
on that index with one column per comparison::

    pairs = recordlinkage.Index().block("surname").index(left, right)
    linker = lk.Linker(candidates=pairs).fit(left, right)     # linkage compares and scores them
    features = recordlinkage.Compare(...).compute(pairs, left, right)
    scored = interop.score_features(features)                  # Fellegi-Sunter EM on them
    scored.cluster(); scored.explain(a, b)
    index, levels = interop.to_recordlinkage(linker)           # for a recordlinkage classifier

datasketch `MinHash` signatures band into linkage's LSH (`minhash_pairs`), never mixed with
linkage's own (another hash family; see `minhash_pairs`). Neither library is imported by
`import linkage`: only inside the functions that read their objects.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from linkage.blocking import Blocker, BlockingInput, Proposal
from linkage.comparators import Comparison
from linkage.errors import InputError
from linkage.explain import Explanation

__all__ = ["FeatureScores", "minhash_pairs", "score_features", "to_recordlinkage"]

# Similarities in [0, 1] become these levels: below the first edge `else`, then one level per
# edge, and exactly 1 `exact` (the bands Splink's and recordlinkage's string thresholds use).
SIMILARITY_EDGES = (0.6, 0.8, 0.95)
MAX_DISCRETE = 6  # a feature with at most this many distinct values keeps them as its levels


# ---------------------------------------------------------------- pairs in (recordlinkage.Index)


def _check_multiindex(pairs: Any, what: str) -> pd.MultiIndex:
    if isinstance(pairs, pd.DataFrame):
        pairs = pairs.index
    if not isinstance(pairs, pd.MultiIndex) or pairs.nlevels != 2:
        raise InputError(f"{what}: a pandas MultiIndex of (left id, right id), as "
                         "recordlinkage.Index().index(...) returns it (or a DataFrame on one). "
                         f"Got {type(pairs).__name__}"
                         + (f" of {pairs.nlevels} levels" if isinstance(pairs, pd.MultiIndex)
                            else "") + ".")
    return pairs


def _positions(frame: pd.DataFrame, ids: pd.Index, side: str) -> np.ndarray:
    """Row positions of `ids` among the index labels of `frame` (InputError for unknown ids)."""
    if not frame.index.is_unique:
        raise InputError(f"the {side} table's ids repeat; candidate pairs name records by "
                         "index label (or id_column), so each must be unique.")
    rows = frame.index.get_indexer(ids)
    if (rows < 0).any():
        missing = ids[rows < 0]
        raise InputError(f"candidates: {len(missing):,} pair(s) name {side} record(s) that the "
                         f"{side} table does not hold, e.g. {missing[0]!r}. Build the "
                         "pairs from the same DataFrames you pass to fit.")
    return rows.astype(np.int64)


class GivenPairs(Blocker):
    """Candidate pairs given from outside (a recordlinkage.Index), as row numbers of the run;
    they replace the rules' blocking. Not a rules `type:`: it is made by `Linker(candidates=)`.
    """

    kind: ClassVar[str | None] = None

    def __init__(self, left: np.ndarray, right: np.ndarray, *, source: str = "given pairs"):
        left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
        self.left, self.right = np.minimum(left, right), np.maximum(left, right)
        self.source = source
        self.name = "given_pairs"

    @property
    def columns(self) -> list[str]:
        return []

    def _unique(self) -> tuple[np.ndarray, np.ndarray]:
        n = int(max(self.right.max(initial=0), 0)) + 1
        code = np.unique(self.left[self.left != self.right] * n
                         + self.right[self.left != self.right])
        return code // n, code % n

    def estimate(self, data: BlockingInput, max_block_size: int) -> int:
        return len(self._unique()[0])

    def propose(self, data: BlockingInput, max_block_size: int) -> Proposal:
        left, right = self._unique()
        return Proposal(left, right, [])

    def describe(self) -> str:
        return f"{len(self._unique()[0]):,} candidate pairs given ({self.source})"

    def to_dict(self) -> dict[str, Any]:
        digest = hashlib.sha256(self.left.tobytes() + self.right.tobytes()).hexdigest()[:16]
        return {"type": "given_pairs", "source": self.source, "pairs": len(self.left),
                "digest": digest}


def with_candidates(tables: list, candidates, id_column: str | None):
    """`Linker.fit`'s tables, id column and blocker (`GivenPairs`) when `candidates` (a
    recordlinkage MultiIndex) replace linkage's blocking: the pairs name records by the
    tables' index labels, which become the id column (the rules' id_column gives way), or,
    with `id_column` given, by the values of that column."""
    pairs = _check_multiindex(candidates, "candidates")
    if not all(isinstance(t, pd.DataFrame) for t in tables):
        raise InputError("candidates name records by their DataFrame's index label: pass the "
                         "DataFrames the pairs were built from, not file paths.")
    if id_column is None:  # the index labels, which the pairs name, become the ids
        name = tables[0].index.name or "record_id"
        if any(name in t.columns for t in tables):
            raise InputError(f"candidates: the tables already hold a column {name!r}; name the "
                             "id column (Linker(id_column=...)) or rename the index.")
        keyed = tables
        tables = [t.rename_axis(name).reset_index() for t in tables]
        id_column = name
    else:  # the pairs name values of the id column given
        missing = [k for k, t in enumerate(tables) if id_column not in t.columns]
        if missing:
            raise InputError(f"candidates: id_column {id_column!r} is not a column of the "
                             "table(s); leave id_column out to use the index labels.")
        keyed = [t.set_index(id_column) for t in tables]
    link = len(tables) > 1
    left_rows = _positions(keyed[0], pairs.get_level_values(0), "left" if link else "")
    right_rows = _positions(keyed[-1], pairs.get_level_values(1), "right" if link else "")
    if link:
        right_rows = right_rows + len(tables[0])
    return tables, id_column, GivenPairs(left_rows, right_rows, source="recordlinkage.Index")


# ------------------------------------------------------- features in (recordlinkage.Compare)


class Feature(Comparison):
    """A column of a recordlinkage features DataFrame, as a comparison with levels."""

    kind: ClassVar[str | None] = None

    def __init__(self, column: str, labels: list[str]):
        super().__init__(column)
        self._labels = list(labels)

    @property
    def level_labels(self) -> list[str]:
        return self._labels


def _binned(name: str, values: pd.Series, edges: tuple[float, ...]
            ) -> tuple[np.ndarray, list[str]]:
    """Levels of one feature column: 0/1 as `disagree`/`agree`; a column of a few distinct
    values (at most `MAX_DISCRETE`: recordlinkage's date and numeric comparisons, linkage's own
    exported levels) one level per value, in order; other similarities by `edges` (`else`
    below the first, one level per edge, `exact` at 1); NaN: null."""
    x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    unreadable = values.notna().to_numpy() & np.isnan(x)
    bad = unreadable | (~np.isnan(x) & ((x < 0) | (x > 1)))
    if bad.any():
        raise InputError(f"features: column {name!r} holds values outside [0, 1] (e.g. "
                         f"{values[bad].iloc[0]!r}); recordlinkage's comparisons give 0/1 or "
                         "similarities in [0, 1]. Scale it to [0, 1] or leave the column out.")
    present = ~np.isnan(x)
    levels = np.full(len(x), -1, dtype=np.int8)
    distinct = np.unique(x[present])
    if np.isin(distinct, (0.0, 1.0)).all():
        levels[present] = x[present].astype(np.int8)
        return levels, ["disagree", "agree"]
    if len(distinct) <= MAX_DISCRETE:
        levels[present] = np.searchsorted(distinct, x[present])
        return levels, [f"{v:g}" for v in distinct]
    cuts = np.asarray(edges, dtype=float)
    levels[present] = np.searchsorted(cuts, x[present], side="right")
    levels[present & (x >= 1.0)] = len(cuts) + 1
    return levels, ["else", *(f">={c:g}" for c in cuts), "exact"]


@dataclass
class FeatureScores:
    """recordlinkage features scored by linkage's Fellegi-Sunter model (`score_features`)."""

    features: pd.DataFrame
    levels: pd.DataFrame  # each feature's level, an ordered categorical of its labels
    match_weight: pd.Series
    match_probability: pd.Series
    scorer: Any
    threshold: float
    dedupe: bool = True  # both index levels name records of one table
    _matrix: Any = None

    def predict(self, threshold: float | None = None) -> pd.MultiIndex:
        """The pairs whose match weight reaches `threshold` (default: the model's), as a
        MultiIndex, as a recordlinkage classifier's `predict` returns them."""
        at = self.threshold if threshold is None else float(threshold)
        return self.features.index[self.match_weight.to_numpy() >= at]

    def cluster(self, threshold: float | None = None) -> pd.Series | tuple[pd.Series, pd.Series]:
        """Entities: connected components of the pairs at or above `threshold`, numbered from
        0, by record id (the records of some pair; a record in no pair is not listed). A
        dedupe's pairs give one Series; pairs between two tables (their ids told apart by
        level) give (left, right) Series sharing cluster numbers."""
        from linkage.clustering import connected_components

        index = self.features.index
        matched = index[self.match_weight.to_numpy() >= (self.threshold if threshold is None
                                                           else float(threshold))]
        if self.dedupe:
            ids = pd.Index(index.get_level_values(0)).append(
                pd.Index(index.get_level_values(1))).unique().sort_values()
            labels = connected_components(len(ids), ids.get_indexer(matched.get_level_values(0)),
                                          ids.get_indexer(matched.get_level_values(1)))
            return pd.Series(labels, index=ids, name="cluster")
        left = pd.Index(index.get_level_values(0)).unique().sort_values()
        right = pd.Index(index.get_level_values(1)).unique().sort_values()
        labels = connected_components(
            len(left) + len(right), left.get_indexer(matched.get_level_values(0)),
            right.get_indexer(matched.get_level_values(1)) + len(left))
        return (pd.Series(labels[: len(left)], index=left, name="cluster"),
                pd.Series(labels[len(left):], index=right, name="cluster"))

    def explain(self, left_id, right_id) -> str:
        """Why a pair scored as it did: each feature's value, level and weight (log2 m/u)."""
        try:
            row = self.features.index.get_loc((left_id, right_id))
        except KeyError:
            raise InputError(f"explain: ({left_id!r}, {right_id!r}) is not one of the scored "
                             "pairs.") from None
        if not isinstance(row, int | np.integer):
            row = int(np.flatnonzero(np.atleast_1d(row))[0])
        parts = self.scorer.contributions(self._matrix).iloc[row]
        weight = float(self.match_weight.iloc[row])
        verdict = "a match" if weight >= self.threshold else "not a match"
        lines = [f"pair ({left_id}, {right_id}): match weight {weight:+.2f} against threshold "
                 f"{self.threshold:g}: {verdict} (probability "
                 f"{float(self.match_probability.iloc[row]):.3f})",
                 f"  prior {self.scorer.bias():+.2f}"]
        for name in self.features.columns:
            lines.append(f"  {name:<20} {self.features[name].iloc[row]!s:<10} "
                         f"{self.levels[name].iloc[row]!s:<10} {float(parts[name]):+.2f}")
        # With several kinds of non-match, the weight also holds the pair's pattern scored
        # against them as a whole (`FellegiSunter.non_match_term`), as `linkage explain` shows.
        term = float(self.scorer.non_match_term(self._matrix)[row]) \
            if hasattr(self.scorer, "non_match_term") else 0.0
        if term != 0.0:
            lines.append(f"  {'(kinds of non-match)':<42} {term:+.2f}")
        # ... and at least the floor chance sets for its pattern (`chance_term`).
        lift = float(self.scorer.chance_term(self._matrix)[row]) \
            if hasattr(self.scorer, "chance_term") else 0.0
        if lift != 0.0:
            lines.append(f"  {'(chance bound)':<42} {lift:+.2f}")
        return Explanation("\n".join(lines))


def score_features(features: pd.DataFrame, *, threshold: float = 0.0, dedupe: bool | None = None,
                   edges: tuple[float, ...] = SIMILARITY_EDGES, seed: int = 0) -> FeatureScores:
    """Score a recordlinkage `Compare().compute(...)` features DataFrame with linkage's
    Fellegi-Sunter model, m and u and the prior learnt by EM without labels.

    Each column becomes a comparison with levels: a column of only 0 and 1 has two
    (`disagree`, `agree`); a column of at most 6 distinct values one per value (a date
    comparison's 0, 0.5, 1; levels exported by `to_recordlinkage`); any other similarity in
    [0, 1] is binned by `edges` (default 0.6, 0.8, 0.95: `else` below 0.6, `>=0.6`, `>=0.8`,
    `>=0.95`, and `exact` at 1); NaN (a missing value) is null, no evidence either way.
    `threshold`: the match weight (log2 odds) from which a pair is a match. `dedupe`: whether
    both levels of the index name records of one table (then `cluster` returns one Series);
    by default, when the two levels share any id.
    """
    from linkage.scoring import ComparisonMatrix, FellegiSunter

    if not isinstance(features, pd.DataFrame):
        raise InputError("features: a DataFrame (recordlinkage.Compare().compute(...)). Got "
                         f"{type(features).__name__}.")
    _check_multiindex(features.index, "features' index")
    if features.shape[1] == 0 or len(features) == 0:
        raise InputError("features: no columns or no pairs to score.")
    features = features.rename(columns=str)
    columns, labels = [], {}
    for name in features.columns:
        lv, lab = _binned(name, features[name], tuple(edges))
        columns.append(lv)
        labels[name] = lab
    comparisons = [Feature(name, labels[name]) for name in features.columns]
    levels = np.column_stack(columns).astype(np.int8)
    matrix = ComparisonMatrix(comparisons, levels,
                              np.where(levels >= 0, features.to_numpy(dtype=float), np.nan)
                              .astype(np.float32))
    scorer = FellegiSunter(threshold=float(threshold), seed=seed).fit(matrix)
    weight, probability = scorer.weight_and_probability(matrix)
    level_frame = pd.DataFrame({
        name: pd.Categorical.from_codes(levels[:, k].astype(np.int64) + 1,
                                        categories=["null", *labels[name]], ordered=True)
        for k, name in enumerate(features.columns)}, index=features.index)
    if dedupe is None:
        index = features.index
        dedupe = bool(pd.Index(index.get_level_values(0)).isin(index.get_level_values(1)).any())
    out = FeatureScores(features, level_frame, pd.Series(weight, index=features.index,
                                                        name="match_weight"),
                        pd.Series(probability, index=features.index, name="match_probability"),
                        scorer, float(threshold), dedupe, matrix)
    return out


# ---------------------------------------------------------------- out (recordlinkage's shapes)


def to_recordlinkage(run, *, scale: bool = True) -> tuple[pd.MultiIndex, pd.DataFrame]:
    """linkage's scored pairs as recordlinkage shapes them: a MultiIndex of (left id, right id)
    and a features DataFrame on it, one column per comparison (named as in the rules).

    `run`: a fitted `Linker` or a `Result`. With `scale` (default), each comparison's level
    becomes a similarity in [0, 1] (level / top level; a null, 0), which recordlinkage's
    classifiers take as they take `Compare` features (`ECMClassifier(binarize=0.5)`,
    `LogisticRegressionClassifier`); else the integer level codes (-1 null, 0 else, ...).
    """
    result = getattr(run, "result_", run)  # a Linker holds its run as `result_`
    if result is None:
        raise InputError("to_recordlinkage: this Linker is not fitted yet; call fit first.")
    pairs = result.pairs if isinstance(result.pairs, pd.DataFrame) else result.pairs.to_pandas()
    id_l, id_r = pairs.columns[0], pairs.columns[1]
    index = pd.MultiIndex.from_arrays([pairs[id_l].to_numpy(), pairs[id_r].to_numpy()],
                                      names=[id_l, id_r])
    features = {}
    for comparison in result.rules.comparisons:
        column = f"{comparison.output_name}_level"
        if column not in pairs:
            continue
        codes = pairs[column].to_numpy().astype(np.int64)
        top = max(len(comparison.level_labels) - 1, 1)
        features[comparison.output_name] = (np.where(codes < 0, 0.0, codes / top) if scale
                                            else codes)
    return index, pd.DataFrame(features, index=index)


# ---------------------------------------------------------------- datasketch MinHash


SCHEME_MESSAGE = (
    "linkage's MinHash signatures hash each shingle with a 64-bit mixer and permute it by "
    "(a*x + b) mod 2^32; datasketch's hash it with SHA-1 (32 bits) and permute by "
    "(a*x + b) mod (2^61 - 1) with coefficients from numpy's RandomState(seed). A row of one "
    "never equals a row of the other for the same text, so the two cannot share one LSH "
    "index: band datasketch signatures only with datasketch signatures of the same seed and "
    "num_perm (or recompute all of them with linkage).")


def datasketch_signatures(minhashes) -> tuple[np.ndarray, int]:
    """(signatures as uint32 rows, seed) of datasketch `MinHash`/`LeanMinHash` objects, which
    must share seed and num_perm; anything else is refused with the reason (`InputError`)."""
    items = list(minhashes)
    if not items:
        raise InputError("minhash_pairs: no signatures given.")
    seeds, widths = set(), set()
    for k, m in enumerate(items):
        if not (hasattr(m, "hashvalues") and hasattr(m, "seed")
                and type(m).__module__.startswith("datasketch")):
            raise InputError(f"minhash_pairs: item {k} is a {type(m).__name__}, not a datasketch "
                             f"MinHash or LeanMinHash. {SCHEME_MESSAGE}")
        seeds.add(int(m.seed))
        widths.add(len(m.hashvalues))
    if len(seeds) > 1 or len(widths) > 1:
        raise InputError(f"minhash_pairs: the signatures were made with seeds {sorted(seeds)} "
                         f"and num_perm {sorted(widths)}; rows of different permutations never "
                         "agree but by chance, so one index needs one seed and one num_perm.")
    sig = np.stack([np.asarray(m.hashvalues, dtype=np.uint64) for m in items])
    if (sig > 0xFFFFFFFF).any():  # datasketch keeps 32 bits (its max_hash); others are not its
        raise InputError(f"minhash_pairs: signature values above 2^32 - 1. {SCHEME_MESSAGE}")
    return sig.astype(np.uint32), seeds.pop()


def minhash_pairs(minhashes, *, ids=None, texts=None, threshold: float = 0.8,
                  bands: int | None = None, rows: int | None = None, shingle: str = "auto",
                  k: int | None = None, max_bucket: int | None = None,
                  blocker=None) -> pd.DataFrame:
    """Near-duplicate pairs from datasketch MinHash signatures, banded by linkage's LSH (the
    MinHash blocker's bands and rows for `threshold`, or `bands` x `rows`).

    With `texts` (the texts the signatures were made from, in the same order), candidates are
    verified by exact Jaccard of linkage's shingles of them (`shingle`, `k` as for the
    blocker) and only pairs reaching `threshold` are kept, with a `jaccard` column; without,
    every candidate is returned with `estimated_jaccard`, the share of equal signature rows.
    `ids`: a name per signature (default 0..n-1). `blocker`: a `MinHashBlocker` whose
    threshold, bands, rows and shingling to use instead (its `num_perm` must be the
    signatures'; its `seed` does not apply: the seed is datasketch's). Signatures of
    linkage's own MinHash (`linkage.text.minhash`) are another hash family and are refused
    (see `SCHEME_MESSAGE`).
    """
    from linkage.text.lsh import candidate_pairs, jaccard, resolve_params
    from linkage.text.minhash import estimate_jaccard
    from linkage.text.shingles import shingle as make_shingles

    sig, _ = datasketch_signatures(minhashes)
    if blocker is not None:
        from linkage.blocking import MinHashBlocker

        if not isinstance(blocker, MinHashBlocker):
            raise InputError(f"minhash_pairs: blocker must be a MinHashBlocker. Got "
                             f"{type(blocker).__name__}.")
        if blocker.num_perm != sig.shape[1]:
            raise InputError(f"minhash_pairs: the blocker bands {blocker.num_perm} "
                             f"permutations, the signatures hold {sig.shape[1]} (num_perm); "
                             "make them agree.")
        threshold, (bands, rows) = blocker.threshold, blocker.banding
        shingle, k = blocker.shingle, blocker.k
    ids = np.arange(len(sig)) if ids is None else np.asarray(list(ids))
    if len(ids) != len(sig):
        raise InputError(f"minhash_pairs: {len(ids):,} ids for {len(sig):,} signatures.")
    b, r = resolve_params(float(threshold), sig.shape[1], bands, rows)
    cand = candidate_pairs(sig, b, r, max_bucket=max_bucket)
    left, right = cand.left, cand.right
    if texts is None:
        est = estimate_jaccard(sig[left], sig[right])
        return pd.DataFrame({"id_l": ids[left], "id_r": ids[right], "estimated_jaccard": est})
    texts = np.asarray(list(texts), dtype=object)
    if len(texts) != len(sig):
        raise InputError(f"minhash_pairs: {len(texts):,} texts for {len(sig):,} signatures.")
    j = jaccard(make_shingles(texts, mode=shingle, k=k), left, right)
    ok = j >= float(threshold) - 1e-12
    return pd.DataFrame({"id_l": ids[left[ok]], "id_r": ids[right[ok]], "jaccard": j[ok]})
