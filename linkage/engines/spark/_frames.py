"""Small DataFrame helpers shared by the Spark stages."""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.io import as_text


def text(values: pd.Series) -> np.ndarray:
    """A Spark string column as the local engine holds it: object array of str or None
    (pandas 3 hands Arrow strings over with NaN for null)."""
    return as_text(values)


def shuffle_partitions(spark) -> int:
    return int(spark.conf.get("spark.sql.shuffle.partitions"))


def consecutive_positions(df, order: list[str], partitions: int):
    """`df` with `pos`: 0, 1, 2 ... in the order of the (unique) columns `order`, and the
    number of rows.

    A window ordered over the whole table would pull every row into one task; instead the
    rows are range-partitioned by `order` (so partition i holds only keys below partition
    i + 1's), numbered inside each partition, and shifted by the sizes of the partitions
    before it. The partitioned rows are checkpointed so both passes see the same partitions.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    ranged = (df.repartitionByRange(max(partitions, 1), *order)
              .withColumn("_pid", F.spark_partition_id())
              .localCheckpoint())
    counts = {row["_pid"]: row["count"] for row in ranged.groupBy("_pid").count().collect()}
    offsets, total = [], 0
    for pid in range(max(counts, default=-1) + 1):
        offsets.append(total)
        total += counts.get(pid, 0)
    if not offsets:
        return ranged.drop("_pid").withColumn("pos", F.lit(0).cast("long")), 0
    within = Window.partitionBy("_pid").orderBy(*order)
    offset = F.element_at(F.array(*[F.lit(o).cast("long") for o in offsets]), F.col("_pid") + 1)
    return (ranged.withColumn("pos", offset + F.row_number().over(within) - 1)
            .drop("_pid")), total
