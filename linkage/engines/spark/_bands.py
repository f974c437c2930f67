"""MinHash-LSH on Spark: a blocker's `BandJoin` (bands as join keys, candidates verified).

Each record's band keys are computed on the executors by the blocker's own code
(`BandJoin.band_keys`: the local shingles, signatures and band hashes, each text's from its
text alone), exploded to (band, key, row); buckets are `groupBy(band, key)`; the pairs of a
bucket of at most `max_block_size` records are a self-join on (band, key), made distinct over
the bands, and a candidate counts only where the blocker's exact Jaccard (`BandJoin.verify`,
in `mapInPandas` over the pairs joined with both texts) holds. A bucket above the limit is
skipped and listed as the local `candidate_pairs` lists it (band, then key as unsigned), and
the estimate is the local `bucket_pair_count`: the pairs in the buckets within the limit,
summed over bands.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage.blocking import BandJoin, SkippedBlock
from linkage.engines.spark._frames import text

_UNSIGNED = 1 << 64


@dataclass
class Bands:
    """One band plan's buckets on Spark, with the local engine's estimate and skipped list."""

    plan: BandJoin
    keyed: object  # (band, key, row, source), cached
    buckets: object  # (band, key, size, first, n_left, n_right), cached
    estimate: int
    skipped: list[SkippedBlock]

    def unpersist(self) -> None:
        self.keyed.unpersist()
        self.buckets.unpersist()


def _key_batches(plan: BandJoin, column: str):
    """mapInPandas: (band, key, row, source) for every band of every record taking part."""

    def run(batches):
        for batch in batches:
            keys, eligible = plan.band_keys(text(batch[column]))
            rows = batch["row"].to_numpy(dtype=np.int64)[eligible]
            sources = batch["source"].to_numpy(dtype=np.int8)[eligible]
            bands = keys.shape[1]
            yield pd.DataFrame({
                "band": np.tile(np.arange(bands, dtype=np.int32), len(rows)),
                "key": np.ascontiguousarray(keys[eligible], dtype=np.int64).reshape(-1),
                "row": np.repeat(rows, bands),
                "source": np.repeat(sources, bands),
            })

    return run


def _verify_batches(plan: BandJoin):
    """mapInPandas: the candidate pairs (l, r) whose texts `plan.verify` keeps."""

    def run(batches):
        for batch in batches:
            ok = np.asarray(plan.verify(text(batch["tl"]), text(batch["tr"])), dtype=bool)
            yield pd.DataFrame({"l": batch["l"].to_numpy(dtype=np.int64)[ok],
                                "r": batch["r"].to_numpy(dtype=np.int64)[ok]})

    return run


def band_buckets(work, plan: BandJoin, names: dict[str, str], link: bool,
                 limit: int) -> Bands:
    """The buckets of `plan` over the records `work`, the pairs they would give (the local
    estimate) and the buckets above `limit`, listed as the blocker lists them."""
    from pyspark.sql import functions as F

    column = names[plan.column]
    keyed = work.mapInPandas(_key_batches(plan, column),
                             "band int, key long, row long, source byte").cache()
    buckets = keyed.groupBy("band", "key").agg(
        F.count(F.lit(1)).alias("size"), F.min("row").alias("first"),
        F.sum((F.col("source") == 0).cast("long")).alias("n_left"),
        F.sum((F.col("source") == 1).cast("long")).alias("n_right"),
    ).cache()
    small = F.col("size") <= limit
    pairs = F.col("n_left") * F.col("n_right") if link else F.expr("size * (size - 1) div 2")
    estimate = buckets.agg(F.sum(F.when(small, pairs).otherwise(0)).cast("long")).collect()[0][0]
    big = buckets.where(~small).select("band", "key", "size", "first").collect()
    skipped: list[SkippedBlock] = []
    if big:
        firsts = sorted({int(row["first"]) for row in big})
        values = {int(row["row"]): row["t"] for row in work.where(F.col("row").isin(firsts))
                  .select("row", F.col(column).alias("t")).collect()}
        # the local order: band by band, buckets by their uint64 key
        big = sorted(big, key=lambda row: (row["band"], row["key"] % _UNSIGNED))
        skipped = plan.skipped_blocks([(int(row["band"]), int(row["size"]), int(row["first"]),
                                        values[int(row["first"])]) for row in big])
    return Bands(plan, keyed, buckets, int(estimate or 0), skipped)


def band_pairs(bands: Bands, work, names: dict[str, str], link: bool, limit: int, bit: int):
    """The verified pairs (l < r, mask) of the buckets of at least two and at most `limit`
    records (in link mode, across the tables)."""
    from pyspark.sql import functions as F

    kept = bands.buckets.where((F.col("size") >= 2) & (F.col("size") <= limit))
    members = bands.keyed.join(kept.select("band", "key"), ["band", "key"])
    left = members.select("band", "key", F.col("row").alias("a"), F.col("source").alias("sa"))
    right = members.select("band", "key", F.col("row").alias("b"), F.col("source").alias("sb"))
    joined = left.join(right, ["band", "key"])
    joined = joined.where(F.col("sa") != F.col("sb") if link else F.col("a") < F.col("b"))
    candidates = joined.select(F.least("a", "b").alias("l"),
                               F.greatest("a", "b").alias("r")).distinct()
    column = names[bands.plan.column]
    texts = candidates.join(work.select(F.col("row").alias("l"), F.col(column).alias("tl")),
                            "l").join(work.select(F.col("row").alias("r"),
                                                  F.col(column).alias("tr")), "r")
    verified = texts.mapInPandas(_verify_batches(bands.plan), "l long, r long")
    return verified.select("l", "r", F.lit(1 << bit).cast("long").alias("mask"))
