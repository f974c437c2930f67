"""Guards on Spark: the local engine's guard decisions, with the search done by Spark.

Every guard kind of `linkage.guards` runs here with the local engine's very result: the same
matched pairs, actions, reasons, review groups and keep limits, and the same decisions in the
same order. That holds because every decision is still made by the guard's own `apply`; what
changes is what it is given. Spark holds the state that grows with the data (every scored pair
with its matched flag, every record's cluster root: the smallest row of its cluster) and finds
the few places where a guard acts, by joins, window functions and groupBy aggregates:

- `domain_thresholds`: the pairs whose domain threshold changes their match (the pairs joined
  with both records' domain and threshold, then filtered). Spark updates the flags itself; the
  driver gets only the changed pairs, to log them.
- `must_not_link`, `max_cluster_size`, `distinct_events`: the violating clusters (distinct
  values per cluster, cluster size by a window, a business key repeated in a cluster). Only the
  matched pairs of those clusters are collected, and the guard splits them on the driver with
  the local split code. The split (the guard's own: weakest edges first until no piece
  violates; for `max_cluster_size`, strongest edges first into pieces that fit) is
  sequential, and the violating clusters are few and small next to the table: this is the
  honest division of the work. The removed pairs and the new cluster roots go back to Spark.
- `conflicting_labels`, `keep_up_to`, `max_cluster_size` with `action: review`: the records
  that get a decision (groups with two labels, a group being a connected component of "same
  normalized text or same cluster" found on Spark; clusters holding a protected record;
  clusters too big). They come with their cluster root, so the guard sees their clusters
  without any pair.

On the driver a guard runs on a `GuardContext` that holds every record but only those pairs
(or, for the record guards, each cluster as a star around its root). Records outside them are
alone in that context, and a lone record is never a violation, so the guard decides exactly
what it decides on the whole graph. The context shares the run's per-record arrays and its
decision list, so the guard's marks and decisions land there, in the local order. Per-record
work (a column's codes, parsing timestamps, normalizing text) reads the whole input table, as
locally: the driver holds it anyway, having read it, and a timestamp format is inferred from
the whole column.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from linkage.clustering import connected_components
from linkage.engines.spark._frames import pinned
from linkage.engines.spark._graph import component_labels, component_roots
from linkage.errors import LinkageError
from linkage.guards import (
    ConflictingLabels,
    DistinctEvents,
    DomainThresholds,
    Guard,
    GuardContext,
    KeepUpTo,
    MaxClusterSize,
    MustNotLink,
    column_codes,
    column_values,
    row_codes,
)

__all__ = ["GUARDS", "apply_guards_on_spark"]


def apply_guards_on_spark(spark, guards: list[Guard], ctx: GuardContext, scored):
    """Run `guards` on `ctx` as `linkage.guards.apply_guards` does (every guard's columns
    checked first, then stage order, list order inside a stage), finding their work with Spark
    in `scored` (the scored pairs: l, r, match_weight). Returns the guarded matched pairs as a
    DataFrame (l, r, w), for the cluster stage."""
    for i, guard in enumerate(guards):
        guard.validate(ctx.records, f"guards[{i}]")
    state = _SparkState(spark, scored, ctx)
    for i in sorted(range(len(guards)), key=lambda i: (guards[i].stage, i)):
        guards[i]._where = f"guards[{i}]"
        GUARDS[type(guards[i])](guards[i], state)
    return state.edges()


class _SparkState:
    """The pairs' matched flags and the records' cluster roots in Spark, kept in step with
    `ctx` on the driver, and the ways a guard is run on part of the graph."""

    def __init__(self, spark, scored, ctx: GuardContext):
        from pyspark.sql import functions as F

        self.spark, self.ctx = spark, ctx
        threshold = F.lit(float(ctx.threshold))
        matched = F.col("match_weight") >= threshold
        if "staged" in scored.columns:  # matched by an exact, url or semantic stage (`_text`)
            matched = matched | F.col("staged")
        self.pairs = scored.select("l", "r", F.col("match_weight").alias("w"),
                                   matched.alias("m"))
        self._roots = None
        # The driver's pairs are sorted by (left, right): a pair's position by binary search.
        self._codes = ctx.left.astype(np.int64) * ctx.n + ctx.right.astype(np.int64)

    # -- Spark side ------------------------------------------------------------------------

    def edges(self):
        """The matched pairs now: (l, r, w)."""
        return self.pairs.where("m").select("l", "r", "w")

    def roots(self):
        """(row, root) for every record: its cluster's smallest row under the matched pairs
        now (computed once, then patched as guards split clusters)."""
        if self._roots is None:
            from pyspark.sql import functions as F

            edges = self.edges().select(F.col("l").alias("a"), F.col("r").alias("b"))
            self._roots = component_roots(self.spark, edges, self.ctx.n)
        return self._roots

    def frame(self, data: dict[str, np.ndarray], schema: str):
        """A small per-record (or per-pair) table from the driver."""
        return self.spark.createDataFrame(pd.DataFrame(data), schema=schema)

    def members(self, roots) -> pd.DataFrame:
        """(row, root) of every record of the clusters whose roots are in `roots` (root)."""
        return self.roots().join(roots, "root").select("row", "root").toPandas()

    def cluster_pairs(self, roots) -> np.ndarray:
        """Positions of the matched pairs inside the clusters whose roots are in `roots`."""
        from pyspark.sql import functions as F

        of_left = self.roots().select(F.col("row").alias("l"), "root")
        found = self.edges().join(of_left, "l").join(roots, "root").select("l", "r")
        return self.positions(found.toPandas())

    def positions(self, found: pd.DataFrame) -> np.ndarray:
        """Positions, ascending, of the pairs (l, r) in the driver's arrays."""
        codes = (found["l"].to_numpy(dtype=np.int64) * self.ctx.n
                 + found["r"].to_numpy(dtype=np.int64))
        pos = np.searchsorted(self._codes, codes)
        if len(pos) and (pos.max() >= len(self._codes) or (self._codes[pos] != codes).any()):
            raise LinkageError("the Spark guards found a pair that was not scored; this is a "
                               "bug in linkage, please report it.")
        return np.sort(pos)

    def _drop(self, pos: np.ndarray) -> None:
        """Unmatch the pairs at `pos` in Spark."""
        from pyspark.sql import functions as F

        gone = self.frame({"l": self.ctx.left[pos].astype(np.int64),
                           "r": self.ctx.right[pos].astype(np.int64),
                           "x": np.ones(len(pos), dtype=bool)}, "l long, r long, x boolean")
        self.pairs = (self.pairs.join(gone, ["l", "r"], "left")
                      .select("l", "r", "w", (F.col("m") & F.col("x").isNull()).alias("m"))
                      .transform(pinned))

    def _reroot(self, pos: np.ndarray) -> None:
        """New roots for the records of the clusters whose pairs are `pos`, from the matched
        pairs among them now (a split never joins them to records outside)."""
        from pyspark.sql import functions as F

        if self._roots is None:
            return
        left, right = self.ctx.left[pos], self.ctx.right[pos]
        rows = np.unique(np.concatenate([left, right])).astype(np.int64)
        kept = self.ctx.matched[pos]
        labels = connected_components(len(rows), np.searchsorted(rows, left[kept]),
                                      np.searchsorted(rows, right[kept]))
        # Labels are numbered by smallest member and rows ascend: first seen is the root.
        _, first = np.unique(labels, return_index=True)
        new = self.frame({"row": rows, "new": rows[first][labels]}, "row long, new long")
        self._roots = (self._roots.join(new, "row", "left")
                       .select("row", F.coalesce("new", "root").alias("root"))
                       .transform(pinned))

    # -- driver side -----------------------------------------------------------------------

    def _context(self, left: np.ndarray, right: np.ndarray, weight: np.ndarray,
                 matched: np.ndarray) -> GuardContext:
        """Every record, these pairs; the run's per-record arrays and decisions, shared."""
        ctx = self.ctx
        return GuardContext(ctx.records, ctx.ids, ctx.source, left, right, weight, matched,
                            ctx.threshold, action=ctx.action, reason=ctx.reason,
                            review_group=ctx.review_group, keep_limit=ctx.keep_limit,
                            decisions=ctx.decisions, protected=ctx.protected, held=ctx.held)

    def on_pairs(self, guard: Guard, pos: np.ndarray) -> np.ndarray:
        """Run `guard` on the pairs at `pos` (all of the clusters it touches) and bring its
        changes to the matched flags back into the run. Returns the positions it flipped."""
        ctx = self.ctx
        before = ctx.matched[pos]
        part = self._context(ctx.left[pos], ctx.right[pos], ctx.weight[pos], before)
        guard.apply(part)
        ctx.matched[pos] = part.matched
        return pos[before != part.matched]

    def split(self, guard: Guard, roots) -> None:
        """An edge guard on the clusters whose roots are in `roots`: their matched pairs to
        the driver, the guard's split there, the removed pairs and new roots back to Spark."""
        pos = self.cluster_pairs(roots)
        if len(pos) == 0:
            return
        flipped = self.on_pairs(guard, pos)
        if len(flipped):
            self._drop(flipped)
            self._reroot(pos)

    def on_clusters(self, guard: Guard, roots) -> None:
        """A guard that reads clusters, not pairs, on the clusters whose roots are in `roots`:
        each cluster given to it as a star of pairs around its root."""
        members = self.members(roots)
        if len(members) == 0:
            return
        row = members["row"].to_numpy(dtype=np.int64)
        root = members["root"].to_numpy(dtype=np.int64)
        star = row != root
        n = int(star.sum())
        part = self._context(root[star], row[star], np.zeros(n), np.ones(n, dtype=bool))
        guard.apply(part)
        if not part.matched.all():
            raise LinkageError(f"guard {guard.guard_name!r} removed pairs on Spark where it "
                               "reads only clusters; this is a bug in linkage, please report "
                               "it.")

    def probe(self) -> GuardContext:
        """Every record alone (no pair), with row numbers for ids: a guard run on it tells,
        by its own code, what it makes of single records (which are protected, which texts
        are equal)."""
        ctx = self.ctx
        none = np.zeros(0, dtype=np.int64)
        return GuardContext(ctx.records, np.arange(ctx.n), ctx.source, none, none,
                            np.zeros(0), np.zeros(0, dtype=bool), ctx.threshold)


