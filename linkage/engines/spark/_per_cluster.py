"""Per-cluster work of the distributed route, on the executors, by the local engine's code.

Some steps read a cluster's records together: the keeper policies whose keys depend on the
cluster (`diverse`: a record's round among its source's records; `oldest` / `newest`: a
numeric date column is ranked by its distinct values) and golden records. Here every record
carries its cluster id, the clusters are put in buckets (cluster id modulo the number of
buckets: a cluster is never split between two), and each bucket is one `applyInPandas` call
that runs the local function (`linkage.keep.keeper_rank`, `linkage.golden.build_golden`) over
its clusters at once. Those functions treat clusters apart and break ties by the ids' order
inside a cluster, so a bucket's answer for its clusters is the local engine's, by
construction. Nothing goes to the driver; a bucket holds about `BUCKET_RECORDS` records.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.engines.spark._read import ROW, SparkTable, with_row_id

BUCKET_RECORDS = 50_000  # records per applyInPandas call, about (whole clusters in each)

# Helper columns beside the input's own (names no input uses).
CLUSTER, ID, SIDE, BUCKET = "__linkage_cluster", "__linkage_id", "__linkage_side", "__linkage_b"


def _spark_type(frame, column: str) -> str:
    return frame.schema[column].dataType.simpleString()


def records_of(tables: list[SparkTable], id_name: str, columns: list[str] | None = None):
    """Every record with its row (`ROW`), id (`ID`) and table (`SIDE`), and the input's columns
    (`columns`, or all of them, with `row_id` where the run has no id column) under their own
    names, the tables after one another as `prepare_tables` concatenates them; and the column
    names in that order. A column two tables hold with different types is read as text."""
    from pyspark.sql import functions as F

    frames = []
    for k, table in enumerate(tables):
        frame = with_row_id(table, id_name)
        frames.append(frame.withColumn(ID, F.col(f"`{id_name}`"))
                      .withColumn(SIDE, F.lit(k).cast("byte")))
    names: list[str] = []
    for frame in frames:
        names += [c for c in frame.columns if c not in (ROW, ID, SIDE) and c not in names]
    if columns is not None:
        names = [c for c in names if c in columns]
    types: dict[str, set] = {}
    for frame in frames:
        for c in names:
            if c in frame.columns:
                types.setdefault(c, set()).add(_spark_type(frame, c))
    parts = []
    for frame in frames:
        cols = [F.col(ROW), F.col(ID), F.col(SIDE)]
        for c in names:
            if c not in frame.columns:
                continue
            value = F.col(f"`{c}`")
            cols.append((value.cast("string") if len(types[c]) > 1 else value).alias(c))
        parts.append(frame.select(*cols))
    out = parts[0]
    for more in parts[1:]:
        out = out.unionByName(more, allowMissingColumns=True)
    return out, names


def bucketed(records, clusters, n: int, partitions: int):
    """`records` (with `ROW`) joined with their cluster (`clusters`: row, cluster_id), in
    `BUCKET` by cluster."""
    from pyspark.sql import functions as F

    buckets = max(partitions, -(-n // BUCKET_RECORDS), 1)
    of_row = clusters.select(F.col("row").alias(ROW), F.col("cluster_id").alias(CLUSTER))
    return (records.join(of_row, ROW)
            .withColumn(BUCKET, F.pmod(F.col(CLUSTER), F.lit(buckets))))


def _tiebreak(frame: pd.DataFrame) -> np.ndarray:
    """The local tie-break (`id_rank` of the ids, left table before right) in the ids' order
    inside each cluster: what every per-cluster ordering reads of it."""
    from linkage.keep import id_rank

    side = frame[SIDE].to_numpy(dtype=np.int64)
    return id_rank(frame[ID]) + side * len(frame)


def _keeper_call(policy, columns: list[str]):
    """applyInPandas: each record's `keeper_rank` in its cluster, its cluster's rank-0 row and
    whether it is kept (rank below `policy.k`)."""
    from linkage.keep import keeper_rank

    def run(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.reset_index(drop=True)
        clusters = frame[CLUSTER].to_numpy(dtype=np.int64)
        rank = keeper_rank(policy, frame[columns], clusters, _tiebreak(frame))
        row = frame[ROW].to_numpy(dtype=np.int64)
        first = rank == 0
        representative = pd.Series(row[first], index=clusters[first]).reindex(clusters)
        return pd.DataFrame({"row": row, "cluster_id": clusters, "rank": rank,
                             "representative": representative.to_numpy(dtype=np.int64),
                             "kept": rank < int(policy.k)})

    return run


def keeper_ranks_per_cluster(tables: list[SparkTable], policy, clusters, id_name: str, n: int,
                             partitions: int):
    """(row, cluster_id, rank, representative, kept) per record by the local `keeper_rank`,
    run per bucket of whole clusters."""
    wanted = None if policy.policy == "diverse" else policy.columns  # diverse reads them all
    records, columns = records_of(tables, id_name, wanted)
    frame = bucketed(records, clusters, n, partitions)
    schema = "row long, cluster_id long, rank long, representative long, kept boolean"
    return frame.groupBy(BUCKET).applyInPandas(_keeper_call(policy, columns), schema)


def check_golden_columns(spec, columns: list[str], id_name: str) -> None:
    """The local `build_golden`'s check of the columns it reads (its `InputError`), on an
    empty table of the input's columns, before Spark runs."""
    from linkage.golden import build_golden

    build_golden(spec, pd.DataFrame(columns=columns), pd.Series([], dtype=object),
                 np.zeros(0, dtype=np.int64), id_name)


def _golden_call(spec, columns: list[str], id_name: str):
    """applyInPandas: `build_golden` over a bucket's clusters (one row per cluster)."""
    from linkage.golden import build_golden

    def run(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.reset_index(drop=True)
        ids = frame[ID]
        # `build_golden` breaks ties by `id_rank(ids)`; the side is 0 (one table).
        return build_golden(spec, frame[columns], ids, frame[CLUSTER].to_numpy(np.int64),
                            id_name)

    return run


def golden_records(tables: list[SparkTable], spec, clusters, id_name: str, n: int,
                   partitions: int):
    """golden.parquet's rows (by `build_golden`, per bucket of whole clusters), sorted by
    cluster id. The columns are checked before (`check_golden_columns`)."""
    from linkage.golden import PROVENANCE_SUFFIX

    records, columns = records_of(tables, id_name, spec.columns)
    frame = bucketed(records, clusters, n, partitions)
    id_type = _spark_type(records, ID)
    fields = [f"`{f}` {_spark_type(records, f)}" for f in spec.fields]
    sources = [f"`{f}{PROVENANCE_SUFFIX}` {id_type}" for f in spec.fields]
    schema = ", ".join(["cluster_id long", *fields, *sources])
    return (frame.groupBy(BUCKET).applyInPandas(_golden_call(spec, columns, id_name), schema)
            .orderBy("cluster_id"))
