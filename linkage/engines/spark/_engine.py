"""The Spark engine's run: the local engine's stages, with the work on pairs done by Spark.

read (driver) → normalize (mapInPandas) → url, exact, copies (hashes in mapInPandas, stars
by windows, `_text`) → block (joins; MinHash bands `_bands`, embeddings `_vectors`) and
semantic (`_text`) → compare (mapInPandas) → score
(EM on level-pattern counts; weights in mapInPandas) → guard (joins, windows and groupBy find
where each guard acts; the guard's own code decides there, see `_guards`) → cluster
(large/small star, over the guarded pairs) → keep (window; `keep_up_to` limits by a window
maximum) → outputs and summary: the tail every engine shares (`linkage.run.finish`), with
`SparkTail` doing its guard, one-to-one, cluster and keep steps on Spark, so the files of the
output contract are built by the same code as the local engine's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from linkage.blocking import CandidatePairs
from linkage.engines.spark._blocking import block, copies
from linkage.engines.spark._compare import (
    compare,
    exact_frequencies,
    matrix_of,
)
from linkage.engines.spark._frames import cluster_checkpoints, shuffle_partitions
from linkage.engines.spark._graph import cluster_ids, one_to_one
from linkage.engines.spark._guards import apply_guards_on_spark
from linkage.engines.spark._keep import keeper_ranks
from linkage.engines.spark._normalize import normalize, records_frame, work_columns
from linkage.engines.spark._resume import SparkCheckpoint
from linkage.engines.spark._stages import compare_stage, fit_scorer
from linkage.engines.spark._supervised import fit_supervised, score_pairs
from linkage.engines.spark._support import check_supported
from linkage.engines.spark._text import (
    semantic_pairs,
    stage_proposed,
    stage_records,
    stage_stars,
    staged,
)
from linkage.engines.spark.session import (
    java_memory_errors,
    quiet_pyspark,
    spark_session,
    task_errors,
)
from linkage.guards import GuardContext
from linkage.keep import CENTROID_DISTANCE, id_rank
from linkage.pipeline import (
    check_link_stages,
    move_one_to_one_threshold,
    start_run,
)
from linkage.progress import progress_bar
from linkage.result import Result
from linkage.run.disk import run_fingerprint
from linkage.run.finish import Tail, finish
from linkage.run.state import Mode, RunState, Table
from linkage.scoring import Supervised
from linkage.settings import Rules

STAGES = ("normalize", "block", "compare", "score", "guard", "cluster", "keep")


def _fit(spark, scorer, rules: Rules, compared, work, names, sizes, n, mode, model, ids,
         source):
    """The fitted scorer: loaded from `model`, or fitted like the local engine fits it."""
    if model is None and isinstance(scorer, Supervised):
        # on the labelled pairs, on the driver (`_supervised`)
        return fit_supervised(spark, scorer, rules, work, names, ids, source, mode)

    def frequencies(compared, comparisons, tf_columns, scorer):
        # The exactly agreeing pairs' term frequencies in pair order, for the local bits.
        return exact_frequencies(compared, comparisons, tf_columns)

    return fit_scorer(spark, scorer, rules, compared, work, names, sizes, mode, model,
                      frequencies)


def _collect_pairs(scored) -> pd.DataFrame:
    """The scored pairs on the driver, in the local engine's order (by left, then right)."""
    frame = scored.toPandas()
    return frame.sort_values(["l", "r"], kind="stable").reset_index(drop=True)


def run_spark(
    mode: Mode,
    tables: list[Table],
    rules: Rules,
    *,
    id_column: str | None = None,
    master: str = "local[2]",
    progress: bool | None = None,
    model: str | Path | None = None,
    checkpoint: str | Path | None = None,
) -> Result:
    """Run the rules on Spark at `master` and return the same `Result` as `run_local`;
    `checkpoint`: a folder where the candidate and compared pairs are kept (`_resume`).

    Refuses (InputError, before Spark starts) rules the Spark engine does not run
    (`_support.check_supported`: `group_by`, blockers without a join plan, comparisons that
    read more than the pair). Every guard runs, with the local engine's decisions.
    """
    check_supported(rules)
    clock, id_column, (frames, id_name, sizes, source, ids, combined) = start_run(
        tables, rules, id_column, progress=progress)
    n = len(combined)
    with clock.stage("spark"), java_memory_errors(master):
        spark = spark_session(master)
    # The clock's stage line names each stage as it runs; this count of them stays hidden.
    with quiet_pyspark(), progress_bar(len(STAGES), "spark", False) as bar, \
            java_memory_errors(master):
        result = _run(spark, mode, tables, rules, id_column, model, clock, bar, frames,
                      id_name, sizes, source, ids, combined, n, checkpoint)
    clock.close()
    return result