# --- one function per guard kind --------------------------------------------------------------

def _domain_thresholds(guard: DomainThresholds, state: _SparkState) -> None:
    """The pairs whose two records share a listed domain, rematched by its threshold in Spark;
    the changed ones go to the guard to log."""
    from pyspark.sql import functions as F

    ctx = state.ctx
    domain = column_codes(ctx.records, guard.column)
    limit = column_values(ctx.records, guard.column).map(guard.thresholds).to_numpy(
        dtype=float, na_value=np.nan)
    listed = np.flatnonzero(~np.isnan(limit))
    if len(listed) == 0:
        return
    table = state.frame({"row": listed.astype(np.int64), "d": domain[listed],
                         "t": limit[listed]}, "row long, d long, t double")
    joined = (state.pairs
              .join(table.select(F.col("row").alias("l"), F.col("d").alias("dl"), "t"), "l",
                    "left")
              .join(table.select(F.col("row").alias("r"), F.col("d").alias("dr")), "r",
                    "left"))
    inside = F.col("dl").isNotNull() & (F.col("dl") == F.col("dr"))
    now = F.when(inside, F.col("w") >= F.col("t")).otherwise(F.col("m"))
    updated = joined.select("l", "r", "w", now.alias("m"),
                            (now != F.col("m")).alias("changed")).transform(pinned)
    pos = state.positions(updated.where("changed").select("l", "r").toPandas())
    state.pairs = updated.drop("changed")
    state._roots = None  # a lower threshold can join clusters: computed again when needed
    if len(pos) == 0:
        return
    flipped = state.on_pairs(guard, pos)
    if len(flipped) != len(pos):
        raise LinkageError("the Spark and local domain thresholds disagree on a pair; this is "
                           "a bug in linkage, please report it.")


