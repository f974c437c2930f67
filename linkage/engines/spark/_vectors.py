"""The embedding blocker on Spark (a blocker's `NeighbourJoin`).

The records with a value are counted by Spark for the local estimate; their vectors are made on
the executors by the blocker's own code (the model loaded once per Python worker, vectors read
from and added to the vector cache by text hash), then gathered on the driver, where the
blocker's neighbour search runs over all of them as locally (FAISS, exact below `hnsw_above`
vectors), so the pairs are the local engine's. Like SemDeDup's k-means (`_text`), the search
reads every vector at once: 384 floats per record reach the driver.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.blocking import NeighbourJoin
from linkage.engines.spark._frames import text


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
