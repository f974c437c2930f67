"""Blocking on Spark: keys per record by the local key functions, then joins.

Key blockers: every record's keys (`KeyPart.compute`, the local code) are exploded to
(key, row) and joined with themselves; a pair proposed by several blockers is kept once with
the OR of their bits, as the local `block` does. Oversized blocks are sub-blocked as the local
`KeyBlocker.propose` does (same sub parts, window, order by (value, row), in a link equal
values taking turns between the tables, same warning), by a row number over each block and a
join on row-number distance (in a link their pairs across tables are counted for the budget).
The budget (`max_pairs`) is checked on the same estimates before any pair is made. Sorted
neighbourhood: consecutive positions in the sort-key order (ties as in sub-blocking), each
record paired with the next `window - 1`; in a link the pairs across tables are counted for
the budget, as the local engine counts them on its order. Range: each record's key and bucket
of the range's width, joined with the records of its own bucket and the two beside it, then
checked pair by pair (`_range_pairs`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage.blocking import (
    BandJoin,
    KeyJoin,
    NeighbourJoin,
    RangeJoin,
    SkippedBlock,
    WindowJoin,
    blocker_names,
    budget_message,
    oversized_message,
    sub_window,
)
from linkage.engines.spark._bands import band_buckets, band_pairs
from linkage.engines.spark._frames import consecutive_positions, pinned, text
from linkage.engines.spark._normalize import local_order
from linkage.engines.spark._vectors import (
    neighbour_pairs,
    neighbour_pairs_distributed,
    present_records,
)
from linkage.errors import BudgetError, LinkageWarning, user_stacklevel
from linkage.pipeline import identity_columns
from linkage.run.stages import stage_bit
from linkage.settings import Rules


@dataclass
class BlockedPairs:
    """The candidate pairs (a cached DataFrame of l, r, mask) and the local engine's stats."""

    pairs: object
    count: int
    estimated: dict[str, int]
    proposed: dict[str, int]
    skipped: list[SkippedBlock]


def _encode(parts: list[pd.Series]) -> pd.Series:
    """One join key from the parts of a compound key; length prefixes keep ("a|", "b") and
    ("a", "|b") apart."""
    out = None
    for part in parts:
        piece = part.str.len().astype(str) + ":" + part
        out = piece if out is None else out + piece
    return out


def _decode(key: str) -> list[str]:
    values = []
    while key:
        length, rest = key.split(":", 1)
        values.append(rest[: int(length)])
        key = rest[int(length):]
    return values


def _parts_of(parts: list, batch: pd.DataFrame, names: dict[str, str], every: bool):
    """(each part's values as the local `KeyPart.compute` gives them, whether a record holds
    every part (`every`) or any of them)."""
    values = [pd.Series(p.compute(text(batch[names[p.column]])), dtype=object) for p in parts]
    present = np.full(len(batch), every or not values, dtype=bool)
    for v in values:
        held = v.notna().to_numpy()
        present = present & held if every else present | held
    return values, present


def _key_batches(specs: list[tuple[int, int, list]], names: dict[str, str]):
    """mapInPandas: (key_id, key, row, source, mask) for every present key of every record."""

    def run(batches):
        for batch in batches:
            rows = batch["row"].to_numpy()
            sources = batch["source"].to_numpy()
            frames = []
            for key_id, bit, parts in specs:
                values, present = _parts_of(parts, batch, names, every=True)
                keys = _encode([v[present].astype(str) for v in values])
                frames.append(pd.DataFrame({
                    "key_id": np.full(int(present.sum()), key_id, dtype=np.int32),
                    # object, not pandas 3's inferred `str`: pyspark's Arrow writer needs it
                    "key": pd.Series(keys.to_numpy(dtype=object), dtype=object),
                    "row": rows[present], "source": sources[present],
                    "mask": np.full(int(present.sum()), 1 << bit, dtype=np.int64),
                }))
            yield pd.concat(frames, ignore_index=True)

    return run


def _sort_batches(plan: WindowJoin, names: dict[str, str]):
    """mapInPandas: (text, row, source) of the records with any part of the sort key, the
    text built as `SortedNeighbourhood._order` builds it."""

    def run(batches):
        for batch in batches:
            values, present = _parts_of(plan.parts, batch, names, every=False)
            joined = values[0].fillna("")
            for v in values[1:]:
                joined = joined + "\x1f" + v.fillna("")
            yield pd.DataFrame({"text": pd.Series(joined.to_numpy(dtype=object)[present],
                                                  dtype=object),
                                "row": batch["row"].to_numpy()[present],
                                "source": batch["source"].to_numpy()[present]})

    return run


