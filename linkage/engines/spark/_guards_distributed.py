"""Guards on the distributed route: each cluster's guards run on the executors, by the local
guards' own code, the records and matched pairs of whole clusters at a time.

The edge guards that act inside one cluster (`must_not_link`, `max_cluster_size` with `action:
split`) decide a cluster from its records and its matched pairs alone, and only ever remove
pairs, so a cluster never reaches past the connected component it started in. Every record of
a component of two or more records, and the component's matched pairs, go to a bucket
(`_per_cluster`: the component's smallest row modulo the bucket count); each bucket is one
`cogroup(...).applyInPandas` call that runs the guards, in `apply_guards`' order, on a
`GuardContext` of its components (rows ascending, pairs by (left, right): the tie-breaks of
the local code). Back come the pairs a guard unmatched and its decisions, each with its place
in the local order: the guard's turn, then the smallest row of the records one `log` call
names (each of these guards logs one cluster per call, in the order of their smallest rows),
then the record's place in that call. guards.parquet is written by Spark in that order; the
summary's counts per decision are an aggregate. Nothing reaches the driver.

The guards that mark records (`distinct_events`, `conflicting_labels`, `keep_up_to`,
`max_cluster_size` with `action: review`) and `domain_thresholds` (which can join clusters)
are refused on this route for now (`refused_guard`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage.engines.spark._per_cluster import BUCKET, BUCKET_RECORDS, ID, SIDE, records_of
from linkage.engines.spark._read import ROW
from linkage.guards import GuardContext, MaxClusterSize, MustNotLink

DECISIONS = "guard string, record_id string, decision string, detail string"
_OUT = ("kind byte, l long, r long, guard string, record_id string, decision string, "
        "detail string, g long, k long, p long")


def refused_guard(guard) -> str | None:
    """Why the distributed route does not run `guard` yet, or None."""
    if isinstance(guard, MustNotLink):
        return None
    if isinstance(guard, MaxClusterSize) and guard.action == "split":
        return None
    what = (f"`max_cluster_size` with `action: {guard.action}`"
            if isinstance(guard, MaxClusterSize) else f"the {guard.kind!r} guard")
    return (f"{what} marks records or joins clusters; the distributed route runs the edge "
            "guards must_not_link and max_cluster_size (action: split)")


def guard_order(guards) -> list[int]:
    """`apply_guards`' order: by stage, then list order."""
    return sorted(range(len(guards)), key=lambda i: (guards[i].stage, i))


class _Logged(GuardContext):
    """A `GuardContext` that notes where each decision goes in the local order."""

    def log(self, guard, rows, decision, detail) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        super().log(guard, rows, decision, detail)
        first = int(self.run_rows[rows].min()) if len(rows) else 0
        self.keys.extend((self.turn, first, p) for p in range(len(rows)))


