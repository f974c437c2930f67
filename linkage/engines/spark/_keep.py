"""The keeper on Spark: each record's rank in its cluster by a window function.

The policy's sort keys per record are the local `keep` module's (the same functions, read
from the input table where it is held, the driver); the ranking is
`row_number() over (partition by cluster order by the keys, then the id rank)`, the order
`keeper_rank` sorts by, so the ranks and the representatives are the local engine's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.keep import KeepPolicy, _policy_keys, _require


def keeper_ranks(spark, policy: KeepPolicy, records: pd.DataFrame, clusters: np.ndarray,
                 tiebreak: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rank in cluster, row of the cluster's rank-0 record) per row."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    _require(records, policy)
    keys = _policy_keys(policy, records.reset_index(drop=True), clusters, tiebreak)
    frame = pd.DataFrame({"row": np.arange(len(records), dtype=np.int64),
                          "cluster": np.asarray(clusters, dtype=np.int64)})
    for j, key in enumerate(keys):
        frame[f"k{j}"] = np.asarray(key)
    frame["tie"] = np.asarray(tiebreak, dtype=np.int64)
    order = [f"k{j}" for j in range(len(keys))] + ["tie"]
    window = Window.partitionBy("cluster").orderBy(*order)
    ranked = spark.createDataFrame(frame).select(
        "row",
        (F.row_number().over(window) - 1).alias("rank"),
        F.first("row").over(window).alias("representative"),
    ).toPandas().sort_values("row", kind="stable")
    return (ranked["rank"].to_numpy(dtype=np.int64),
            ranked["representative"].to_numpy(dtype=np.int64))