def _part_batches(parts: list, names: dict[str, str]):
    """mapInPandas: (part_id, value, row) for every record with a value of each sub part, the
    value as text as `sort_ranks` orders it."""

    def run(batches):
        for batch in batches:
            rows = batch["row"].to_numpy()
            frames = []
            for part_id, part in enumerate(parts):
                v = pd.Series(part.compute(text(batch[names[part.column]])), dtype=object)
                present = v.notna().to_numpy()
                frames.append(pd.DataFrame({
                    "part_id": np.full(int(present.sum()), part_id, dtype=np.int32),
                    "value": pd.Series(v[present].astype(str).to_numpy(dtype=object),
                                       dtype=object),
                    "row": rows[present]}))
            yield pd.concat(frames, ignore_index=True)

    return run


class _Columns:
    """What `KeyJoin.sub_parts` reads of the data: the column names, in the local order."""

    def __init__(self, rules: Rules):
        self.key_columns = dict.fromkeys(local_order(rules))


def _sub_pairs(work, members, big_keys, subs, names, link):
    """The local sub-blocking of oversized blocks on Spark: inside each oversized block, the
    records with a value of a sub part, numbered by (value, row) as `_neighbours` sorts them,
    each paired with the next `window - 1`. `subs`: key_id -> (bit, sub parts, window)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = work.sparkSession
    parts, plan = [], []  # distinct sub parts; (key_id, part_id, bit, window)
    for key_id, (bit, sub, window) in subs.items():
        for part in sub:
            if str(part) not in [str(q) for q in parts]:
                parts.append(part)
            plan.append((key_id, [str(q) for q in parts].index(str(part)), 1 << bit, window))
    if not plan:
        return None
    values = work.mapInPandas(_part_batches(parts, names), "part_id int, value string, row long")
    chosen = spark.createDataFrame(pd.DataFrame(plan, columns=["key_id", "part_id", "mask",
                                                               "window"]),
                                   "key_id int, part_id int, mask long, window int")
    inside = members.join(big_keys, ["key_id", "key"]).select("key_id", "key", "row", "source")
    ranked = inside.join(chosen, "key_id").join(values, ["part_id", "row"])
    order = ["value", "row"]
    if link:  # equal values: the tables take turns, as the local `alternated` orders them
        ranked = ranked.withColumn("turn", F.row_number().over(
            Window.partitionBy("key_id", "key", "part_id", "value", "source").orderBy("row")))
        order = ["value", "turn", "source"]
    ranked = ranked.withColumn("pos", F.row_number().over(
        Window.partitionBy("key_id", "key", "part_id").orderBy(*order)))
    ahead = ranked.select(
        "key_id", "key", "part_id", F.col("row").alias("a"), F.col("source").alias("sa"),
        "mask", F.explode(F.sequence(F.lit(1), F.col("window") - 1)).alias("k"), "pos",
    ).withColumn("target", F.col("pos") + F.col("k"))
    behind = ranked.select("key_id", "key", "part_id", F.col("pos").alias("target"),
                           F.col("row").alias("b"), F.col("source").alias("sb"))
    pairs = ahead.join(behind, ["key_id", "key", "part_id", "target"])
    if link:
        pairs = pairs.where(F.col("sa") != F.col("sb"))
    return pairs.select(F.least("a", "b").alias("l"), F.greatest("a", "b").alias("r"),
                        "mask", "key_id")


def _budget_error(rules: Rules, estimated: dict[str, int], per_key: dict[tuple[int, int], int],
                  total: int) -> BudgetError:
    """The local `block`'s error, word for word (`budget_message`)."""
    names = blocker_names(rules.blocking)
    index = names.index(max(estimated, key=lambda k: estimated[k]))
    plan = rules.blocking[index].join_plan()
    keys = ([per_key.get((index, k), 0) for k in range(len(plan.keys))]
            if isinstance(plan, KeyJoin) else None)
    return BudgetError(budget_message(rules.blocking, estimated, total, rules.max_pairs, keys))


