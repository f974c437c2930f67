"""`Result.match`: look records up in a finished dedupe run without changing it.

Each record is normalized, blocked against the run's records with the run's blockers,
compared and scored with the run's scorer. The indexes a lookup needs (each key blocker's
blocks, each sorted neighbourhood's order, the exact stage's row hashes) are built once per
run (`_MatchIndex`) and kept on the Result."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from linkage.blocking import KeyGroups
from linkage.errors import InputError, LinkageWarning, user_stacklevel
from linkage.io import as_text, read
from linkage.normalize import as_text as value_text
from linkage.run.compare import compare_pairs
from linkage.run.disk import is_fitted, named_input, run_records, run_scorer
from linkage.scoring import ComparisonMatrix
from linkage.text.exact import hashes_to_bytes, row_hashes

MATCH_COLUMNS = ["input_row", "rank", "cluster_id", "representative_id", "best_record_id",
                 "match_weight", "match_probability", "above_threshold"]


def match(result, records, *, top: int = 3) -> pd.DataFrame:
    """The best `top` candidate clusters of each record in `records` (a DataFrame with the
    run's input columns, one dict, or a list of dicts), without changing the run.

    Each record is normalized, blocked against the run's records with the run's blockers,
    compared and scored with the run's scorer. One row per (input row, cluster), best first:
    `input_row` (position in `records`), `rank`, `cluster_id`, `representative_id`,
    `best_record_id` (the cluster's record that scored best), `match_weight`,
    `match_probability` and `above_threshold`. A record with no candidate has no rows.
    The block indexes are built on the first call and kept on `result`, so a lookup of one
    record costs a few milliseconds.
    """
    if not (isinstance(top, int) and not isinstance(top, bool) and top >= 1):
        raise InputError(f"`top` must be a whole number of at least 1. Got {top!r} instead.")
    index = _match_index(result)
    return index.lookup(_query_frame(records, index), top)


def _query_frame(records, index) -> pd.DataFrame:
    if isinstance(records, dict):
        records = [records]
    if isinstance(records, list):
        records = pd.DataFrame.from_records(records)
    if not isinstance(records, pd.DataFrame):
        records = read(records)
    missing = [c for c in index.input_columns if c not in records.columns]
    if missing:
        raise InputError(
            f"records to match: column(s) {', '.join(f'`{c}`' for c in missing)} are missing; "
            f"the run's rules read {', '.join(index.input_columns)}. Add them (None where "
            "unknown).")
    return records.reset_index(drop=True)


def _match_index(result) -> _MatchIndex:
    """The cached index of `result`, built again if its clusters were replaced."""
    cached = result.__dict__.get("_linkage_match_index")
    if cached is not None and cached.clusters is result.clusters:
        return cached
    index = _MatchIndex(result, *_records_for_match(result))
    result.__dict__["_linkage_match_index"] = index
    return index


def _records_for_match(result) -> tuple[pd.DataFrame, np.ndarray]:
    """The run's records and their rows in `result.clusters`: kept by `update`, else read
    from the input file (checksum checked); for a run of a DataFrame, whose records are not
    kept, its kept records (deduplicated) stand in, with a warning."""
    if result.mode != "dedupe":
        raise InputError(f"match looks records up in dedupe runs, not {result.mode} runs.")
    kept = result.__dict__.get("_linkage_records")
    if kept is not None:
        return kept, np.arange(len(kept))
    id_name = result.summary_data.get("id_column") or "row_id"
    inputs = result.summary_data.get("inputs", [])
    if len(inputs) == 1 and Path(inputs[0]["name"]).is_file():
        path = Path(inputs[0]["name"])
        records = run_records(path, result.summary_data, result.clusters, id_name,
                              named_input(path, result.summary_data))
        return records, np.arange(len(records))
    if result.deduplicated is None:
        raise InputError("this run's records are not available to match against.")
    warnings.warn(
        "the run's input is not a file that can be read again, so records are matched "
        f"against its {len(result.deduplicated):,} kept records only. Load the run from its "
        "folder (Result.load) with its input in place to match against every record.",
        LinkageWarning, stacklevel=user_stacklevel())
    rows = pd.Index(result.clusters[id_name].astype(str)).get_indexer(
        result.deduplicated[id_name].astype(str))
    return result.deduplicated, rows


class _MatchIndex:
    """What a lookup needs from a run, computed once: normalized values, each key blocker's
    blocks, each sorted neighbourhood's order, the exact stage's row hashes, and the cluster
    and representative of every record."""

    def __init__(self, result, records: pd.DataFrame, rows: np.ndarray):
        self.clusters = result.clusters
        self.rules = rules = result.rules
        self.scorer = run_scorer(result)
        if not is_fitted(self.scorer):
            self.scorer = self.scorer.fit(_empty_matrix(rules))
        produced = {s.output for s in rules.normalize if s.output}
        wanted = [c for s in rules.normalize for c in s.inputs]
        for blocker in rules.blocking:
            wanted += list(blocker.columns)
        wanted += [c for comparison in rules.comparisons for c in comparison.columns]
        self.input_columns = [c for c in dict.fromkeys(wanted) if c not in produced]
        id_name = result.summary_data.get("id_column") or "row_id"
        self.record_ids = records[id_name].to_numpy()
        self.cluster_ids = result.clusters["cluster_id"].to_numpy(np.int64)[rows]
        self.representatives = result.clusters["representative_id"].to_numpy()[rows]
        self.work = self.normalize(records)
        self.lookups = [blocker.lookup_index(self.work, rules.max_block_size)
                        for blocker in rules.blocking]
        self.exact_columns, self.exact = None, None
        if rules.exact is not None:
            self.exact_columns = rules.exact.columns or [c for c in records.columns
                                                         if c != id_name]
            self.exact = KeyGroups(self.copy_keys(records), None)
        self.shares = {c.output_name: pd.Series(self.work[c.column], dtype=object)
                       .value_counts(normalize=True, dropna=True)
                       for c in rules.comparisons if c.output_name in self.scorer.tf_columns}

    def normalize(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        work = {c: as_text(frame[c]) if len(frame) > SMALL else _as_text_small(frame[c])
                for c in self.input_columns}
        for step in self.rules.normalize:
            series = pd.Series(step.joined(work), name=step.column, dtype=object)
            work[step.target] = step.apply(series).to_numpy(dtype=object)
        return work

    def copy_keys(self, frame: pd.DataFrame) -> list:
        """The exact stage's row hash per record (None for a record with nothing in its
        columns: no one's copy, as in the run)."""
        columns = self.exact_columns
        hashes = hashes_to_bytes(row_hashes(frame[columns], columns,
                                            normalize=self.rules.exact.normalize))
        filled = np.zeros(len(frame), dtype=bool)
        for column in columns:
            values = frame[column]
            filled |= (values.notna() & values.astype(str).str.strip().ne("")).to_numpy()
        return [h if ok else None for h, ok in zip(hashes.tolist(), filled, strict=True)]

    def candidates(self, frame: pd.DataFrame, query: dict[str, np.ndarray]):
        """(query row, run row, exact copy?) of every candidate pair, each pair once."""
        found = [pair for lookup in self.lookups for pair in lookup.find(query)]
        width = max(len(self.record_ids), 1)
        copies = np.zeros(0, np.int64)
        if self.exact is not None and all(c in frame.columns for c in self.exact_columns):
            qs, rs = self.exact.find(self.copy_keys(frame))
            found.append((qs, rs))
            copies = qs * width + rs
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, bool)
        code = np.unique(np.concatenate([f[0] * width + f[1] for f in found]))
        return code // width, code % width, np.isin(code, copies)

    def lookup(self, frame: pd.DataFrame, top: int) -> pd.DataFrame:
        query = self.normalize(frame)
        qs, rs, copy_ = self.candidates(frame, query)
        if len(qs) == 0:
            return _empty_matches()
        small = {c: np.concatenate([v[rs], query[c]]) for c, v in self.work.items()}
        matrix = compare_pairs(self.rules.comparisons, small, np.arange(len(rs)), len(rs) + qs)
        for c, comparison in enumerate(self.rules.comparisons):
            if comparison.output_name in self.shares:  # shares among the run's records
                exact = matrix.levels[:, c] == len(comparison.level_labels) - 1
                shares = np.full(len(rs), np.nan)
                values = pd.Series(self.work[comparison.column][rs[exact]], dtype=object)
                shares[exact] = values.map(self.shares[comparison.output_name]).to_numpy(float)
                matrix.term_frequencies[comparison.output_name] = shares
        weight = self.scorer.match_weight(matrix)
        probability = self.scorer.match_probability(matrix)
        above = (weight >= self.scorer.threshold) | copy_  # copies match, as in the run
        return self._best(qs, rs, weight, probability, above, top)

    def _best(self, qs, rs, weight, probability, above, top) -> pd.DataFrame:
        """Per query, each cluster's best pair; the clusters ranked best first, `top` kept."""
        cluster = self.cluster_ids[rs]
        order = np.lexsort((self.record_ids[rs].astype(str), -weight, ~above, cluster, qs))
        first = np.ones(len(order), dtype=bool)
        first[1:] = (qs[order][1:] != qs[order][:-1]) | (cluster[order][1:]
                                                         != cluster[order][:-1])
        best = order[first]
        best = best[np.lexsort((cluster[best], -weight[best], ~above[best], qs[best]))]
        rank = np.arange(len(best)) - np.searchsorted(qs[best], qs[best], side="left") + 1
        best, rank = best[rank <= top], rank[rank <= top]
        return pd.DataFrame({
            "input_row": qs[best].astype(np.int64),
            "rank": rank.astype(np.int64),
            "cluster_id": cluster[best].astype(np.int64),
            "representative_id": self.representatives[rs[best]],
            "best_record_id": self.record_ids[rs[best]],
            "match_weight": weight[best].astype(np.float64),
            "match_probability": probability[best].astype(np.float64),
            "above_threshold": above[best],
        })


def _as_text_small(values: pd.Series) -> np.ndarray:
    """`io.as_text` for a few values: str, or None where missing."""
    out = np.full(len(values), None, dtype=object)
    for k, value in enumerate(values.tolist()):
        if not (value is None or value is pd.NA or (isinstance(value, float) and value != value)):
            out[k] = value_text(value)
    return out


def _empty_matrix(rules):
    k = len(rules.comparisons)
    return ComparisonMatrix(rules.comparisons, np.zeros((0, k), np.int8),
                            np.zeros((0, k), np.float32))


def _empty_matches() -> pd.DataFrame:
    return pd.DataFrame({
        "input_row": pd.Series([], dtype=np.int64), "rank": pd.Series([], dtype=np.int64),
        "cluster_id": pd.Series([], dtype=np.int64),
        "representative_id": pd.Series([], dtype=object),
        "best_record_id": pd.Series([], dtype=object),
        "match_weight": pd.Series([], dtype=np.float64),
        "match_probability": pd.Series([], dtype=np.float64),
        "above_threshold": pd.Series([], dtype=bool)})


SMALL = 64  # a lookup of at most this many records takes the plain-Python paths
