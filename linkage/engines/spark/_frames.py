"""Small DataFrame helpers shared by the Spark stages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np
import pandas as pd

from linkage.io import as_text


def text(values: pd.Series) -> np.ndarray:
    """A Spark string column as the local engine holds it: object array of str or None
    (pandas 3 hands Arrow strings over with NaN for null)."""
    return as_text(values)


def pinned(frame, *, lazy: bool = False):
    """`frame` computed now and cut from its lineage, for a result that later steps read more
    than once or build on in rounds (`DataFrame.transform(pinned)` in a chain).

    `lazy=True`, for a frame the very next action reads whole (a loop's convergence test, a
    count): on a local master its blocks are kept by that action's job instead of a job of
    their own (one Spark job less; the frame is the same). Elsewhere it is pinned now.

    On a local master, a local checkpoint: the blocks stay in the one JVM, whose loss ends
    the run anyway. On a cluster, where an executor can be lost (preempted, killed for its
    memory) and a local checkpoint's blocks go with it (the job then fails with
    CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND), a reliable checkpoint into the session's checkpoint
    folder (`cluster_checkpoints`); without one (the driver route), a local checkpoint."""
    from linkage.engines.spark.session import is_local

    context = frame.sparkSession.sparkContext
    if is_local(context.master) or context.getCheckpointDir() is None:
        return frame.localCheckpoint(eager=not lazy)
    # Writing the files is a second job over the frame: cached, it is not computed twice.
    cached = frame.persist()
    try:
        return cached.checkpoint()
    finally:
        cached.unpersist()


@contextmanager
def cluster_checkpoints(spark, staging: Path) -> Iterator[None]:
    """On a cluster master, the session's checkpoint folder for the run: `checkpoints/` in the
    run's `staging` folder, which the executors share (they write the outputs there) and which
    goes when the run's files go. Afterwards the folder the session had is set again; where
    it had none, it keeps the run's (pyspark has no call that unsets one)."""
    from linkage.engines.spark.session import is_local

    context = spark.sparkContext
    if is_local(context.master):
        yield
        return
    before = context.getCheckpointDir()
    context.setCheckpointDir(str(staging / "checkpoints"))
    try:
        yield
    finally:
        if before is not None:
            with suppress(Exception):  # the JVM may be gone
                context.setCheckpointDir(before)


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
              .transform(pinned, lazy=True))  # kept by the count of each partition below
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
