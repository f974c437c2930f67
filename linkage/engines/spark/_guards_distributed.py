"""Guards on the distributed route: each cluster's guards run on the executors, by the local
guards' own code, the records and matched pairs of whole clusters at a time.

The guards run per cluster (`must_not_link`, `max_cluster_size`, `distinct_events`, `keep_up_to`,
`conflicting_labels`) decide a cluster from its records and its matched pairs
alone, and only ever remove pairs, so a cluster never reaches past the connected component it
started in. Every
record of a component (of two or more records; every record where a `keep_up_to` guard may
mark one alone), and the component's matched pairs, go to a bucket (`_per_cluster`: the
component's smallest row modulo the bucket count); each bucket is one
`cogroup(...).applyInPandas` call that runs the guards, in `apply_guards`' order, on a
`GuardContext` of its components (rows ascending, pairs by (left, right): the tie-breaks of
the local code). Back come:

- the pairs a guard unmatched;
- its decisions, each with its place in the local order: the guard's turn, then for the guards
  that log one cluster per call (`must_not_link`, `max_cluster_size`) the smallest row of the
  records the call names and the record's place in it, for those that log all their records
  in one call, rows ascending (`keep_up_to`, `conflicting_labels`), the row; for
  `distinct_events` (two calls, each the records of distinct pairs by row, then those only
  chained to another event, by row) the call and part, then the row;
- each marked record's action, reason, review group and keep limit. Review groups are numbered
  per guard by their smallest row (as locally); a bucket names each group by its guard and
  smallest row, and Spark numbers them over the whole table;
- the clusters `max_cluster_size` (review) holds for the keeper (`GuardContext.held`): once the
  keeper has ranked, the local `settle` runs on them per bucket (`settle_held`).

guards.parquet is written by Spark in the local order; the summary's counts per decision are an
aggregate. Nothing reaches the driver. `conflicting_labels` with `text` groups records by
cluster or by equal normalized text: its buckets hold components widened by links between
records of the same text (`_same_text_links`), so each group is whole in one bucket.

`domain_thresholds` runs first and apart (`domain_matched`): it re-decides every scored pair
whose records share a listed value (a lower threshold can join clusters, so it cannot run per
cluster), as a matched flag `_dm` on the scored pairs that the per-cluster guards, pairs.parquet
and the summary then read; its decisions are made per batch by the guard's own text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage.engines.spark._frames import pinned, text
from linkage.engines.spark._per_cluster import BUCKET, BUCKET_RECORDS, ID, SIDE, records_of
from linkage.engines.spark._read import ROW
from linkage.guards import (
    ConflictingLabels,
    DistinctEvents,
    DomainThresholds,
    GuardContext,
    KeepUpTo,
    MaxClusterSize,
    MustNotLink,
)

DECISIONS = "guard string, record_id string, decision string, detail string"
_TEXT = ("guard", "record_id", "decision", "detail", "action", "reason", "grp")
_NUMBER = ("l", "r", "g", "k", "p", "lim")
_OUT = ("kind byte, l long, r long, guard string, record_id string, decision string, "
        "detail string, g long, k long, p long, action string, reason string, grp string, "
        "lim long")
# kinds of the rows a bucket gives back
PAIR, DECISION, STATE, HELD, GROUP = 0, 1, 2, 3, 4
SEPARATOR = "\x1f"  # between a review group's guard name and its smallest row


def refused_guard(guard) -> str | None:
    """Why the distributed route does not run `guard` yet, or None."""
    if isinstance(guard, MustNotLink | MaxClusterSize | KeepUpTo | DistinctEvents):
        return None
    if isinstance(guard, ConflictingLabels | DomainThresholds):
        return None
    return (f"the {guard.kind!r} guard is not run on the distributed route; it runs "
            "domain_thresholds, must_not_link, max_cluster_size, keep_up_to, distinct_events "
            "and conflicting_labels")


def guard_order(guards) -> list[int]:
    """`apply_guards`' order: by stage, then list order."""
    return sorted(range(len(guards)), key=lambda i: (guards[i].stage, i))