def _guard_call(guards, columns: list[str], threshold: float):
    order = guard_order(guards)

    def run(records: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
        empty = pd.DataFrame({c: pd.Series(dtype=object) for c in
                              ("kind", "l", "r", "guard", "record_id", "decision", "detail",
                               "g", "k", "p")})
        if len(records) == 0 or len(pairs) == 0:
            return empty
        records = records.sort_values(ROW, kind="stable").reset_index(drop=True)
        pairs = pairs.sort_values(["l", "r"], kind="stable").reset_index(drop=True)
        rows = records[ROW].to_numpy(dtype=np.int64)
        left = np.searchsorted(rows, pairs["l"].to_numpy(dtype=np.int64))
        right = np.searchsorted(rows, pairs["r"].to_numpy(dtype=np.int64))
        weight = pairs["w"].to_numpy(dtype=np.float64)
        ctx = _Logged(records[columns], records[ID].to_numpy(dtype=object),
                      records[SIDE].to_numpy(dtype=np.int8), left, right, weight,
                      np.ones(len(pairs), dtype=bool), threshold)
        ctx.run_rows, ctx.keys = rows, []
        for turn, i in enumerate(order):
            ctx.turn = turn
            guards[i]._where = f"guards[{i}]"
            guards[i].apply(ctx)
        gone = np.flatnonzero(~ctx.matched)
        keys = np.array(ctx.keys, dtype=np.int64).reshape(-1, 3)
        made, cut = len(ctx.decisions), len(gone)

        def text(key: str) -> np.ndarray:
            values = np.full(cut + made, None, dtype=object)
            values[cut:] = [d[key] if key != "record_id" else str(d[key])
                            for d in ctx.decisions]
            return values

        def number(pair_values: np.ndarray, decision_values: np.ndarray) -> np.ndarray:
            return np.concatenate([np.asarray(pair_values, dtype=np.int64),
                                   np.asarray(decision_values, dtype=np.int64)])

        none = np.full(made, -1, dtype=np.int64)
        return pd.DataFrame({
            "kind": np.concatenate([np.zeros(cut, np.int8), np.ones(made, np.int8)]),
            "l": number(rows[left[gone]], none), "r": number(rows[right[gone]], none),
            **{key: pd.Series(text(key), dtype=object)
               for key in ("guard", "record_id", "decision", "detail")},
            "g": number(np.full(cut, -1), keys[:, 0]), "k": number(np.full(cut, -1), keys[:, 1]),
            "p": number(np.full(cut, -1), keys[:, 2])})

    return run


@dataclass
class Guarded:
    """What the guards did: the matched pairs left (l, r, w), the pairs they removed (l, r),
    their decisions in the local order (guard, record_id, decision, detail, then the order's
    keys `_o1`, `_o2`, `_o3`) and the count of each (guard, decision)."""

    edges: object
    removed: object
    decisions: object
    counts: dict


def check_guard_columns(guards, columns: list[str]) -> None:
    """Each guard's check of its columns (its local `InputError`), before Spark works."""
    empty = pd.DataFrame(columns=columns)
    for i, guard in enumerate(guards):
        guard.validate(empty, f"guards[{i}]")


def guard_edges(spark, guards, tables, edges, id_name: str, n: int, partitions: int,
                threshold: float) -> Guarded:
    """Run `guards` over the clusters of `edges` (matched pairs l, r, w) on the executors."""
    from pyspark.sql import functions as F

    from linkage.engines.spark._graph import component_roots

    wanted = sorted({c for g in guards for cols in g.input_columns().values() for c in cols})
    records, columns = records_of(tables, id_name, wanted)
    roots = component_roots(spark, edges.select(F.col("l").alias("a"), F.col("r").alias("b")),
                            n)
    sizes = roots.groupBy("root").agg(F.count(F.lit(1)).alias("_size"))
    members = roots.join(sizes.where(F.col("_size") > 1), "root")
    buckets = max(partitions, -(-n // BUCKET_RECORDS), 1)
    bucket = F.pmod(F.col("root"), F.lit(buckets)).alias(BUCKET)
    grouped_records = (records.join(members.select(F.col("row").alias(ROW), bucket), ROW)
                       .groupBy(BUCKET))
    of_left = roots.select(F.col("row").alias("l"), "root")
    grouped_pairs = edges.join(of_left, "l").select("l", "r", "w", bucket).groupBy(BUCKET)
    out = (grouped_records.cogroup(grouped_pairs)
           .applyInPandas(_guard_call(guards, columns, threshold), _OUT).localCheckpoint())
    removed = out.where(F.col("kind") == 0).select("l", "r")
    decisions = out.where(F.col("kind") == 1).select(
        "guard", "record_id", "decision", "detail", F.col("g").alias("_o1"),
        F.col("k").alias("_o2"), F.col("p").alias("_o3"))
    counts = {}
    for row in decisions.groupBy("guard", "decision").count().collect():
        counts.setdefault(row["guard"], {})[row["decision"]] = int(row["count"])
    kept = edges.join(removed, ["l", "r"], "left_anti").localCheckpoint()
    return Guarded(kept, removed, decisions, counts)


def guard_summary(rules, counts: dict) -> dict:
    """`linkage.run.summary.guard_counts` from counts per (guard, decision)."""
    return {g.guard_name: {d: counts.get(g.guard_name, {})[d]
                           for d in sorted(counts.get(g.guard_name, {}))}
            for g in rules.guards}