def _size(source) -> int | None:
    """Records of an input, cheaply where the driver can tell (a local file's metadata or
    line count, a Spark DataFrame's count); None for a path only Spark reads."""
    from linkage.engines.spark._read import is_spark_frame
    from linkage.io import count_records, is_path

    if is_spark_frame(source):
        with quiet_pyspark():
            return source.count()
    if is_path(source) and "://" not in str(source):
        return count_records(source)
    if is_path(source):
        return None
    return len(source)  # a pandas or other in-memory table: the driver holds it already


def run_distributed_sources(mode: Mode, sources: list, rules: Rules, *, id_column, sep,
                            encoding, progress, model, master,
                            checkpoint=None) -> Result | None:
    """The distributed route (`_distributed`) when the inputs are paths or Spark DataFrames
    above the driver route's limit; None otherwise (the caller reads them on the driver)."""
    import contextlib
    import os
    import shutil
    import tempfile

    from linkage.engines.spark._distributed import check_route, run_distributed
    from linkage.engines.spark._read import driver_rows, is_spark_frame, read_tables
    from linkage.io import is_path
    from linkage.progress import Clock

    if not all(is_path(s) or is_spark_frame(s) for s in sources):
        return None
    limit = driver_rows()
    sizes = [_size(s) for s in sources]
    if all(size is not None for size in sizes) and sum(sizes) <= limit:
        return None
    check_supported(rules)
    check_route(rules, mode, limit, checkpoint)
    clock = Clock(progress=progress)
    id_column = id_column or rules.id_column
    with clock.stage("spark"), java_memory_errors(master):
        spark = spark_session(master)
    # Spark's UI, event log and status tracker show each job under the linkage stage that
    # ran it (its job group and description).
    clock.on_stage = lambda name: spark.sparkContext.setJobGroup(
        f"linkage: {name}", f"linkage: {name}", interruptOnCancel=False)
    staging = Path(tempfile.mkdtemp(prefix="linkage-spark-",
                                    dir=os.environ.get("LINKAGE_SPARK_STAGING") or None))
    try:
        with quiet_pyspark(), progress_bar(len(STAGES), "spark", False) as bar, \
                java_memory_errors(master), cluster_checkpoints(spark, staging):
            with clock.stage("read"), task_errors():
                tables = read_tables(spark, sources, rules, id_column, sep, encoding,
                                     rules.rename_right if mode == "link" else None)
            result = run_distributed(spark, mode, tables, rules, id_column, model, clock, bar,
                                     staging, checkpoint)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        clock.on_stage = None
        with contextlib.suppress(Exception):  # the JVM may be gone (an EngineError above)
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
            spark.sparkContext.setJobDescription(None)
    clock.close()
    return result



def _run(spark, mode, tables, rules, id_column, model, clock, bar, frames, id_name, sizes,
         source, ids, combined, n, checkpoint=None):

    partitions = shuffle_partitions(spark)
    names, raw = work_columns(rules)
    cached = []
    try:
        with clock.stage("normalize"):
            records = records_frame(spark, combined, source, raw, names)
            work, normalize_stats = normalize(records, rules, names, raw, combined, ids)
            cached.append(work)
            bar.update(1)

        # --resume: the candidate pairs and compared pairs of an earlier run (`_resume`)
        kept = SparkCheckpoint(checkpoint, run_fingerprint(mode, tables, rules, id_name))

        def exact_and_block():
            with clock.stage("exact"), task_errors():
                # url, exact and copies: stars by stage, one record per group on (`_text`)
                check_link_stages(rules, mode)
                stars, blocked_work, exact_stats, stage_input = {}, work, {}, None
                if mode == "dedupe":
                    stage_input = stage_records(spark, combined, rules, id_name)
                    stars, exact_stats, blocked_work = stage_stars(
                        spark, work, *stage_input, rules, copies(work, rules, names)[0], n)
                cached.extend(stars.values())

            with clock.stage("block"), task_errors():
                centroid_distance = None
                check_link_stages(rules, mode, semantic=True)
                if rules.semantic is not None:  # SemDeDup's pairs join the blocked (`_text`)
                    stars["semantic"], centroid_distance, semantic_stats = semantic_pairs(
                        spark, *stage_input[:2], rules, stars, n)
                blocked = block(spark, blocked_work, rules, names, mode == "link",
                                partitions, stars)
                blocked.proposed.update(stage_proposed(stars, exact_stats))
                if rules.semantic is not None:
                    blocked.proposed["semantic"] = semantic_stats["duplicate_pairs"]
                    exact_stats["semantic"] = semantic_stats
                bar.update(1)
            return blocked, exact_stats, centroid_distance

        (blocked, exact_stats, centroid_distance), resumed = kept.blocked(spark, exact_and_block)
        cached.append(blocked.pairs)
        if resumed:
            clock.timings["block"] = 0.0  # as the local engine reports a resumed stage
            bar.update(1)

        scorer = rules.scoring
        tf_columns = scorer.tf_columns
        compared = compare_stage(spark, clock, bar, cached, kept, lambda: compare(
            blocked.pairs, work, rules.comparisons, names, tf_columns))

        with clock.stage("score"), task_errors():
            scorer = _fit(spark, scorer, rules, compared, work, names, sizes, n, mode, model,
                          ids, source)
            scored = score_pairs(compared, scorer, rules.comparisons, tf_columns,
                                 partitions).cache()
            cached.append(scored)
            table = _collect_pairs(scored)
            matrix = matrix_of(table, rules.comparisons, tf_columns)
            left = table["l"].to_numpy(dtype=np.int64)
            right = table["r"].to_numpy(dtype=np.int64)
            weight = table["match_weight"].to_numpy(dtype=np.float64)
            probability = table["match_probability"].to_numpy(dtype=np.float64, na_value=np.nan)
            if model is None:
                move_one_to_one_threshold(rules, scorer, mode, left, right, weight, sizes)
            bar.update(1)

        state = RunState(
            mode, tables, rules, id_column, clock, frames, id_name, sizes, source, ids, combined,
            normalize_stats=normalize_stats, exact_stats=exact_stats,
            pairs=CandidatePairs(left, right, table["mask"].to_numpy(dtype=np.int64),
                                 blocked.estimated, blocked.proposed, blocked.skipped),
            centroid_distance=centroid_distance, scorer=scorer, weight=weight,
            probability=probability, matrix=matrix)
        result = finish(state, SparkTail(spark, scored))
    finally:
        for frame_ in cached:
            frame_.unpersist()
    return result