class _Logged(GuardContext):
    """A `GuardContext` that notes where each decision goes in the local order, and the
    smallest row of each review group a guard makes."""

    def log(self, guard, rows, decision, detail) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        super().log(guard, rows, decision, detail)
        run_rows = self.run_rows[rows]
        if isinstance(self.guard, DistinctEvents):
            # Two calls (preserved, then separate events), each the records of the distinct
            # pairs by row, then those only chained to another event, by row.
            extra = "distinct event: same " + ", ".join(self.guard.key) + " as another record"
            details = np.broadcast_to(np.asarray(detail, dtype=object), (len(rows),))
            for r, text_ in zip(run_rows.tolist(), details.tolist(), strict=True):
                self.keys.append((self.turn, 2 * self.calls + str(text_).startswith(extra), r))
            self.calls += 1
        elif self.by_row:  # one call, rows ascending: the row places it
            self.keys.extend((self.turn, int(r), 0) for r in run_rows.tolist())
        else:  # one call per cluster, clusters by their smallest row
            first = int(run_rows.min()) if len(rows) else 0
            self.keys.extend((self.turn, first, p) for p in range(len(rows)))

    def mark(self, rows, action, reason, group=None) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        if group is not None:
            groups = np.broadcast_to(np.asarray(group, dtype=object), (len(rows),))
            for name, row in zip(groups.tolist(), self.run_rows[rows].tolist(), strict=True):
                self.groups[name] = min(self.groups.get(name, row), row)
        super().mark(rows, action, reason, group)


def _frame(kind: int, size: int, **columns) -> pd.DataFrame:
    out = {"kind": np.full(size, kind, dtype=np.int8)}
    for name in _NUMBER:
        out[name] = np.asarray(columns.get(name, np.full(size, -1)), dtype=np.int64)
    for name in _TEXT:
        values = columns.get(name)
        out[name] = pd.Series(np.full(size, None, dtype=object) if values is None else
                              np.asarray(values, dtype=object), dtype=object)
    return pd.DataFrame(out)


def _placeholder(group: str, first: int) -> str:
    return group.rsplit(":", 1)[0] + SEPARATOR + str(first)


def _decision_rows(ctx: GuardContext, keys: np.ndarray, start: int = 0) -> pd.DataFrame:
    made = ctx.decisions[start:]
    return _frame(DECISION, len(made), **{
        key: [str(d[key]) if key == "record_id" else d[key] for d in made]
        for key in ("guard", "record_id", "decision", "detail")},
        g=keys[:, 0], k=keys[:, 1], p=keys[:, 2])


