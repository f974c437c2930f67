"""The embedding blocker on Spark (a blocker's `NeighbourJoin`).

The records with a value are counted by Spark for the local estimate; their vectors are made on
the executors by the blocker's own code (the model loaded once per Python worker, vectors read
from and added to the vector cache by text hash), then gathered on the driver, where the
blocker's neighbour search runs over all of them as locally (FAISS, exact below `hnsw_above`
vectors), so the pairs are the local engine's. Like SemDeDup's k-means (`_text`), the search
reads every vector at once: 384 floats per record reach the driver.

On the distributed route (`neighbour_pairs_distributed`) no vector goes to the driver but a
sample: up to `GROUP_VECTORS` present records the blocker's own search runs over all of them
in one executor task (the local pairs); above, k-means (the local `kmeans`) is fitted on the
driver on a seeded sample of at most `DRIVER_VECTORS` vectors, each vector goes to its
nearest unit centroid, and the search runs inside each k-means cluster, as SemDeDup compares
(an approximation: two neighbours in different clusters are not paired).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.blocking import NeighbourJoin
from linkage.engines.spark._frames import pinned, text


def _vector_batches(plan: NeighbourJoin, column: str):
    def run(batches):
        for batch in batches:
            texts = [str(t) for t in text(batch[column])]
            vectors = plan.vectors(texts) if texts else np.zeros((0, 1), np.float32)
            yield pd.DataFrame({"row": batch["row"].to_numpy(dtype=np.int64),
                                "source": batch["source"].to_numpy(dtype=np.int8),
                                "v": list(np.asarray(vectors, dtype=np.float32))})

    return run


def present_records(work, plan: NeighbourJoin, names: dict[str, str]):
    """The records with a value of the plan's column (not null, not empty), and the local
    estimate's counts: (records, records of the left table)."""
    from pyspark.sql import functions as F

    column = F.col(names[plan.column])
    present = work.where(column.isNotNull() & (column != "")).select(
        "row", "source", column.alias("t"))
    counted = present.agg(F.count(F.lit(1)).alias("n"),
                          F.sum((F.col("source") == 0).cast("long")).alias("left")).collect()[0]
    return present, int(counted["n"]), int(counted["left"] or 0)


def neighbour_pairs(spark, present, plan: NeighbourJoin, link: bool, bit: int):
    """The blocker's pairs (l, r, mask) over the vectors of the `present` records."""
    embedded = present.mapInPandas(_vector_batches(plan, "t"),
                                   "row long, source byte, v array<float>")
    gathered = embedded.toPandas().sort_values("row", kind="stable")
    rows = gathered["row"].to_numpy(dtype=np.int64)
    vectors = (np.stack(gathered["v"].to_numpy()).astype(np.float32) if len(rows)
               else np.zeros((0, 1), np.float32))
    source = gathered["source"].to_numpy(dtype=np.int8) if link else None
    left, right = plan.neighbours(rows, vectors, source)
    frame = pd.DataFrame({"l": np.asarray(left, dtype=np.int64),
                          "r": np.asarray(right, dtype=np.int64),
                          "mask": np.full(len(left), 1 << bit, dtype=np.int64)})
    return spark.createDataFrame(frame, "l long, r long, mask long")


# Up to this many present records the distributed route searches them in one task (exact).
GROUP_VECTORS = 50_000


def neighbour_pairs_distributed(spark, present, count: int, plan: NeighbourJoin, link: bool,
                                bit: int, seed: int = 0):
    """The blocker's pairs (l, r, mask) with no vector on the driver but a k-means sample;
    `count`: the present records."""
    from linkage.engines.spark._text import DRIVER_VECTORS
    from linkage.text.semdedup import kmeans, unit_vectors

    embedded = present.mapInPandas(_vector_batches(plan, "t"),
                                   "row long, source byte, v array<float>")
    groups = max(1, -(-count // GROUP_VECTORS))
    if groups == 1:
        grouped = embedded.selectExpr("0L as c", "row", "source", "v")
    else:
        embedded = embedded.transform(pinned)
        sample = (embedded.select("row", "v")
                  .sample(fraction=min(1.0, 1.2 * DRIVER_VECTORS / count), seed=seed)
                  .orderBy("row").limit(DRIVER_VECTORS).toPandas())
        x = unit_vectors(np.stack(sample["v"].to_numpy()).astype(np.float32))
        _, centroids = kmeans(x, min(groups, len(x)), seed=seed)

        def assign(batches):
            for batch in batches:
                xb = (unit_vectors(np.stack(batch["v"].to_numpy())) if len(batch)
                      else np.zeros((0, centroids.shape[1]), np.float32))
                label = (xb @ centroids.T).argmax(axis=1) if len(xb) else np.zeros(0, np.int64)
                yield batch.assign(c=label.astype(np.int64))[["c", "row", "source", "v"]]

        grouped = embedded.mapInPandas(assign, "c long, row long, source byte, v array<float>")

    def search(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.sort_values("row", kind="stable")
        rows = frame["row"].to_numpy(dtype=np.int64)
        vectors = np.stack(frame["v"].to_numpy()).astype(np.float32)
        source = frame["source"].to_numpy(dtype=np.int8) if link else None
        left, right = plan.neighbours(rows, vectors, source)
        return pd.DataFrame({"l": np.asarray(left, dtype=np.int64),
                             "r": np.asarray(right, dtype=np.int64),
                             "mask": np.full(len(left), 1 << bit, dtype=np.int64)})

    return grouped.groupBy("c").applyInPandas(search, "l long, r long, mask long")