class SparkTail(Tail):
    """The tail's steps that Spark does over its pairs: the guards (joins and windows, see
    `_guards`), the one-to-one assignment, connected components (large/small star) and the
    keeper ranks (a window). The scored pairs stay cached in Spark while they run."""

    def __init__(self, spark, scored):
        self.spark, self.scored = spark, scored
        self.edges = None  # the accepted links, as a Spark frame (l, r, w)

    def guard(self, state: RunState, matched: np.ndarray):
        from pyspark.sql import functions as F

        pairs, scorer = state.pairs, state.scorer
        guard = GuardContext(state.combined, state.ids.to_numpy(), state.source, pairs.left,
                             pairs.right, state.weight, matched, scorer.threshold)
        # pairs an exact, url or semantic stage proposed are matched whatever their weight
        by_stage = staged(state.rules)
        scored = self.scored if by_stage is None else self.scored.withColumn("staged", by_stage)
        if state.rules.guards:
            self.edges = apply_guards_on_spark(self.spark, state.rules.guards, guard, scored)
        else:
            matched = F.col("match_weight") >= F.lit(float(scorer.threshold))
            if by_stage is not None:
                matched = matched | F.col("staged")
            self.edges = scored.where(matched).select(
                "l", "r", F.col("match_weight").alias("w"))
        return guard

    def one_to_one(self, state: RunState, left: np.ndarray, right: np.ndarray,
                   weight: np.ndarray) -> np.ndarray:
        kept = one_to_one(self.edges)
        if kept is None:
            return np.zeros(len(left), dtype=bool)
        chosen = kept.select("l", "r").toPandas()
        n = state.n
        codes = (chosen["l"].to_numpy(dtype=np.int64) * n
                 + chosen["r"].to_numpy(dtype=np.int64))
        self.edges = kept
        return np.isin(left.astype(np.int64) * n + right.astype(np.int64), codes)

    def components(self, state: RunState, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        from pyspark.sql import functions as F

        clusters, _ = cluster_ids(self.edges.select(F.col("l").alias("a"), F.col("r").alias("b")),
                                  state.n)
        return clusters

    def keepers(self, state: RunState, clusters: np.ndarray,
                keep_limit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rank = id_rank(state.ids) + (state.source.astype(np.int64) * state.n)
        ranked = state.combined if state.centroid_distance is None else state.combined.assign(
            **{CENTROID_DISTANCE: state.centroid_distance})  # farthest_from_centroid
        _, keeper, is_keeper = keeper_ranks(self.spark, state.rules.keep, ranked,
                                            clusters, rank, keep_limit)
        return keeper, is_keeper

    def whole_rows(self, state: RunState):
        return None  # the frames are the whole tables

    def summary(self, state: RunState, summary: dict) -> None:
        summary["engine"] = "spark"
        summary["versions"]["spark"] = self.spark.version
