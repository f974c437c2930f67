"""The cluster splits of the distributed route: `split_non_matches`, then `split_weak_links`,
as `linkage.run.finish.cut_weak_links` runs them, with Spark finding the clusters they touch.

Both splits act on few clusters, and say which by a test per cluster that Spark computes with
joins and aggregates over every pair: `split_non_matches` only rebuilds a cluster holding a
scored pair whose weight is not positive (a non-match between two of its members);
`split_weak_links` only cuts a cluster that is not supported (no hub, not dense, far larger
than its pairs support: `linkage.clustering._supported`'s test, written as Spark columns). Only
those clusters' pairs go to the driver, where the local split code runs on them unchanged (it is
sequential: single linkage over a merge tree). The count of pairs gathered is bounded
(`LINKAGE_SPARK_GATHER_PAIRS`); above it the run stops with an `EngineError` that names the
rules key to turn off, never a silent gather of the table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from linkage.clustering import (
    CHAIN_FACTOR,
    connected_components,
    split_non_matches,
    split_weak_links,
    splits_non_matches,
)
from linkage.engines.spark._frames import pinned
from linkage.engines.spark._graph import component_roots
from linkage.errors import EngineError

GATHER_VARIABLE = "LINKAGE_SPARK_GATHER_PAIRS"
GATHER_PAIRS = 5_000_000  # pairs of the clusters a split touches that may go to the driver


def gather_limit() -> int:
    given = os.environ.get(GATHER_VARIABLE, "").strip()
    return int(given.replace("_", "")) if given else GATHER_PAIRS


@dataclass
class Splits:
    """What the splits did: the matched pairs kept (l, r, w), each row's cluster root, the
    split records (`linkage.clustering._split_records`, rows as positions in `ids`), the ids
    of those rows, the largest component before any split, and the pairs and rows gathered
    to the driver to split."""

    edges: object
    roots: object
    removed: object | None
    splits: list[dict] = field(default_factory=list)
    ids: list = field(default_factory=list)
    largest_before: int = 0
    gathered_pairs: int = 0
    gathered_rows: int = 0


def _gather(frame, what: str, key: str, count: int | None = None) -> pd.DataFrame:
    """`frame` on the driver, refused above the limit; `count`: its rows, where an aggregate
    gave them already. An empty frame (the common case: nothing to split) is not read."""
    if count is None:
        count = frame.count()
    if count > gather_limit():
        raise EngineError(
            f"{what}: {count:,} pairs of the clusters it would split would go to the Spark "
            f"driver, above {GATHER_VARIABLE}={gather_limit():,}. Set `{key}: false` in the "
            f"rules to keep those clusters whole, raise {GATHER_VARIABLE} (and the driver's "
            "memory), or tighten the threshold or blocking so fewer clusters chain.")
    if count == 0:
        return pd.DataFrame(columns=frame.columns)
    return frame.toPandas()


def _subset(rows_of: list[np.ndarray]) -> np.ndarray:
    return np.unique(np.concatenate([np.asarray(r, dtype=np.int64) for r in rows_of]))


def _renumbered(matched: pd.DataFrame):
    """The run rows of gathered pairs (ascending), and the pairs (l, r, w) with their rows
    as positions among them, sorted by (l, r) as the local pairs are: the order of the rows,
    and so every tie-break of the local split code, is kept. Also whether each pair is
    unbreakable: matched by a url, exact or semantic stage (`st` >= 0), as `cut_weak_links`
    keeps such links."""
    rows = _subset([matched["l"], matched["r"]])
    left = np.searchsorted(rows, matched["l"].to_numpy(np.int64))
    right = np.searchsorted(rows, matched["r"].to_numpy(np.int64))
    w = matched["w"].to_numpy(np.float64)
    fixed = (matched["st"].to_numpy(np.int64) >= 0 if "st" in matched
             else np.zeros(len(matched), dtype=bool))
    order = np.lexsort((right, left))
    return rows, left[order], right[order], w[order], fixed[order]


def _edge_columns(edges) -> list[str]:
    return ["l", "r", "w", *(["st"] if "st" in edges.columns else [])]


def _patch_roots(roots, rows: np.ndarray, left: np.ndarray, right: np.ndarray, spark):
    """`roots` with new roots for `rows` (run rows, ascending): the components of the kept
    pairs (`left`, `right`: positions in `rows`) among them."""
    from pyspark.sql import functions as F

    labels = connected_components(len(rows), left, right)
    _, first = np.unique(labels, return_index=True)  # rows ascend: first seen is the smallest
    new = spark.createDataFrame(pd.DataFrame({"row": rows, "new": rows[first][labels]}),
                                "row long, new long")
    return (roots.join(new, "row", "left").select("row", F.coalesce("new", "root")
                                                  .alias("root")).transform(pinned))


def split_on_spark(spark, rules, scorer, n: int, edges, scored, ids_of) -> Splits:
    """Split the clusters of `edges` (matched pairs l, r, w) as `cut_weak_links` does; `scored`:
    every scored pair (l, r, match_weight); `ids_of(rows)`: the ids of some rows, in order."""
    from pyspark.sql import functions as F

    as_ab = edges.select(F.col("l").alias("a"), F.col("r").alias("b"))
    # pinned by the next aggregate (the non-match test's or the weak-link test's)
    roots = found = component_roots(spark, as_ab, n, lazy=True)
    out = Splits(edges, roots, None)
    removed_parts = []
    threshold = float(scorer.threshold)

    if splits_non_matches(rules, scorer):
        weight = F.when(F.isnan("match_weight"), 0.0).otherwise(F.col("match_weight"))
        rl = roots.select(F.col("row").alias("l"), F.col("root").alias("_rl"))
        rr = roots.select(F.col("row").alias("r"), F.col("root").alias("_rr"))
        inside = (scored.select("l", "r", weight.alias("cw")).join(rl, "l").join(rr, "r")
                  .where(F.col("_rl") == F.col("_rr")))
        doubt = inside.where(F.col("cw") <= 0).select(F.col("_rl").alias("root")).distinct()
        of_l = roots.select(F.col("row").alias("l"), "root")
        matched = _gather(edges.join(of_l, "l").join(doubt, "root")
                          .select(*_edge_columns(edges)),
                          "split_non_matches", "split_non_matches")
        if len(matched):
            compared = _gather(inside.join(doubt, F.col("_rl") == F.col("root"))
                               .select("l", "r", "cw"), "split_non_matches",
                               "split_non_matches")
            rows, left, right, w, fixed = _renumbered(matched)
            cl = np.searchsorted(rows, compared["l"].to_numpy(np.int64))
            cr = np.searchsorted(rows, compared["r"].to_numpy(np.int64))
            by = np.lexsort((cr, cl))
            keep, splits = split_non_matches(
                len(rows), left, right, w,
                (cl[by], cr[by], compared["cw"].to_numpy(np.float64)[by]),
                unbreakable=fixed, threshold=threshold)
            out.gathered_pairs += len(matched) + len(compared)
            out.gathered_rows += len(rows)
            if splits:
                out = _apply(spark, out, rows, left, right, keep, splits, ids_of,
                             removed_parts)

    if rules.split_weak_links:
        edges, roots = out.edges, out.roots
        of_l = roots.select(F.col("row").alias("l"), "root")
        size = roots.groupBy("root").agg(F.count(F.lit(1)).alias("size"))
        pairs = edges.join(of_l, "l").groupBy("root").agg(F.count(F.lit(1)).alias("edges"))
        ends = edges.select(F.col("l").alias("row")).unionByName(
            edges.select(F.col("r").alias("row")))
        degree = ends.groupBy("row").agg(F.count(F.lit(1)).alias("degree"))
        max_degree = (degree.join(roots, "row").groupBy("root")
                      .agg(F.max("degree").alias("max_degree")))
        stats = size.join(pairs, "root").join(max_degree, "root")
        s, e, d = F.col("size"), F.col("edges"), F.col("max_degree")
        supported = ((s <= 2) | (3 * d >= 2 * (s - 1)) | (2 * e >= s * (s - 1) / 2)
                     | (s * s <= CHAIN_FACTOR * (s + 2 * e)))
        # One job: the pairs of the weak clusters (to gather) and the largest cluster (the
        # summary's size before the split; a run with no pair has clusters of one).
        counted = stats.agg(F.sum(F.when(~supported, e)).alias("weak"),
                            F.max(s).alias("largest")).first()
        out.largest_before = (int(counted["largest"] or min(n, 1)) if roots is found
                              else _largest(found))  # (a non-match split changed the roots)
        weak = stats.where(~supported).select("root")
        matched = _gather(edges.join(of_l, "l").join(weak, "root")
                          .select(*_edge_columns(edges)),
                          "split_weak_links", "split_weak_links", int(counted["weak"] or 0))
        if len(matched):
            rows, left, right, w, fixed = _renumbered(matched)
            keep, splits = split_weak_links(len(rows), left, right, w, unbreakable=fixed)
            out.gathered_pairs += len(matched)
            out.gathered_rows += len(rows)
            if splits:
                out = _apply(spark, out, rows, left, right, keep, splits, ids_of,
                             removed_parts)
    if removed_parts:
        out.removed = removed_parts[0]
        for more in removed_parts[1:]:
            out.removed = out.removed.unionByName(more)
    return out


def _largest(roots) -> int:
    """The size of the largest component of `roots` (row, root)."""
    from pyspark.sql import functions as F

    return int(roots.groupBy("root").count().agg(F.max("count")).first()[0] or 0)


def _apply(spark, out: Splits, rows, left, right, keep, splits, ids_of, removed_parts):
    """The pairs a split removed out of the edges, the new roots of its rows, its records."""
    gone = spark.createDataFrame(pd.DataFrame({"l": rows[left[~keep]], "r": rows[right[~keep]]}),
                                 "l long, r long").transform(pinned)
    removed_parts.append(gone)
    out.edges = out.edges.join(gone, ["l", "r"], "left_anti").transform(pinned)
    out.roots = _patch_roots(out.roots, rows, left[keep], right[keep], spark)
    # Each split's rows as positions in `out.ids` (their ids, fetched once per split round).
    offset = len(out.ids)
    touched = _subset([s["rows"] for s in splits])
    out.ids.extend(ids_of(rows[touched]))
    for split in splits:
        split["rows"] = np.searchsorted(touched, split["rows"]) + offset
    out.splits.extend(splits)
    return out
