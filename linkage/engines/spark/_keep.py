"""The keeper on Spark: each record's rank in its cluster by a window function.

The policy's sort keys per record are the local `keep` module's (the same functions, read
from the input table where it is held, the driver); the ranking is
`row_number() over (partition by cluster order by the keys, then the id rank)`, the order
`keeper_rank` sorts by, so the ranks and the representatives are the local engine's. How many
records a cluster keeps is the policy's `k`, raised to the largest keep limit a guard
(`keep_up_to`) gave any of its records: a window maximum over the cluster, as the local
engine's `np.maximum.at` over the cluster ids.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.keep import KeepPolicy, policy_keys, require_columns


def keeper_ranks(spark, policy: KeepPolicy, records: pd.DataFrame, clusters: np.ndarray,
                 tiebreak: np.ndarray, limits: np.ndarray | None = None,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rank in cluster, row of the cluster's rank-0 record, whether it is kept) per row;
    `limits`: copies kept per record's cluster (at least `policy.k`), none given: `policy.k`."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    require_columns(records, policy)
    keys = policy_keys(policy, records.reset_index(drop=True), clusters, tiebreak)
    frame = pd.DataFrame({"row": np.arange(len(records), dtype=np.int64),
                          "cluster": np.asarray(clusters, dtype=np.int64)})
    for j, key in enumerate(keys):
        frame[f"k{j}"] = np.asarray(key)
    frame["tie"] = np.asarray(tiebreak, dtype=np.int64)
    frame["limit"] = (np.full(len(records), policy.k, dtype=np.int64) if limits is None
                      else np.asarray(limits, dtype=np.int64))
    order = [f"k{j}" for j in range(len(keys))] + ["tie"]
    window = Window.partitionBy("cluster").orderBy(*order)
    keeps = F.greatest(F.lit(policy.k).cast("long"),
                       F.max("limit").over(Window.partitionBy("cluster")))
    rank = F.row_number().over(window) - 1
    ranked = spark.createDataFrame(frame).select(
        "row",
        rank.alias("rank"),
        F.first("row").over(window).alias("representative"),
        (rank < keeps).alias("kept"),
    ).toPandas().sort_values("row", kind="stable")
    return (ranked["rank"].to_numpy(dtype=np.int64),
            ranked["representative"].to_numpy(dtype=np.int64),
            ranked["kept"].to_numpy(dtype=bool))