def _must_not_link(guard: MustNotLink, state: _SparkState) -> None:
    """Clusters holding two different values of a column: distinct values per cluster."""
    from pyspark.sql import functions as F

    codes = np.column_stack([column_codes(state.ctx.records, c) for c in guard.columns])
    rows = np.flatnonzero((codes >= 0).any(axis=1))
    names = [f"c{j}" for j in range(codes.shape[1])]
    values = state.frame({"row": rows.astype(np.int64),
                          **{name: codes[rows, j] for j, name in enumerate(names)}},
                         ", ".join(["row long", *(f"{name} long" for name in names)]))
    counts = [F.count_distinct(F.when(F.col(name) >= 0, F.col(name))).alias(name)
              for name in names]
    conflict = F.lit(False)
    for name in names:
        conflict = conflict | (F.col(name) > 1)
    bad = (state.roots().join(values, "row").groupBy("root").agg(*counts)
           .where(conflict).select("root"))
    state.split(guard, bad)


def _max_cluster_size(guard: MaxClusterSize, state: _SparkState) -> None:
    """Clusters above the size, by a window count over the cluster; split, or sent to
    review (a decision per record, no pair needed)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    size = F.count(F.lit(1)).over(Window.partitionBy("root"))
    big = (state.roots().withColumn("size", size).where(F.col("size") > F.lit(guard.size))
           .select("root").distinct())
    if guard.action == "review":
        state.on_clusters(guard, big)
    else:
        state.split(guard, big)


def _distinct_events(guard: DistinctEvents, state: _SparkState) -> None:
    """Clusters in which a business key occurs twice: only there can two records be events
    (or double loads) of one another, or separate events be chained."""
    from pyspark.sql import functions as F

    key = row_codes(state.ctx.records, guard.key)
    rows = np.flatnonzero(key >= 0)
    keys = state.frame({"row": rows.astype(np.int64), "k": key[rows]}, "row long, k long")
    repeated = (state.roots().join(keys, "row").groupBy("root", "k")
                .agg(F.count(F.lit(1)).alias("n")).where(F.col("n") >= 2)
                .select("root").distinct())
    state.split(guard, repeated)


def _conflicting_labels(guard: ConflictingLabels, state: _SparkState) -> None:
    """Groups (clusters, joined by equal normalized text when `text` is set) holding two
    labels: distinct labels per group, the groups found as connected components on Spark."""
    from pyspark.sql import functions as F

    ctx = state.ctx
    label = column_codes(ctx.records, guard.label)
    rows = np.flatnonzero(label >= 0)
    labels = state.frame({"row": rows.astype(np.int64), "v": label[rows]}, "row long, v long")
    roots = state.roots()
    if not guard.text:
        bad = (roots.join(labels, "row").groupBy("root")
               .agg(F.count_distinct("v").alias("n")).where(F.col("n") > 1).select("root"))
        state.on_clusters(guard, bad)
        return
    # Equal normalized texts, by the guard's own grouping of records that stand alone.
    texts = guard.groups(state.probe())
    has = np.flatnonzero(texts >= 0)
    _, first, inverse = np.unique(texts[has], return_index=True, return_inverse=True)
    text_root = has[first][inverse.reshape(-1)]
    other = has != text_root
    by_text = state.frame({"a": text_root[other].astype(np.int64),
                           "b": has[other].astype(np.int64)}, "a long, b long")
    by_cluster = roots.where(F.col("row") != F.col("root")).select(
        F.col("root").alias("a"), F.col("row").alias("b"))
    groups, _ = component_labels(by_text.unionByName(by_cluster))
    groups = groups.select(F.col("node").alias("row"), F.col("label").alias("group"))
    bad = (groups.join(labels, "row").groupBy("group")
           .agg(F.count_distinct("v").alias("n")).where(F.col("n") > 1).select("group"))
    # A group is whole clusters: its records' cluster roots name them.
    bad_roots = groups.join(bad, "group").join(roots, "row").select("root").distinct()
    state.on_clusters(guard, bad_roots)


def _keep_up_to(guard: KeepUpTo, state: _SparkState) -> None:
    """Clusters holding a protected record: every record of them gets the keep limit."""
    probe = state.probe()
    guard.apply(probe)  # decides, by its own code, which records are protected
    protected = np.array([d["record_id"] for d in probe.decisions], dtype=np.int64)
    if len(protected) == 0:
        return
    marked = state.frame({"row": protected}, "row long")
    state.on_clusters(guard, state.roots().join(marked, "row").select("root").distinct())


GUARDS: dict[type, Callable[..., None]] = {
    DomainThresholds: _domain_thresholds,
    MustNotLink: _must_not_link,
    MaxClusterSize: _max_cluster_size,
    DistinctEvents: _distinct_events,
    ConflictingLabels: _conflicting_labels,
    KeepUpTo: _keep_up_to,
}