def _sorted_pairs(spark, work, plan: WindowJoin, bit, names, link, partitions):
    """The pairs of one sorted-neighbourhood plan, and how many it gives: in a dedupe every
    neighbour of the records it sorted, in a link those across tables (counted)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    # Checkpointed: range partitioning reads its input twice (to sample, then to move it).
    keyed = work.mapInPandas(_sort_batches(plan, names), "text string, row long, "
                             "source byte").transform(pinned)
    order = ["text", "row"]
    if link:  # equal keys: the tables take turns, as the local `alternated` orders them
        keyed = keyed.withColumn("turn", F.row_number().over(
            Window.partitionBy("text", "source").orderBy("row")))
        order = ["text", "turn", "source"]
    placed, sorted_count = consecutive_positions(keyed, order, partitions)
    placed = placed.select("pos", "row", "source")
    ahead = placed.select(
        F.col("row").alias("a"), F.col("source").alias("sa"),
        F.explode(F.sequence(F.lit(1), F.lit(plan.window - 1))).alias("k"),
        F.col("pos"),
    ).withColumn("target", F.col("pos") + F.col("k"))
    behind = placed.select(F.col("pos").alias("target"), F.col("row").alias("b"),
                           F.col("source").alias("sb"))
    pairs = ahead.join(behind, "target")
    if link:
        pairs = pairs.where(F.col("sa") != F.col("sb"))
    pairs = pairs.select(F.least("a", "b").alias("l"), F.greatest("a", "b").alias("r"),
                         F.lit(1 << bit).cast("long").alias("mask"))
    if link:  # at most sorted_count * (window - 1): counted before the budget is checked,
        pairs = pairs.transform(pinned, lazy=True)  # and kept by the count for the union
        return pairs, int(pairs.count())
    return pairs, int(sum(max(sorted_count - k, 0) for k in range(1, plan.window)))


def _range_batches(plan: RangeJoin, names: dict[str, str]):
    """mapInPandas: (key, bucket, value, row, source) of the records with every part of the
    key and a value in the range's axis (`RangeJoin.prepared`, the local code)."""

    def run(batches):
        for batch in batches:
            values, present = _parts_of(plan.parts, batch, names, every=True)
            codes, axis, width = plan.prepared(np.where(present, 0, -1).astype(np.int64),
                                               text(batch[names[plan.column]]))
            ok = (codes >= 0) & ~np.isnan(axis)
            key = pd.Series(codes[ok].astype(str), dtype=object)
            if values:
                key = _encode([v[ok].astype(str) for v in values]).reset_index(drop=True) + (
                    "|" + key)
            size = width * (1 + 2 * plan.slack)  # wider than any pair's distance: buckets next
            bucket = np.floor(axis[ok] / size) if size > 0 else axis[ok]  # to each other
            yield pd.DataFrame({"key": pd.Series(key.to_numpy(dtype=object), dtype=object),
                                "bucket": bucket.astype(np.float64),
                                "value": axis[ok].astype(np.float64),
                                "row": batch["row"].to_numpy()[ok],
                                "source": batch["source"].to_numpy()[ok]})

    return run


def _range_pairs(work, plan: RangeJoin, bit, names, link):
    """The pairs of one range plan and how many there are: records of one key in the same
    bucket or in buckets next to each other, within the width (and `slack`, as locally); in a
    dedupe l < r, in a link left with right. Counted (the local estimate is exact)."""
    from pyspark.sql import functions as F

    width = plan.prepared(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object))[2]
    keyed = work.mapInPandas(_range_batches(plan, names), "key string, bucket double, "
                             "value double, row long, source byte").transform(pinned)
    near = keyed.select("key", F.explode(F.array(F.col("bucket") - 1, F.col("bucket"),
                                                 F.col("bucket") + 1)).alias("bucket"),
                        F.col("row").alias("b"), F.col("source").alias("sb"),
                        F.col("value").alias("vb"))
    pairs = keyed.select("key", "bucket", F.col("row").alias("a"), F.col("source").alias("sa"),
                         F.col("value").alias("va")).join(near, ["key", "bucket"])
    pairs = pairs.where(F.abs(F.col("va") - F.col("vb")) <= F.lit(width * (1 + plan.slack)))
    pairs = pairs.where((F.col("sa") == 0) & (F.col("sb") == 1) if link
                        else F.col("a") < F.col("b"))
    pairs = pairs.select(F.least("a", "b").alias("l"), F.greatest("a", "b").alias("r"),
                         F.lit(1 << bit).cast("long").alias("mask"))
    pairs = pairs.transform(pinned, lazy=True)  # kept by the count for the union
    return pairs, int(pairs.count())


