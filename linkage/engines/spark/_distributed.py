"""The distributed route of the Spark engine: from the input files to the output folders, with
no record and no pair on the driver.

read (Spark, `_read`) → text (mapInPandas, `linkage.io.as_text`) → normalize → copies → block
→ compare → score (as the driver route: `_normalize`, `_blocking`, `_compare`, `_em`; with
--resume the pairs kept as Parquet, `_resume`) → the threshold (moved by `record_prior`:
`prior_shift`) → the guards (per bucket of whole clusters, `_guards_distributed`) →
one-to-one (rounds of mutual best matches) → the cluster splits (`_splits`: only the clusters a
split acts on reach the driver) → components (large/small star) → cluster ids (ranks of the
roots, by range partitioning) → keeper ranks (a window over each cluster, the policy's sort
keys computed per partition by `linkage.keep.policy_keys`; or the local `keeper_rank` per
bucket of whole clusters, `_per_cluster`) and golden records (`build_golden` per bucket) → the
outputs, written by Spark as Parquet folders (`_outputs`) → summary.json from aggregates.

The driver holds the rules, the fitted model, counts and the few rows of the clusters a split
acts on. What this route refuses (a keeper policy or guard kind not written for it) is in `refused`,
checked before Spark reads anything.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from linkage.engines.spark._compare import exact_tf_columns
from linkage.engines.spark._frames import consecutive_positions, pinned, shuffle_partitions
from linkage.engines.spark._graph import one_to_one
from linkage.engines.spark._guards_distributed import (
    check_guard_columns,
    domain_matched,
    guard_edges,
    limited_ranks,
    refused_guard,
    settle_held,
)
from linkage.engines.spark._normalize import work_columns
from linkage.engines.spark._outputs import write_outputs
from linkage.engines.spark._per_cluster import (
    check_golden_columns,
    golden_records,
    keeper_ranks_per_cluster,
)
from linkage.engines.spark._read import ROW, SparkTable, with_row_id
from linkage.engines.spark._resume import SparkCheckpoint
from linkage.engines.spark._splits import split_on_spark
from linkage.engines.spark._stages import fit_scorer, score_on_spark
from linkage.engines.spark._supervised import fit_supervised_distributed
from linkage.engines.spark._text import matched_pairs, stage_of
from linkage.engines.spark.session import task_errors
from linkage.errors import EngineError
from linkage.guards import DomainThresholds
from linkage.io import as_text
from linkage.pipeline import move_one_to_one_threshold
from linkage.run.state import ROW_ID
from linkage.scoring import Supervised

# The keeper policies whose sort keys are per record, and how many keys `policy_keys` gives:
# ranked by a window over each cluster.
KEYS = {"first": 0, "most_complete": 1, "longest": 1, "highest": 2, "source_priority": 1,
        "farthest_from_centroid": 2}
# The policies whose keys read the cluster's other records (`diverse`: a record's round among
# its source's records; `oldest` / `newest`: a numeric date column ranked by its distinct
# values): ranked per cluster by the local `keeper_rank` (`_per_cluster`).
PER_CLUSTER = ("oldest", "newest", "diverse")
POLICIES = (*KEYS, *PER_CLUSTER)


def refused(rules, mode: str, limit: int, checkpoint=None) -> str | None:
    """Why the distributed route cannot run these rules (an `EngineError`'s message), or
    None. `limit`: the driver route's size, named in the fix."""
    fix = (f"Run it on the driver route (records up to LINKAGE_SPARK_DRIVER_ROWS, now "
           f"{limit:,}: set it higher, with the driver memory for the table) or with "
           "--engine local.")
    big = f"the distributed Spark route (a table above {limit:,} records)"
    for k, guard in enumerate(rules.guards):
        why = refused_guard(guard)
        if why is not None:
            return f"{rules.source}: `guards[{k}]`: {why} (not by {big} yet). {fix}"
    if rules.keep.policy not in POLICIES:
        return (f"{rules.source}: `keep.policy: {rules.keep.policy}` is not run by {big} "
                f"yet; {', '.join(POLICIES)} are. {fix}")
    return None


def stage_input(tables: list[SparkTable], rules, id_name: str):
    """The url, exact and semantic stages' input on Spark (`_text.stage_records` on the
    driver route): the values they read as text by row, the Spark name of each column, the
    exact stage's columns (named, else all but the id, in the table's order); None for rules
    without those stages."""
    if rules.url is None and rules.exact is None and rules.semantic is None:
        return None
    columns, exact = [], []
    if rules.url is not None:
        columns.append(rules.url.column)
    if rules.exact is not None:
        exact = rules.exact.columns or [c for c in tables[0].columns if c != id_name]
        columns += exact
    if rules.semantic is not None:
        columns += [rules.semantic.column, *(rules.semantic.where or {})]
    columns = list(dict.fromkeys(columns))
    names = {c: f"s{k}" for k, c in enumerate(columns)}
    return records_text(tables, columns, names), names, exact


def _text_batches(raw: list[str], names: dict[str, str], source: int):
    """mapInPandas: row, source and the rules' input columns as the local engine's text."""

    def run(batches):
        for batch in batches:
            out = pd.DataFrame({"row": batch[ROW].to_numpy(dtype=np.int64),
                                "source": np.full(len(batch), source, dtype=np.int8)})
            for column in raw:
                out[names[column]] = pd.Series(as_text(batch[column]), dtype=object)
            yield out

    return run


def records_text(tables: list[SparkTable], raw: list[str], names: dict[str, str]):
    schema = ", ".join(["row long", "source byte", *(f"{names[c]} string" for c in raw)])
    parts = [t.frame.select(ROW, *[f"`{c}`" for c in raw]).mapInPandas(
        _text_batches(raw, names, k), schema) for k, t in enumerate(tables)]
    records = parts[0]
    for more in parts[1:]:
        records = records.unionByName(more)
    return records


def tf_means(compared, comparisons, tf_columns, scorer) -> dict[str, np.ndarray]:
    """Per TF comparison, the mean of max(tf, floor) over its exactly agreeing pairs (what
    `fit_patterns` takes from them), as a one-value array; aggregated by Spark."""
    from pyspark.sql import functions as F

    floor = float(getattr(scorer, "tf_minimum_u", 0.0))
    out, sums = {}, []
    for comparison, tf, exact in exact_tf_columns(comparisons, tf_columns):
        sums.append(F.avg(F.when(exact, F.greatest(tf, F.lit(floor))))
                    .alias(comparison.output_name))
    if not sums:
        return out
    row = compared.agg(*sums).first()
    for name in row.asDict():
        if row[name] is not None:
            out[name] = np.array([float(row[name])])
    return out


def prior_shift(scored, sizes: list[int]):
    """`record_prior_shift` over Spark's scored pairs: each record of the smaller table's best
    weight by a groupBy (cached), the fixed point's sums of probabilities by aggregates over
    them (`linkage.clustering.prior_fixed_point`, the local loop). The sums are Spark's, not
    numpy's pairwise ones: the moved threshold may differ in its last bits (rounded to 6
    places, as the local one, it is the same)."""
    from pyspark.sql import functions as F

    from linkage.clustering import prior_fixed_point

    def shift(prior: float) -> dict:
        out = {"shift": 0.0, "rho": 0.0, "candidates_per_record": 0.0, "iterations": 0}
        n_small = min(sizes[0], sizes[1])
        pairs = scored.count()
        if n_small < 2 or pairs == 0 or not 0.0 < prior < 1.0:
            return out
        key = "l" if sizes[0] <= sizes[1] else "r"
        w = F.col("match_weight")
        best = (scored.groupBy(key).agg(F.max(w).alias("b"))
                .where(~F.isnan("b") & (F.abs("b") != F.lit(float("inf"))))
                .select("b").cache())
        try:
            def probability_sum(moved: float) -> float:
                z = F.least(F.greatest(F.col("b") + F.lit(moved), F.lit(-60.0)), F.lit(60.0))
                total = best.agg(F.sum(1.0 / (1.0 + F.pow(F.lit(2.0), -z)))).first()[0]
                return float(total or 0.0)

            return prior_fixed_point(probability_sum, pairs, best.count(), n_small, prior)
        finally:
            best.unpersist()

    return shift


def cluster_numbers(roots, partitions: int):
    """(row, root, cluster_id, cluster_size): clusters numbered by their smallest row (the
    root), 0, 1, 2 ..., as `connected_components` numbers them."""
    from pyspark.sql import functions as F

    sizes = roots.groupBy("root").agg(F.count(F.lit(1)).alias("cluster_size"))
    numbered, _ = consecutive_positions(sizes, ["root"], partitions)
    numbered = numbered.select("root", F.col("pos").alias("cluster_id"), "cluster_size")
    return roots.join(numbered, "root")


def _key_batches(policy, columns: list[str]):
    """mapInPandas: the keeper policy's sort keys of each record (`policy_keys`)."""
    from linkage.keep import policy_keys

    def run(batches):
        for batch in batches:
            records = batch[columns].reset_index(drop=True)
            zeros = np.zeros(len(batch), dtype=np.int64)
            keys = policy_keys(policy, records, zeros, zeros)
            out = pd.DataFrame({"row": batch[ROW].to_numpy(dtype=np.int64)})
            for j, key in enumerate(keys):
                out[f"k{j}"] = np.asarray(key, dtype=np.float64)
            yield out

    return run


def keeper_ranks(tables: list[SparkTable], rules, clusters, id_name: str, centroid=None):
    """(row, rank, representative, kept) per record: the local `keeper_rank` order (the
    policy's keys, then left before right, then the id) by `row_number` over each cluster.
    `centroid`: the semantic stage's distances (row, d), which `farthest_from_centroid`
    reads as the local engine's `CENTROID_DISTANCE` column."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from linkage.keep import CENTROID_DISTANCE, require_columns

    policy = rules.keep
    keyed, order = [], []
    for k, table in enumerate(tables):
        frame = with_row_id(table, id_name)
        if centroid is not None and policy.policy == "farthest_from_centroid":
            frame = frame.join(centroid.select(F.col("row").alias(ROW),
                                               F.col("d").alias(CENTROID_DISTANCE)),
                               ROW, "left")
        columns = [c for c in frame.columns if c != ROW]
        require_columns(pd.DataFrame(columns=columns), policy)
        count = KEYS[policy.policy]
        schema = ", ".join(["row long", *(f"k{j} double" for j in range(count))])
        part = (frame.mapInPandas(_key_batches(policy, columns), schema) if count
                else frame.select(F.col(ROW).alias("row")))
        ids = frame.select(F.col(ROW).alias("row"), F.col(f"`{id_name}`").alias("_id"),
                           F.lit(k).cast("byte").alias("_side"))
        keyed.append(part.join(ids, "row"))
        order = [f"k{j}" for j in range(count)]
    ranked = keyed[0]
    for more in keyed[1:]:
        ranked = ranked.unionByName(more)
    window = Window.partitionBy("cluster_id").orderBy(*order, "_side", "_id", "row")
    rank = F.row_number().over(window) - 1
    return clusters.join(ranked, "row").select(
        "row", "cluster_id", rank.alias("rank"),
        F.first("row").over(window).alias("representative"),
        (rank < F.lit(int(policy.k))).alias("kept"))


def resume_fingerprint(mode, tables: list[SparkTable], rules, id_name: str) -> str:
    """The checkpoint's fingerprint (`run_fingerprint`, the local engine's: the rules, the
    inputs' checksums, this version); an input without a checksum (a Spark DataFrame, an
    object-store path) cannot be told from another, so --resume is refused for it."""
    from linkage.run.disk import run_fingerprint

    for table in tables:
        if table.checksum is None:
            raise EngineError(
                f"--resume: the input {table.name} has no checksum linkage can take (a Spark "
                "DataFrame or an object-store path), so a checkpoint cannot be matched to "
                "it. Give the input as a local Parquet or CSV file, or leave out --resume.")
    return run_fingerprint(mode, tables, rules, id_name)


def run_distributed(spark, mode, tables: list[SparkTable], rules, id_column, model, clock,
                    bar, staging: Path, checkpoint=None):
    """Run the rules over `tables` with every record and pair in Spark; the outputs are
    written under `staging` (Parquet folders, summary.json's content returned in the
    `Result`). `checkpoint`: --resume's folder, where the candidate and compared pairs are
    kept as Parquet folders and read back by a rerun (`_resume`)."""
    from pyspark.sql import functions as F

    partitions = shuffle_partitions(spark)
    names, raw = work_columns(rules)
    sizes = [t.records for t in tables]
    n = sum(sizes)
    id_name = id_column or ROW_ID
    cached = []
    # The columns the keeper and golden records read, checked before any work (local errors).
    from linkage.keep import require_columns

    columns = [*([ROW_ID] if id_name == ROW_ID else []), *tables[0].columns]
    for table in tables[1:]:
        columns += [c for c in table.columns if c not in columns]
    require_columns(pd.DataFrame(columns=columns), rules.keep)
    if rules.golden is not None and mode == "dedupe":
        check_golden_columns(rules.golden, columns, id_name)
    check_guard_columns(rules.guards, columns)
    kept = (None if checkpoint is None else
            SparkCheckpoint(checkpoint, resume_fingerprint(mode, tables, rules, id_name)))

    def fitted(scorer, compared, work):
        if model is None and isinstance(scorer, Supervised):
            # on the labelled pairs, whose records alone reach the driver (`_supervised`)
            return fit_supervised_distributed(spark, scorer, rules, work, names,
                                              _ids(tables, id_name), mode)
        return fit_scorer(spark, scorer, rules, compared, work, names, sizes, mode, model,
                          tf_means)

    try:
        ids_table = _ids(tables, id_name)

        def move_threshold(scored, scorer):  # one_to_one_threshold: record_prior
            if model is None:
                move_one_to_one_threshold(rules, scorer, mode, None, None, None, sizes,
                                          shift=prior_shift(scored, sizes))

        done = score_on_spark(spark, mode, rules, records_text(tables, raw, names), names, raw,
                              fitted, clock, bar, cached, on_scored=move_threshold,
                              kept=kept, staging=stage_input(tables, rules, id_name), n=n)
        scorer, scored = done.scorer, done.scored
        with clock.stage("guard"):
            threshold = float(scorer.threshold)
            # a pair an exact, url or semantic stage proposed is matched whatever its weight
            matched, decided = matched_pairs(rules, threshold), None
            if any(isinstance(g, DomainThresholds) for g in rules.guards):
                with task_errors():  # they re-decide every scored pair: `_dm`
                    scored, decided = domain_matched(rules.guards, tables, scored, ids_table,
                                                     matched, id_name, n, threshold)
                matched = F.col("_dm")
            edges = scored.where(matched).select(
                "l", "r", F.col("match_weight").alias("w"), stage_of(rules).alias("st"))
            guarded = None
            if rules.guards:  # per cluster on the executors (`_guards_distributed`)
                with task_errors():
                    guarded = guard_edges(spark, rules.guards, tables, edges, id_name, n,
                                          partitions, threshold, decided)
                edges = guarded.edges
            bar.update(1)

        def ids_of(rows: np.ndarray) -> list:
            wanted = spark.createDataFrame(pd.DataFrame({"row": np.asarray(rows, np.int64)}),
                                           "row long")
            found = ids_table.join(wanted, "row").orderBy("row").select("_id").collect()
            return [r["_id"] for r in found]

        with clock.stage("cluster"), task_errors():
            if mode == "link" and rules.one_to_one:
                kept = one_to_one(edges)
                # a link has no url, exact or semantic stage: no link is a stage's
                edges = (kept.withColumn("st", F.lit(-1)) if kept is not None
                         else edges.limit(0))
            edges = edges.transform(pinned, lazy=True)  # kept by the components' first round
            split = split_on_spark(spark, rules, scorer, n, edges, scored, ids_of)
            # pinned by the keeper's first job, which reads every record's cluster
            clusters = cluster_numbers(split.roots, partitions).transform(pinned, lazy=True)
            bar.update(1)

        with clock.stage("keep"), task_errors():
            if rules.keep.policy in PER_CLUSTER:
                ranks = keeper_ranks_per_cluster(tables, rules.keep, clusters, id_name, n,
                                                 partitions)
            else:
                ranks = keeper_ranks(tables, rules, clusters, id_name, done.centroid)
            if guarded is not None:  # keep_up_to's limits, then the held clusters settled
                ranks = limited_ranks(ranks, guarded, rules.keep.k)
            ranks = ranks.transform(pinned)
            if guarded is not None and guarded.held.limit(1).count():
                guarded = settle_held(spark, guarded, ranks, ids_table, n, partitions, mode)
            golden = None
            if rules.golden is not None and mode == "dedupe":
                golden = golden_records(tables, rules.golden, clusters, id_name, n, partitions)
            bar.update(1)

        with clock.stage("outputs"), task_errors():
            result = write_outputs(
                spark, mode, tables, rules, scorer, staging, id_name=id_name,
                id_column=id_column, sizes=sizes, work=done.work, scored=scored,
                blocked=done.blocked,
                split=split, clusters=clusters, ranks=ranks, ids_table=ids_table, golden=golden,
                guarded=guarded,
                normalize_stats=done.normalize_stats, exact_stats=done.exact_stats,
                clock=clock)
    finally:
        for frame_ in cached:
            frame_.unpersist()
    return result


def _ids(tables: list[SparkTable], id_name: str):
    """(row, _id, _side) of every record: its id as the outputs write it."""
    from pyspark.sql import functions as F

    parts = [with_row_id(t, id_name).select(F.col(ROW).alias("row"),
                                             F.col(f"`{id_name}`").alias("_id"),
                                             F.lit(k).cast("byte").alias("_side"))
             for k, t in enumerate(tables)]
    out = parts[0]
    for more in parts[1:]:
        out = out.unionByName(more)
    return out


def check_route(rules, mode: str, limit: int, checkpoint=None) -> None:
    why = refused(rules, mode, limit, checkpoint)
    if why is not None:
        raise EngineError(why)
