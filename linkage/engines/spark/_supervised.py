"""The supervised scorer on Spark: trained on the driver, applied on the executors.

The labelled pairs (a few hundred to a few thousand, read from the rules' `labels` file by the
local `labelled_pairs`) are compared on Spark by the same comparisons as the candidate pairs,
and their comparison matrix, small, comes to the driver in the labels' order, where the
scorer is fitted exactly as the local engine fits it. The fitted model is then shipped with
the scoring function (`score_batches`) and applied to the candidate pairs in `mapInPandas`:
each pair's weight and probability depend on its levels alone. A scorer whose weights depend
on the block they are computed in (a logistic regression's matrix product:
`Scorer.weighs_rows_apart` is False) is given the blocks the local engine gives it
(`weights_in_blocks`: `SCORE_ROWS` pairs in pair order), numbered by the pairs' positions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.engines.spark._compare import (
    compare,
    compared_schema,
    matrix_of,
    score_batches,
)
from linkage.engines.spark._frames import consecutive_positions
from linkage.pipeline import labelled_pairs, read_labelled
from linkage.run.compare import SCORE_ROWS


def fit_supervised(spark, scorer, rules, work, names: dict[str, str], ids: pd.Series,
                   source: np.ndarray, mode: str):
    """`scorer` fitted on the labelled pairs as `run_local` fits it."""
    li, ri, y = labelled_pairs(scorer, rules, ids, source, mode)
    return _fit_on(spark, scorer, rules, work, names, li, ri, y)


def fit_supervised_distributed(spark, scorer, rules, work, names: dict[str, str], ids_table,
                               mode: str):
    """`fit_supervised` on the distributed route: only the records the labels name reach the
    driver (row, id, table), in row order, and `labelled_pairs` runs over them as over the
    whole table (a subset in the same order gives the same pairs, warnings and labels)."""
    from pyspark.sql import functions as F

    _, labels = read_labelled(scorer, rules)
    named = pd.unique(pd.concat([labels[c].astype(str) for c in scorer.id_columns]))
    wanted = spark.createDataFrame(pd.DataFrame({"_key": pd.Series(named, dtype=object)}),
                                   "_key string")
    found = (ids_table.join(wanted, F.col("_id").cast("string") == F.col("_key"))
             .select("row", "_id", "_side").toPandas().sort_values("row", kind="stable"))
    rows = found["row"].to_numpy(dtype=np.int64)
    li, ri, y = labelled_pairs(scorer, rules, found["_id"].reset_index(drop=True),
                               found["_side"].to_numpy(dtype=np.int8), mode)
    return _fit_on(spark, scorer, rules, work, names, rows[li], rows[ri], y)


def _fit_on(spark, scorer, rules, work, names, li, ri, y):
    """`scorer` fitted on the pairs (li, ri) labelled `y`, compared on Spark."""
    # `mask` carries each pair's position among the labels through the comparison
    drawn = spark.createDataFrame(
        pd.DataFrame({"l": li.astype(np.int64), "r": ri.astype(np.int64),
                      "mask": np.arange(len(li), dtype=np.int64)}),
        schema="l long, r long, mask long")
    compared = compare(drawn, work, rules.comparisons, names, []).toPandas()
    compared = compared.sort_values("mask", kind="stable").reset_index(drop=True)
    return scorer.fit(matrix_of(compared, rules.comparisons, []), y)


def score_in_local_blocks(compared, scorer, comparisons: list, tf_columns: list[str],
                          schema: str, partitions: int):
    """The compared pairs weighed by `scorer` in the local engine's blocks: the pairs in
    (l, r) order, `SCORE_ROWS` at a time, each block in one `applyInPandas` call."""
    from pyspark.sql import functions as F

    placed, _ = consecutive_positions(compared, ["l", "r"], partitions)
    weigh = score_batches(scorer, comparisons, tf_columns)
    columns = [c.split(" ")[0] for c in schema.split(", ")]

    def block(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.sort_values("pos", kind="stable").reset_index(drop=True)
        return next(iter(weigh(iter([frame]))))[columns]

    return (placed.withColumn("_block", F.floor(F.col("pos") / F.lit(SCORE_ROWS)))
            .groupBy("_block").applyInPandas(block, schema))


def score_pairs(compared, scorer, comparisons: list, tf_columns: list[str], partitions: int):
    """The compared pairs with `match_weight` and `match_probability`: row by row where the
    scorer weighs each pair apart, else in the local engine's blocks (`score_in_local_blocks`)."""
    schema = (compared_schema(comparisons, tf_columns)
              + ", match_weight double, match_probability double")
    if scorer.weighs_rows_apart:
        return compared.mapInPandas(score_batches(scorer, comparisons, tf_columns), schema)
    return score_in_local_blocks(compared, scorer, comparisons, tf_columns, schema, partitions)