def copies(work, rules: Rules, names: dict[str, str]):
    """The local `copies_star` on Spark: (first member `l`, copy `r`) of the records equal on
    every `identity_columns` value ("" and null alike), rows with none of them left alone;
    and the records left to block (the first members and those without copies)."""
    from functools import reduce

    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keys = [F.when(F.col(names[c]) != "", F.col(names[c])).alias(f"k{i}")
            for i, c in enumerate(identity_columns(rules))]
    if not keys:
        return None, work
    keyed = work.select("row", *keys)
    present = reduce(lambda a, b: a | b, [F.col(f"k{i}").isNotNull() for i in range(len(keys))])
    first = F.min("row").over(Window.partitionBy(*[f"k{i}" for i in range(len(keys))]))
    star = (keyed.where(present).withColumn("l", first).where(F.col("l") != F.col("row"))
            .select("l", F.col("row").alias("r")).cache())
    rest = work.join(star.select(F.col("r").alias("row")), "row", "left_anti")
    return star, rest


def block(spark, work, rules: Rules, names: dict[str, str], link: bool,
          partitions: int, stars: dict | None = None, gather: bool = True) -> BlockedPairs:
    """Every blocker's pairs, their union with bit masks, and the local engine's stats;
    `stars`: the pairs (l, r) of the stages before and beside blocking (url, exact, copies,
    semantic) by stage name, each added with its own bit. `gather`: whether the embedding
    blocker's vectors may go to the driver (the driver route) or not (`_vectors`)."""
    from pyspark.sql import functions as F

    blocker_list = list(rules.blocking)
    labels = blocker_names(blocker_list)
    # What each blocker is as joins; `check_supported` refused those that are not.
    plans = [blocker.join_plan() for blocker in blocker_list]
    limit = rules.max_block_size
    specs = []  # (key_id, blocker index, parts): one per key of every key blocker
    key_index = {}  # key_id -> the key's index in its blocker's `keys`, for messages
    for b, plan in enumerate(plans):
        if isinstance(plan, KeyJoin):
            for k, parts in enumerate(plan.keys):
                key_index[len(specs)] = k
                specs.append((len(specs), b, parts))

    estimated = {name: 0 for name in labels}
    per_key: dict[tuple[int, int], int] = {}
    skipped: list[SkippedBlock] = []
    members = blocks = sub_pairs = None
    if specs:
        members = work.mapInPandas(_key_batches(specs, names), "key_id int, key string, "
                                   "row long, source byte, mask long").cache()
        blocks = members.groupBy("key_id", "key").agg(
            F.count(F.lit(1)).alias("size"), F.min("row").alias("first"),
            F.sum((F.col("source") == 0).cast("long")).alias("n_left"),
            F.sum((F.col("source") == 1).cast("long")).alias("n_right"),
        ).cache()
        small = F.col("size") <= limit
        pairs_in_block = (F.col("n_left") * F.col("n_right") if link
                          else F.expr("size * (size - 1) div 2"))
        for row in blocks.groupBy("key_id").agg(
                F.sum(F.when(small, pairs_in_block).otherwise(0)).cast("long").alias("pairs")
        ).collect():
            b = specs[row["key_id"]][1]
            per_key[(b, key_index[row["key_id"]])] = int(row["pairs"])
            estimated[labels[b]] += int(row["pairs"])
        big = blocks.where(~small).select("key_id", "key", "size", "first").collect()
        subs = {}  # key_id -> (blocker index, sub parts, window) of keys with oversized blocks
        for key_id in sorted({row["key_id"] for row in big}):
            b, parts = specs[key_id][1], specs[key_id][2]
            sub = plans[b].sub_parts(parts, _Columns(rules))
            subs[key_id] = (b, sub, sub_window(len(sub)))
        for row in sorted(big, key=lambda r: (r["key_id"], r["first"])):
            b, parts = specs[row["key_id"]][1], specs[row["key_id"]][2]
            _, sub, window = subs[row["key_id"]]
            how = (f"sorted neighbourhood on {', '.join(map(str, sub))}, window {window}"
                   if sub else "")
            skipped.append(SkippedBlock(labels[b], "[" + ", ".join(map(str, parts)) + "]",
                                        "|".join(_decode(row["key"])), int(row["size"]), how))
        subs = {k: v for k, v in subs.items() if v[1]}
        if subs:
            big_keys = blocks.where(~small).select("key_id", "key")
            sub_pairs = _sub_pairs(work, members, big_keys, subs, names, link)
            if link:  # the pairs across tables, counted as the local estimate counts them
                sub_pairs = sub_pairs.transform(pinned, lazy=True)  # kept for the union
                for row in sub_pairs.groupBy("key_id").count().collect():
                    key = (subs[row["key_id"]][0], key_index[row["key_id"]])
                    per_key[key] = per_key.get(key, 0) + int(row["count"])
                    estimated[labels[key[0]]] += int(row["count"])
            else:
                # the local estimate: window pairs over each block's records with a value
                values = work.mapInPandas(_part_batches(
                    [p for _, sub, _ in subs.values() for p in sub], names),
                    "part_id int, value string, row long")
                offsets, at = {}, 0
                for key_id, (_, sub, _) in subs.items():
                    offsets[key_id] = at
                    at += len(sub)
                plan = pd.DataFrame([(key_id, offsets[key_id] + i)
                                     for key_id, (_, sub, _) in subs.items()
                                     for i in range(len(sub))], columns=["key_id", "part_id"])
                chosen = spark.createDataFrame(plan, "key_id int, part_id int")
                present = (members.join(big_keys, ["key_id", "key"]).join(chosen, "key_id")
                           .join(values, ["part_id", "row"])
                           .groupBy("key_id", "key", "part_id").count().collect())
                for row in present:
                    b, _, window = subs[row["key_id"]]
                    m = int(row["count"])
                    extra = int(sum(max(m - k, 0) for k in range(1, window)))
                    key = (b, key_index[row["key_id"]])
                    per_key[key] = per_key.get(key, 0) + extra
                    estimated[labels[b]] += extra

    sorted_pairs, banded, embedded = [], {}, {}
    for b, plan in enumerate(plans):
        if isinstance(plan, WindowJoin):
            pairs, estimated[labels[b]] = _sorted_pairs(spark, work, plan, b, names, link,
                                                        partitions)
            sorted_pairs.append(pairs)
        elif isinstance(plan, RangeJoin):
            pairs, estimated[labels[b]] = _range_pairs(work, plan, b, names, link)
            sorted_pairs.append(pairs)
        elif isinstance(plan, BandJoin):  # MinHash-LSH: see `_bands`
            banded[b] = band_buckets(work, plan, names, link, limit)
            estimated[labels[b]] = banded[b].estimate
            for s in banded[b].skipped:
                s.blocker = labels[b]
            skipped += banded[b].skipped
        elif isinstance(plan, NeighbourJoin):  # embeddings: see `_vectors`
            present, records, left_records = present_records(work, plan, names)
            embedded[b] = (present, records)
            estimated[labels[b]] = plan.estimate(records, left_records if link else records)
    # warned and listed blocker by blocker, as the local `block` proposes them
    skipped.sort(key=lambda s: labels.index(s.blocker))

    total = sum(estimated.values())
    if total > rules.max_pairs:
        raise _budget_error(rules, estimated, per_key, total)
    for s in skipped:
        warnings.warn(oversized_message(s, limit), LinkageWarning, stacklevel=user_stacklevel())

    proposals = list(sorted_pairs)
    proposals += [band_pairs(bands, work, names, link, limit, b) for b, bands in banded.items()]
    proposals += [neighbour_pairs(spark, present, plans[b], link, b) if gather
                  else neighbour_pairs_distributed(spark, present, count, plans[b], link, b)
                  for b, (present, count) in embedded.items()]
    if sub_pairs is not None:
        proposals.append(sub_pairs.select("l", "r", "mask"))
    if specs:
        kept = members.join(
            blocks.where((F.col("size") >= 2) & (F.col("size") <= limit))
            .select("key_id", "key"), ["key_id", "key"])
        left = kept.select("key_id", "key", F.col("row").alias("l"),
                           F.col("source").alias("sl"), "mask")
        right = kept.select("key_id", "key", F.col("row").alias("r"),
                            F.col("source").alias("sr"))
        joined = left.join(right, ["key_id", "key"])
        joined = joined.where((F.col("sl") == 0) & (F.col("sr") == 1) if link
                              else F.col("l") < F.col("r"))
        proposals.append(joined.select("l", "r", "mask"))
    for name, star in (stars or {}).items():
        proposals.append(star.select("l", "r", F.lit(stage_bit(rules, name)).cast("long")
                                     .alias("mask")))
    union = proposals[0]
    for more in proposals[1:]:
        union = union.unionByName(more)
    candidates = union.groupBy("l", "r").agg(F.bit_or("mask").alias("mask")).cache()
    bits = [F.sum((F.col("mask").bitwiseAND(F.lit(1 << b)) != 0).cast("long")).alias(f"b{b}")
            for b in range(len(blocker_list))]
    counted = candidates.agg(F.count(F.lit(1)).alias("n"), *bits).collect()[0]
    proposed = {name: int(counted[f"b{b}"] or 0) for b, name in enumerate(labels)}
    if members is not None:
        members.unpersist()
        blocks.unpersist()
    for bands in banded.values():
        bands.unpersist()
    return BlockedPairs(candidates, int(counted["n"]), estimated, proposed, skipped)
