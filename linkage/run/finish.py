"""The tail every engine shares: guard → cluster → keep → outputs → summary → report.

An engine runs the stages up to scoring over its own data and hands `finish` a `RunState`
holding every candidate pair's weight. What `finish` does with them is the same for every
engine; where an engine does a step over its own data (Spark: guards, the one-to-one
assignment, connected components and keeper ranks as Spark jobs), it says so through a
`Tail`, whose methods are the local engine's way by default. The output files are built by
`linkage.run.outputs` and summary.json by `linkage.run.summary`, so the engines write the
same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from linkage.clustering import (
    connected_components,
    labelled_joins,
    one_to_one,
    split_decisions,
    split_non_matches,
    split_weak_links,
    splits_non_matches,
)
from linkage.golden import build_golden
from linkage.guards import GuardContext, apply_guards
from linkage.keep import CENTROID_DISTANCE, id_rank, keeper_rank
from linkage.parallel import beside
from linkage.result import Result
from linkage.run.outputs import pair_frame, record_outputs, whole_rows
from linkage.run.stages import LABELLED_JOIN, matched_by_stage, stage_matches, stage_reasons
from linkage.run.summary import (
    add_diagnostics,
    build_summary,
    guard_counts,
    scorer_report,
)

if TYPE_CHECKING:
    from linkage.run.state import RunState
    from linkage.settings import Rules


class Tail:
    """How an engine does the tail's steps over its data. The defaults are the local
    engine's (numpy over the pairs in memory); an engine overrides what it does itself.

    `chunk` and `folder`: records at a time and the folder for the streamed output files
    when the run is too big to hold its outputs in memory (None: in memory)."""

    chunk: int | None = None
    folder: Any = None

    def guard(self, state: RunState, matched: np.ndarray):
        """The guards' decisions over the matched pairs: a `GuardContext` after the rules'
        guards ran, or `Unguarded` where the rules have none."""
        rules = state.rules
        if not rules.guards:
            return Unguarded.of(state.n, matched)
        pairs = state.pairs
        guard = GuardContext(state.combined, state.ids.to_numpy(), state.source, pairs.left,
                             pairs.right, state.weight, matched, state.scorer.threshold)
        apply_guards(rules.guards, guard)
        return guard

    def one_to_one(self, state: RunState, left: np.ndarray, right: np.ndarray,
                   weight: np.ndarray) -> np.ndarray:
        """Which of the matched pairs (`left`, `right`, `weight`) the one-to-one assignment
        keeps (`linkage.clustering.one_to_one`)."""
        return one_to_one(left, right, weight)

    def components(self, state: RunState, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Each record's cluster label: the connected components of the accepted links."""
        return connected_components(state.n, left, right)

    def keepers(self, state: RunState, clusters: np.ndarray,
                keep_limit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(each record's keeper row, whether the record is kept) by the rules' keeper
        policy, at most `keep_limit` records per cluster (`keep_up_to` guards raise it)."""
        n, rules = state.n, state.rules
        rank = id_rank(state.ids) + (state.source.astype(np.int64) * n)  # left before right
        ranked = state.combined if state.centroid_distance is None else state.combined.assign(
            **{CENTROID_DISTANCE: state.centroid_distance})
        ranks = keeper_rank(rules.keep, ranked, clusters, rank)
        limit = np.full(int(clusters.max()) + 1 if n else 0, rules.keep.k, dtype=np.int64)
        if n and int(keep_limit.max()) > rules.keep.k:  # (a guard keeps more: 0.5 s at 10M)
            np.maximum.at(limit, clusters, keep_limit.astype(np.int64))
        is_keeper = ranks < limit[clusters]
        representative_row = np.empty(len(limit), dtype=np.int64)
        representative_row[clusters[ranks == 0]] = np.flatnonzero(ranks == 0)
        return representative_row[clusters], is_keeper

    def whole_rows(self, state: RunState):
        """Where the input's whole rows come from when the frames hold only the columns the
        rules read (`linkage.run.outputs.whole_rows`); None: the frames are whole."""
        table = state.tables[0]
        if state.mode != "dedupe" or table.rows is None:
            return None
        return whole_rows(table, state.n, state.id_column)

    def pair_table(self, state: RunState, matched: np.ndarray):
        """pairs.parquet's table: every candidate pair with its levels, weight and match,
        from the comparison matrix in memory (`state.matrix`)."""
        pairs = state.pairs
        return pair_frame(state.ids, pairs.left, pairs.right, pairs.mask, state.matrix,
                          state.weight, state.probability, matched)

    def summary(self, state: RunState, summary: dict) -> None:
        """What the engine adds to summary.json (its name and versions)."""


@dataclass
class Unguarded:
    """What the outputs read from a `GuardContext`, for rules without guards (no copy of
    every id as a Python object)."""

    matched: np.ndarray
    action: np.ndarray
    reason: np.ndarray
    review_group: np.ndarray
    keep_limit: np.ndarray
    decisions: list

    @classmethod
    def of(cls, n: int, matched: np.ndarray) -> Unguarded:
        nothing = np.full(n, None, dtype=object)
        return cls(np.asarray(matched, dtype=bool), nothing, nothing, nothing,
                   np.ones(n, dtype=np.int8), [])  # one copy kept per cluster, as int64 where read

    def settle(self, is_keeper: np.ndarray | None) -> None:
        """No guard held anything back."""


def finish(state: RunState, tail: Tail, *, sample_records: bool = True) -> Result:
    """Guard, cluster and keep over `state`'s scored pairs, then build the outputs, the
    summary and (with `sample_records`) the records report.html shows. Returns the run's
    `Result`; each step is timed on `state.clock`. The clock is not closed here."""
    rules, mode, n, clock = state.rules, state.mode, state.n, state.clock
    pairs, weight, scorer, ids = state.pairs, state.weight, state.scorer, state.ids
    above, staged, matched = stage_matches(rules, pairs.mask, weight, scorer.threshold)

    with clock.stage("guard"):
        guard = tail.guard(state, matched)
        matched = guard.matched

    with clock.stage("cluster"):
        ml, mr, mw = pairs.left[matched], pairs.right[matched], weight[matched]
        ms = staged[matched]
        at = np.flatnonzero(matched)  # each matched pair's position among all pairs
        if mode == "link" and rules.one_to_one:
            keep_edge = tail.one_to_one(state, ml, mr, mw)
            ml, mr, mw, ms = ml[keep_edge], mr[keep_edge], mw[keep_edge], ms[keep_edge]
            at = at[keep_edge]
        keep_edge, splits, component_sizes, kept_labels = cut_weak_links(
            rules, n, ml, mr, mw, ms >= 0, (pairs.left, pairs.right, weight), scorer)
        if splits:
            matched = matched.copy()
            matched[at[~keep_edge]] = False
            ml, mr, mw, ms = ml[keep_edge], mr[keep_edge], mw[keep_edge], ms[keep_edge]
            guard.decisions.extend(split_decisions(splits, ids))
            clusters = (connected_components(n, ml, mr) if kept_labels is None
                        else kept_labels)
        else:
            clusters = tail.components(state, ml, mr)
        joins = labelled_links(state, clusters, weight)
        if len(joins):  # labelled matches the clusters kept apart: their clusters join
            matched = matched.copy()
            matched[joins] = True
            ml = np.concatenate([ml, pairs.left[joins]])
            mr = np.concatenate([mr, pairs.right[joins]])
            mw = np.concatenate([mw, weight[joins]])
            # told by their own reason: a joined pair may score below the threshold
            ms = np.concatenate([ms, np.full(len(joins), len(stage_reasons(rules)),
                                             dtype=ms.dtype)])
            clusters = connected_components(n, ml, mr)

    with clock.stage("keep"):
        # pairs.parquet is made on a thread of its own, beside the records' tables
        pairing = beside(tail.pair_table, state, matched) if tail.folder is not None else None
        try:
            keeper, is_keeper = tail.keepers(state, clusters, guard.keep_limit)
            outputs = record_outputs(
                mode, ids, state.id_name, state.source, clusters, keeper, is_keeper,
                (ml, mr, mw), state.frames, scorer.threshold, guard, chunk=tail.chunk,
                folder=tail.folder, whole_rows=tail.whole_rows(state),
                stages=(ms, [text for _, text in stage_reasons(rules)] + [LABELLED_JOIN]))
        except BaseException:
            if pairing is not None:
                pairing.wait()
            raise
        outputs["pairs"] = (tail.pair_table(state, matched) if pairing is None
                            else pairing.result())
        if rules.golden is not None and mode == "dedupe":
            outputs["golden"] = build_golden(rules.golden, state.combined, ids, clusters,
                                             state.id_name)

    # The records the report shows are picked on a thread beside the summary: neither reads
    # what the other makes (the picks read the outputs, the run's mode, id column and
    # threshold, as summary.json will hold them).
    picking = beside(_report_records, state, mode, rules, outputs, scorer, pairs, weight,
                     matched) if sample_records else None
    with clock.stage("summary"):  # summary.json's counts, before and after, diagnostics
        summary = build_summary(
            mode, state.tables, rules, n, state.sizes, state.normalize_stats, pairs,
            state.matrix if state.tally is None else state.tally,
            matched, clusters, outputs["clusters"], state.id_column, state.combined,
            above=int(above.sum()),
        )
        tail.summary(state, summary)
        summary["stages"]["score"].update(matched_by_stage(rules, above, staged, matched))
        summary["stages"]["score"].update(scorer_report(scorer))
        for name, stats in state.exact_stats.items():
            summary["stages"][name] = stats
        summary["stages"]["guard"] = guard_counts(rules, guard.decisions)
        if mode == "link":
            summary["links"] = len(outputs["links"])
        if state.labels_report is not None:
            summary["labels"] = state.labels_report
            outputs["labels"] = state.kept_labels
        add_diagnostics(summary, rules, scorer, splits, component_sizes, clusters, pairs.left,
                        pairs.right, matched, pairs.mask)
    result = Result.from_outputs(mode, rules, outputs, summary, clock.timings, scorer)
    if picking is not None:
        with clock.stage("report"):  # the records report.html shows: one pass over the pairs
            result.records, result._report_picked = picking.result()
    return result


def _report_records(state: RunState, mode: str, rules: Rules, outputs: dict[str, Any], scorer,
                    pairs, weight: np.ndarray, matched: np.ndarray) -> tuple[pd.DataFrame, Any]:
    """(the records report.html shows, the picks they were taken for), before the run's
    summary is built: `report_sample` of a stand-in Result with the outputs and the summary's
    mode, id column and threshold (all that the picks read of it), a dedupe's candidate pairs
    as the run holds them."""
    from linkage.report import PairRows
    from linkage.run.summary import ROW_ID

    summary = {"mode": mode, "id_column": state.id_column or ROW_ID,
               "stages": {"score": {"threshold": float(scorer.threshold)}}}
    pair_rows = None
    if mode == "dedupe":  # pairs.parquet's rows as the run holds them
        pair_rows = PairRows(pairs.left, pairs.right, weight.astype(np.float64, copy=False),
                             matched)
    stand_in = Result.from_outputs(mode, rules, outputs, summary, {}, scorer)
    records = report_sample(stand_in, state.combined, id_name=state.id_name,
                            source=state.source, pair_rows=pair_rows)
    return records, stand_in._report_picked


def cut_weak_links(rules: Rules, n: int, left: np.ndarray, right: np.ndarray,
                   weight: np.ndarray, unbreakable: np.ndarray, compared=None, scorer=None):
    """(mask of the matched pairs kept, the clusters split, each connected component's size
    before, each record's cluster label over the pairs kept where it is known, else None):
    first `linkage.clustering.split_non_matches` over `compared` (every scored pair: left
    rows, right rows, weights) where the rules ask for it and the `scorer`'s weights are log
    odds (not the rule-sum scorer's), then `linkage.clustering.split_weak_links` over the
    pairs left, unless the rules turn it off. The labels are known where the last step that
    looked at the clusters cut nothing (at 10M records, one connected components pass of 0.6
    s the caller need not repeat)."""
    labels = connected_components(n, left, right)
    sizes = np.bincount(labels) if n else np.zeros(0, dtype=np.int64)
    keep = np.ones(len(left), dtype=bool)
    splits: list[dict] = []
    if compared is not None and scorer is not None and splits_non_matches(rules, scorer):
        keep, splits = split_non_matches(n, left, right, weight, compared,
                                         unbreakable=unbreakable, labels=labels,
                                         threshold=scorer.threshold)
        if splits:
            labels = None  # the components of the pairs kept
    if not rules.split_weak_links:
        return keep, splits, sizes, labels
    at = np.flatnonzero(keep)
    if labels is None:  # the components of the pairs kept, which split_weak_links reads
        labels = connected_components(n, left[at], right[at])
    more, weak = split_weak_links(n, left[at], right[at], weight[at],
                                  unbreakable=None if unbreakable is None else unbreakable[at],
                                  labels=labels)
    keep[at[~more]] = False
    return keep, splits + weak, sizes, (None if weak else labels)


def labelled_links(state: RunState, clusters: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Positions among the candidate pairs of the labelled matches to add as links, so that a
    dedupe's clusters agree with its labels (`linkage.clustering.labelled_joins`: a labelled
    match the clusters keep apart joins their clusters, unless that puts a labelled non-match
    in one cluster); `state.labels_report` says how many (`joined_clusters`). Only in a
    dedupe without guards (a guard is the rules' own word on which records may never be
    one), and only for labelled pairs among the candidate pairs (as `linkage sample` picks
    them). Rules with `join_labelled: false` leave the clusters to the model."""
    labels = state.kept_labels
    none = np.zeros(0, dtype=np.int64)
    if (labels is None or state.mode != "dedupe" or state.rules.guards or len(labels) == 0
            or state.labels_report is None or not state.rules.join_labelled):
        return none
    pairs, n = state.pairs, state.n
    row = pd.Series(np.arange(n), index=state.ids.astype(str).to_numpy())
    row = row[~row.index.duplicated()]
    li = labels["id_l"].astype(str).map(row).to_numpy(dtype=float)
    ri = labels["id_r"].astype(str).map(row).to_numpy(dtype=float)
    y = labels["label"].to_numpy(dtype=np.int64)
    known = ~(np.isnan(li) | np.isnan(ri))
    li, ri, y = li[known].astype(np.int64), ri[known].astype(np.int64), y[known]
    key = (np.minimum(pairs.left, pairs.right).astype(np.int64) * n
           + np.maximum(pairs.left, pairs.right).astype(np.int64))
    position = pd.Series(np.arange(len(key)), index=key)
    position = position[~position.index.duplicated()]
    at = pd.Series(np.minimum(li, ri) * n + np.maximum(li, ri)).map(position).to_numpy()
    candidate = ~np.isnan(at)
    # a labelled non-match counts wherever it is; a labelled match joins through its pair
    use = candidate | (y == 0)
    at, li, ri, y = at[use], li[use], ri[use], y[use]
    w = np.where(np.isnan(at), -np.inf, weight[np.nan_to_num(at).astype(np.int64)])
    joined = labelled_joins(clusters, li, ri, y, w)
    state.labels_report["joined_clusters"] = int(joined.sum())
    return at[joined].astype(np.int64)


def report_sample(result: Result, records: pd.DataFrame, *, id_name: str,
                  source: np.ndarray, pair_rows=None) -> pd.DataFrame:
    """The input records report.html shows (`linkage.report._records`): a few dozen rows.
    `pair_rows`: a dedupe's candidate pairs as rows (`_records.PairRows`: pairs.left, right,
    the weights and `matched`, in the order of pairs.parquet, whose is_match is `matched`).
    Ids are unique (`validate_tables`), so a row is the record its id names in
    clusters.parquet, whose rows are the run's."""
    from linkage.report import sample_records

    return sample_records(result, records, id_name=id_name, source=source,
                          pair_rows=pair_rows)