def _guard_call(guards, columns: list[str], threshold: float):
    order = guard_order(guards)

    def run(records: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
        if len(records) == 0:
            return _frame(PAIR, 0)
        records = records.sort_values(ROW, kind="stable").reset_index(drop=True)
        if len(pairs) == 0:
            pairs = pd.DataFrame({"l": np.zeros(0, np.int64), "r": np.zeros(0, np.int64),
                                  "w": np.zeros(0)})
        pairs = pairs.sort_values(["l", "r"], kind="stable").reset_index(drop=True)
        rows = records[ROW].to_numpy(dtype=np.int64)
        left = np.searchsorted(rows, pairs["l"].to_numpy(dtype=np.int64))
        right = np.searchsorted(rows, pairs["r"].to_numpy(dtype=np.int64))
        weight = pairs["w"].to_numpy(dtype=np.float64)
        ctx = _Logged(records[columns], records[ID].to_numpy(dtype=object),
                      records[SIDE].to_numpy(dtype=np.int8), left, right, weight,
                      np.ones(len(pairs), dtype=bool), threshold)
        ctx.run_rows, ctx.keys, ctx.groups = rows, [], {}
        for turn, i in enumerate(order):
            if isinstance(guards[i], DomainThresholds):  # over every pair (`domain_matched`)
                continue
            ctx.turn, ctx.guard, ctx.calls = turn, guards[i], 0
            ctx.by_row = isinstance(guards[i], KeepUpTo | ConflictingLabels)
            guards[i]._where = f"guards[{i}]"
            guards[i].apply(ctx)
        for _, held_rows, _, group in ctx.held:
            first = int(rows[held_rows].min())
            ctx.groups[group] = min(ctx.groups.get(group, first), first)
        named = {g: _placeholder(g, first) for g, first in ctx.groups.items()}
        gone = np.flatnonzero(~ctx.matched)
        keys = np.array(ctx.keys, dtype=np.int64).reshape(-1, 3)
        parts = [_frame(PAIR, len(gone), l=rows[left[gone]], r=rows[right[gone]]),
                 _decision_rows(ctx, keys)]
        group = np.array([None if pd.isna(g) else named[g] for g in ctx.review_group],
                         dtype=object)
        marked = np.flatnonzero(~pd.isna(ctx.action) | ~pd.isna(ctx.reason)
                                | ~pd.isna(group) | (ctx.keep_limit != 1))
        parts.append(_frame(STATE, len(marked), l=rows[marked], action=ctx.action[marked],
                            reason=ctx.reason[marked], grp=group[marked],
                            lim=ctx.keep_limit[marked]))
        for name, held_rows, size, held_group in ctx.held:
            first = int(rows[held_rows].min())
            turn = next(t for t, i in enumerate(order) if guards[i].guard_name == name)
            parts.append(_frame(HELD, len(held_rows), l=rows[held_rows], g=np.full(
                len(held_rows), turn), k=np.full(len(held_rows), first),
                lim=np.full(len(held_rows), size), guard=np.full(len(held_rows), name),
                grp=np.full(len(held_rows), named[held_group])))
        parts.append(_frame(GROUP, len(named), grp=list(named.values()),
                            k=list(ctx.groups.values())))
        return pd.concat(parts, ignore_index=True)

    return run


@dataclass
class Guarded:
    """What the guards did: the matched pairs left (l, r, w), the pairs they removed (l, r),
    their decisions in the local order (guard, record_id, decision, detail, then the order's
    keys `_o1`, `_o2`, `_o3`), the marked records (row, action, reason, grp, lim) and the
    clusters held for the keeper (row, g, k, lim, guard, grp), review groups numbered."""

    edges: object
    removed: object
    decisions: object
    states: object
    held: object


def check_guard_columns(guards, columns: list[str]) -> None:
    """Each guard's check of its columns (its local `InputError`), before Spark works."""
    empty = pd.DataFrame(columns=columns)
    for i, guard in enumerate(guards):
        guard.validate(empty, f"guards[{i}]")


def _domain_values(tables, id_name: str, guard: DomainThresholds):
    """(row, v, t) of each record whose `column` holds a value the guard lists: the value as
    the local guard reads it (`column_values`) and its threshold."""
    from pyspark.sql import functions as F

    from linkage.guards import column_values

    records, _ = records_of(tables, id_name, [guard.column])

    def run(batches):
        for batch in batches:
            values = column_values(batch, guard.column)
            limit = values.map(guard.thresholds).to_numpy(dtype=float, na_value=np.nan)
            listed = ~np.isnan(limit)
            yield pd.DataFrame({"row": batch[ROW].to_numpy(dtype=np.int64)[listed],
                                "v": pd.Series(values.to_numpy(dtype=object)[listed],
                                               dtype=object),
                                "t": limit[listed]})

    return (records.select(ROW, F.col(f"`{guard.column}`").alias(guard.column))
            .mapInPandas(run, "row long, v string, t double"))


def _domain_details(guard: DomainThresholds, turn: int, threshold: float, n: int):
    """mapInPandas over the pairs a domain threshold changed (l, r, w, t, v, now, id_l,
    id_r): the local guard's decisions, two per pair, with their place in its order (the left
    records matched, left unmatched, right matched, right unmatched; pairs by (l, r))."""

    def run(batches):
        for batch in batches:
            left = batch["l"].to_numpy(dtype=np.int64)
            right = batch["r"].to_numpy(dtype=np.int64)
            now = batch["now"].to_numpy(dtype=bool)
            parts = []
            for side, (me, other) in enumerate((("id_l", "id_r"), ("id_r", "id_l"))):
                detail = [guard.detail(o, w, m, t, v, threshold) for o, w, m, t, v in zip(
                    batch[other].tolist(), batch["w"].tolist(), now.tolist(),
                    batch["t"].tolist(), batch["v"].tolist(), strict=True)]
                parts.append(pd.DataFrame({  # text as object: pyspark's arrow takes it
                    "guard": pd.Series([guard.guard_name] * len(batch), dtype=object),
                    "record_id": pd.Series([str(i) for i in batch[me].tolist()], dtype=object),
                    "decision": pd.Series(np.where(now, "matched", "unmatched"), dtype=object),
                    "detail": pd.Series(detail, dtype=object),
                    "_o1": np.full(len(batch), turn, dtype=np.int64),
                    "_o2": 2 * side + (~now).astype(np.int64),
                    "_o3": left * n + right}))
            yield pd.concat(parts, ignore_index=True)

    return run


def domain_matched(guards, tables, scored, ids, matched, id_name: str, n: int,
                   threshold: float):
    """The `domain_thresholds` guards (the first stage: they re-decide every scored pair,
    even one a stage proposed, and a lower threshold can join clusters) over all of
    `scored`, in the local order: `scored` with `_dm` (the pair is matched after them;
    `matched`: the Spark condition before), and their decisions (None without such a guard).
    """
    from pyspark.sql import functions as F

    order = guard_order(guards)
    frame, decisions = scored.withColumn("_dm", matched), None
    for turn, i in enumerate(order):
        guard = guards[i]
        if not isinstance(guard, DomainThresholds):
            continue
        values = _domain_values(tables, id_name, guard)
        joined = (frame.join(values.select(F.col("row").alias("l"), F.col("v").alias("_v"),
                                           F.col("t").alias("_t")), "l", "left")
                  .join(values.select(F.col("row").alias("r"), F.col("v").alias("_vr")), "r",
                        "left"))
        inside = F.col("_v").isNotNull() & (F.col("_v") == F.col("_vr"))
        now = F.when(inside, F.col("match_weight") >= F.col("_t")).otherwise(F.col("_dm"))
        joined = joined.withColumn("_now", now).transform(pinned)
        changed = (joined.where(F.col("_now") != F.col("_dm"))
                   .select("l", "r", F.col("match_weight").cast("double").alias("w"),
                           F.col("_t").alias("t"), F.col("_v").alias("v"),
                           F.col("_now").alias("now"))
                   .join(ids.select(F.col("row").alias("l"), F.col("_id").alias("id_l")), "l")
                   .join(ids.select(F.col("row").alias("r"), F.col("_id").alias("id_r")), "r"))
        made = changed.mapInPandas(_domain_details(guard, turn, threshold, n),
                                   DECISIONS + ", _o1 long, _o2 long, _o3 long")
        decisions = made if decisions is None else decisions.unionByName(made)
        frame = joined.withColumn("_dm", F.col("_now")).drop("_v", "_t", "_vr", "_now")
    return frame, decisions


def guard_edges(spark, guards, tables, edges, id_name: str, n: int, partitions: int,
                threshold: float, decided=None) -> Guarded:
    """Run `guards` over the clusters of `edges` (matched pairs l, r, w) on the executors.
    `decided`: the decisions `domain_matched` made before, which go first."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from linkage.engines.spark._graph import component_roots

    per_cluster = [g for g in guards if not isinstance(g, DomainThresholds)]
    if per_cluster:
        wanted = sorted({c for g in per_cluster for cols in g.input_columns().values()
                         for c in cols})
        records, columns = records_of(tables, id_name, wanted)
        links = edges.select(F.col("l").alias("a"), F.col("r").alias("b"))
        for guard in guards:
            if isinstance(guard, ConflictingLabels) and guard.text:
                links = links.unionByName(_same_text_links(records, guard))
        roots = component_roots(spark, links, n)
        members = roots
        if not any(isinstance(g, KeepUpTo) for g in guards):  # a lone record: no decision
            sizes = roots.groupBy("root").agg(F.count(F.lit(1)).alias("_size"))
            members = roots.join(sizes.where(F.col("_size") > 1), "root")
        buckets = max(partitions, -(-n // BUCKET_RECORDS), 1)
        bucket = F.pmod(F.col("root"), F.lit(buckets)).alias(BUCKET)
        grouped_records = (records.join(members.select(F.col("row").alias(ROW), bucket), ROW)
                           .groupBy(BUCKET))
        of_left = roots.select(F.col("row").alias("l"), "root")
        grouped_pairs = edges.join(of_left, "l").select("l", "r", "w", bucket).groupBy(BUCKET)
        out = (grouped_records.cogroup(grouped_pairs)
               .applyInPandas(_guard_call(guards, columns, threshold), _OUT).transform(pinned))
    else:  # only domain thresholds: nothing per cluster
        out = spark.createDataFrame([], _OUT)
    removed = out.where(F.col("kind") == PAIR).select("l", "r")
    decisions = out.where(F.col("kind") == DECISION).select(
        "guard", "record_id", "decision", "detail", F.col("g").alias("_o1"),
        F.col("k").alias("_o2"), F.col("p").alias("_o3"))
    if decided is not None:
        decisions = decided.unionByName(decisions).transform(pinned)
    # Review groups numbered per guard by their smallest row, over the whole table.
    name = F.split(F.col("grp"), SEPARATOR).getItem(0)
    numbered = (out.where(F.col("kind") == GROUP).select("grp", "k")
                .withColumn("_n", F.row_number().over(Window.partitionBy(name).orderBy("k")))
                .select(F.col("grp").alias("_grp"),
                        F.concat(name, F.lit(":"), F.col("_n").cast("string")).alias("_new")))

    def renamed(frame):
        return (frame.join(numbered, frame["grp"] == numbered["_grp"], "left")
                .withColumn("grp", F.coalesce("_new", "grp")).drop("_grp", "_new"))

    states = renamed(out.where(F.col("kind") == STATE).select(
        F.col("l").alias("row"), "action", "reason", "grp", "lim")).transform(pinned)
    held = renamed(out.where(F.col("kind") == HELD).select(
        F.col("l").alias("row"), "g", "k", "lim", "guard", "grp")).transform(pinned)
    kept = edges.join(removed, ["l", "r"], "left_anti").transform(pinned)
    return Guarded(kept, removed, decisions, states, held)


def _same_text_links(records, guard: ConflictingLabels):
    """Links (a, b) from each record to the first record of the same normalized text (the
    guard's own `text_keys`): `conflicting_labels` with `text` groups records by cluster or by
    equal text, so the components the buckets hold are widened by these links and each group
    lies whole in one bucket."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def keys(batches):
        for batch in batches:
            yield pd.DataFrame({ROW: batch[ROW].to_numpy(dtype=np.int64),
                                "_key": guard.text_keys(batch).astype(object).where(
                                    lambda k: k.notna(), None)})

    keyed = (records.select(ROW, *guard.text).mapInPandas(keys, f"{ROW} long, _key string")
             .where(F.col("_key").isNotNull()))
    first = F.min(ROW).over(Window.partitionBy("_key"))
    return (keyed.select(F.col(ROW).alias("a"), first.alias("b"))
            .where(F.col("a") != F.col("b")))


def limited_ranks(ranks, guarded: Guarded, k: int):
    """`ranks` (row, cluster_id, rank, representative, kept) with `kept` up to the largest
    keep limit a guard gave a record of the cluster (at least `k`), as the local keeper's
    `np.maximum.at` over the cluster ids."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    limit = F.coalesce(F.col("lim"), F.lit(1)).cast("long")
    keeps = F.greatest(F.lit(int(k)).cast("long"),
                       F.max(limit).over(Window.partitionBy("cluster_id")))
    return (ranks.join(guarded.states.select("row", "lim"), "row", "left")
            .withColumn("kept", F.col("rank") < keeps).drop("lim"))


def _settle_call(mode: str):
    """applyInPandas: the local `GuardContext.settle` on held clusters, one at a time in the
    local order, with the keeper's answer; their records' new state and the decisions."""

    def run(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.sort_values(["g", "k", "row"], kind="stable").reset_index(drop=True)
        rows, at = np.unique(frame["row"].to_numpy(dtype=np.int64), return_index=True)
        first = frame.iloc[at].reset_index(drop=True)
        m = len(rows)
        ctx = GuardContext(pd.DataFrame(index=range(m)), first["_id"].to_numpy(dtype=object),
                           None, np.zeros(0), np.zeros(0), np.zeros(0),
                           np.zeros(0, dtype=bool), 0.0, action=text(first["action"]),
                           reason=text(first["reason"]), review_group=text(first["state_grp"]))
        kept = first["kept"].to_numpy(dtype=bool)
        keys = []
        for (g, k), part in frame.groupby(["g", "k"], sort=True):
            start = len(ctx.decisions)
            ctx.held = [(str(part["guard"].iloc[0]), np.searchsorted(rows, part["row"].to_numpy(
                dtype=np.int64)), int(part["lim"].iloc[0]), str(part["grp"].iloc[0]))]
            ctx.settle(kept if mode == "dedupe" else None)
            keys += [(g, k, p) for p in range(len(ctx.decisions) - start)]
        keys = np.array(keys, dtype=np.int64).reshape(-1, 3)
        return pd.concat([
            _frame(STATE, m, l=rows, action=ctx.action, reason=ctx.reason,
                   grp=ctx.review_group),
            _decision_rows(ctx, keys)], ignore_index=True)

    return run


def settle_held(spark, guarded: Guarded, ranks, ids, n: int, partitions: int, mode: str):
    """`guarded` after the keeper: the held clusters settled (`_settle_call`), their records'
    state replaced and the decisions added (after the guards' and the splits')."""
    from pyspark.sql import functions as F

    held = guarded.held
    buckets = max(partitions, -(-n // BUCKET_RECORDS), 1)
    states = guarded.states.select("row", "action", "reason", F.col("grp").alias("state_grp"))
    frame = (held.join(ranks.select("row", "kept"), "row")
             .join(ids.select("row", "_id"), "row")
             .join(states, "row", "left")
             .withColumn(BUCKET, F.pmod(F.col("k"), F.lit(buckets))))
    out = frame.groupBy(BUCKET).applyInPandas(_settle_call(mode), _OUT).transform(pinned)
    settled = out.where(F.col("kind") == STATE).select(
        F.col("l").alias("row"), "action", "reason", "grp")
    limits = guarded.states.select("row", "lim")
    states = (guarded.states.join(settled.select("row"), "row", "left_anti")
              .unionByName(settled.join(limits, "row", "left")))
    decisions = guarded.decisions.unionByName(out.where(F.col("kind") == DECISION).select(
        "guard", "record_id", "decision", "detail",
        (F.col("g") + F.lit(2 << 40)).alias("_o1"), F.col("k").alias("_o2"),
        F.col("p").alias("_o3")))
    return Guarded(guarded.edges, guarded.removed, decisions, states.transform(pinned), None)


def guard_summary(rules, counts: dict) -> dict:
    """`linkage.run.summary.guard_counts` from counts per (guard, decision)."""
    return {g.guard_name: {d: counts.get(g.guard_name, {})[d]
                           for d in sorted(counts.get(g.guard_name, {}))}
            for g in rules.guards}
