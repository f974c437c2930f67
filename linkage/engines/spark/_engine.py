"""The Spark engine's run: the local engine's stages, with the work on pairs done by Spark.

read (driver) → normalize (mapInPandas) → block (joins) → compare (mapInPandas) → score
(EM on level-pattern counts; weights in mapInPandas) → guard (joins, windows and groupBy find
where each guard acts; the guard's own code decides there, see `_guards`) → cluster
(large/small star, over the guarded pairs) → keep (window; `keep_up_to` limits by a window
maximum) → outputs (the local engine's own `_outputs`, `_summary` and `guard_counts`, so the
files of the output contract are built by the same code).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from linkage.blocking import CandidatePairs
from linkage.clustering import connected_components, split_decisions
from linkage.engines.spark._blocking import block, copies
from linkage.engines.spark._compare import (
    compare,
    compared_schema,
    exact_frequencies,
    level_patterns,
    matrix_of,
    score_batches,
)
from linkage.engines.spark._em import chance_agreement, fit_counts, random_matrix
from linkage.engines.spark._frames import shuffle_partitions
from linkage.engines.spark._graph import cluster_ids, one_to_one
from linkage.engines.spark._guards import apply_guards_on_spark
from linkage.engines.spark._keep import keeper_ranks
from linkage.engines.spark._normalize import normalize, records_frame, work_columns
from linkage.engines.spark._session import quiet_pyspark, spark_session, task_errors
from linkage.engines.spark._support import check_supported
from linkage.golden import build_golden
from linkage.guards import GuardContext
from linkage.keep import id_rank
from linkage.pipeline import (
    Mode,
    Table,
    _outputs,
    _summary,
    add_diagnostics,
    cut_weak_links,
    guard_counts,
    load_model,
    move_one_to_one_threshold,
    random_pairs,
    report_sample,
    scorer_report,
    stage_stats,
    start_run,
)
from linkage.progress import progress_bar
from linkage.result import Result
from linkage.scoring import ComparisonMatrix, FellegiSunter
from linkage.settings import Rules

STAGES = ("normalize", "block", "compare", "score", "guard", "cluster", "keep")


def _fit(spark, scorer, rules: Rules, compared, work, names, sizes, n, mode, model):
    """The fitted scorer: loaded from `model`, or fitted like the local engine fits it."""
    comparisons = rules.comparisons
    if model is not None:
        return load_model(model, scorer)
    if not isinstance(scorer, FellegiSunter):
        return scorer.fit(ComparisonMatrix(list(comparisons),
                                           np.zeros((0, len(comparisons)), np.int8),
                                           np.zeros((0, len(comparisons)), np.float32)))
    patterns, counts = level_patterns(compared, len(comparisons))
    random = None
    if scorer.needs_random_pairs:
        ri, rj = random_pairs(sizes if mode == "link" else [n], scorer.u_sample_size,
                              scorer.seed)
        drawn = spark.createDataFrame(
            pd.DataFrame({"l": ri.astype(np.int64), "r": rj.astype(np.int64),
                          "mask": np.zeros(len(ri), dtype=np.int64)}),
            schema="l long, r long, mask long")
        random_compared = compare(drawn, work, comparisons, names, [])
        random = random_matrix(comparisons, *level_patterns(random_compared, len(comparisons)))
    frequencies = exact_frequencies(compared, comparisons, scorer.tf_columns)
    chance = chance_agreement(work, comparisons, names) if mode == "link" else None
    return fit_counts(scorer, comparisons, patterns, counts, random=random,
                      exact_frequencies=frequencies, chance=chance)


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
) -> Result:
    """Run the rules on Spark at `master` and return the same `Result` as `run_local`.

    Refuses (InputError, before Spark starts) rules the Spark engine does not run: the exact,
    url and semantic stages, minhash and embedding blockers, cosine comparisons, the
    supervised scorer and the `farthest_from_centroid` keeper. Every guard runs, with the
    local engine's decisions.
    """
    check_supported(rules)
    clock, id_column, (frames, id_name, sizes, source, ids, combined) = start_run(
        tables, rules, id_column, progress=progress)
    n = len(combined)
    with clock.stage("spark"):
        spark = spark_session(master)
    # The clock's stage line names each stage as it runs; this count of them stays hidden.
    with quiet_pyspark(), progress_bar(len(STAGES), "spark", False) as bar:
        result = _run(spark, mode, tables, rules, id_column, model, clock, bar, frames,
                      id_name, sizes, source, ids, combined, n)
    clock.close()
    return result


def _run(spark, mode, tables, rules, id_column, model, clock, bar, frames, id_name, sizes,
         source, ids, combined, n):
    from pyspark.sql import functions as F

    partitions = shuffle_partitions(spark)
    names, raw = work_columns(rules)
    cached = []
    try:
        with clock.stage("normalize"):
            records = records_frame(spark, combined, source, raw, names)
            work, normalize_stats = normalize(records, rules, names, raw, combined, ids)
            cached.append(work)
            bar.update(1)

        with clock.stage("exact"), task_errors():
            star, blocked_work, exact_stats = None, work, {}
            if mode == "dedupe":
                star, blocked_work = copies(work, rules, names)
            if star is not None:
                cached.append(star)
                edges = star.toPandas()
                exact_stats = stage_stats({"copies": (edges["l"].to_numpy(np.int64),
                                                      edges["r"].to_numpy(np.int64))})

        with clock.stage("block"), task_errors():
            blocked = block(spark, blocked_work, rules, names, mode == "link", partitions,
                            star)
            cached.append(blocked.pairs)
            if star is not None:
                blocked.proposed["copies"] = exact_stats["copies"]["records_collapsed"]
            bar.update(1)

        scorer = rules.scoring
        tf_columns = scorer.tf_columns
        with clock.stage("compare"), task_errors():
            compared = compare(blocked.pairs, work, rules.comparisons, names, tf_columns).cache()
            cached.append(compared)
            bar.update(1)

        with clock.stage("score"), task_errors():
            scorer = _fit(spark, scorer, rules, compared, work, names, sizes, n, mode, model)
            schema = (compared_schema(rules.comparisons, tf_columns)
                      + ", match_weight double, match_probability double")
            scored = compared.mapInPandas(
                score_batches(scorer, rules.comparisons, tf_columns), schema).cache()
            cached.append(scored)
            table = _collect_pairs(scored)
            matrix = matrix_of(table, rules.comparisons, tf_columns)
            left = table["l"].to_numpy(dtype=np.int64)
            right = table["r"].to_numpy(dtype=np.int64)
            weight = table["match_weight"].to_numpy(dtype=np.float64)
            probability = table["match_probability"].to_numpy(dtype=np.float64, na_value=np.nan)
            if model is None:
                move_one_to_one_threshold(rules, scorer, mode, left, right, weight, sizes)
            matched = weight >= scorer.threshold
            bar.update(1)

        with clock.stage("guard"):
            guard = GuardContext(combined, ids.to_numpy(), source, left, right, weight,
                                 matched, scorer.threshold)
            if rules.guards:
                edges = apply_guards_on_spark(spark, rules.guards, guard, scored)
            else:
                edges = scored.where(F.col("match_weight") >= F.lit(float(scorer.threshold))) \
                    .select("l", "r", F.col("match_weight").alias("w"))
            matched = guard.matched  # the clusters, pairs and summary read the guarded pairs
            bar.update(1)

        with clock.stage("cluster"):
            accepted = np.ones(len(left), dtype=bool)
            if mode == "link" and rules.one_to_one:
                kept = one_to_one(edges)
                kept_pairs = (kept.select("l", "r").toPandas() if kept is not None
                              else pd.DataFrame({"l": [], "r": []}))
                codes = left * n + right
                chosen = (kept_pairs["l"].to_numpy(dtype=np.int64) * n
                          + kept_pairs["r"].to_numpy(dtype=np.int64))
                accepted = np.isin(codes, chosen)
                edges = kept if kept is not None else edges
            ml, mr, mw = left[matched & accepted], right[matched & accepted], \
                weight[matched & accepted]
            clusters, _ = cluster_ids(
                edges.select(F.col("l").alias("a"), F.col("r").alias("b")), n)
            # The matched pairs are here already: clusters only weak links hold together are
            # split as the local engine splits them.
            keep_edge, splits, component_sizes = cut_weak_links(
                rules, n, ml, mr, mw, np.zeros(len(ml), dtype=bool), (left, right, weight),
                scorer)
            if splits:
                at = np.flatnonzero(matched & accepted)
                matched = matched.copy()
                matched[at[~keep_edge]] = False
                ml, mr, mw = ml[keep_edge], mr[keep_edge], mw[keep_edge]
                guard.decisions.extend(split_decisions(splits, ids))
                clusters = connected_components(n, ml, mr)
            bar.update(1)

        with clock.stage("keep"):
            rank = id_rank(ids) + (source.astype(np.int64) * n)
            _, keeper, is_keeper = keeper_ranks(spark, rules.keep, combined, clusters, rank,
                                                guard.keep_limit)
            pairs = CandidatePairs(left, right, table["mask"].to_numpy(dtype=np.int64),
                                   blocked.estimated, blocked.proposed, blocked.skipped)
            outputs = _outputs(
                mode, ids, id_name, source, clusters, keeper, is_keeper, pairs, matrix, weight,
                probability, matched, (ml, mr, mw), combined, frames, tables,
                scorer.threshold, guard,
            )
            if rules.golden is not None and mode == "dedupe":
                outputs["golden"] = build_golden(rules.golden, combined, ids, clusters, id_name)
            bar.update(1)
    finally:
        for frame_ in cached:
            frame_.unpersist()

    summary = _summary(
        mode, tables, rules, n, sizes, normalize_stats, pairs, matrix, matched, clusters,
        outputs["clusters"], id_column, combined,
        above=int((weight >= scorer.threshold).sum()),
    )
    summary["engine"] = "spark"
    summary["versions"]["spark"] = spark.version
    summary["stages"]["score"].update(scorer_report(scorer))
    summary["stages"].update(exact_stats)
    summary["stages"]["guard"] = guard_counts(rules, guard.decisions)
    if mode == "link":
        summary["links"] = len(outputs["links"])
    add_diagnostics(summary, rules, scorer, splits, component_sizes, clusters, left, right,
                    matched, pairs.mask)
    result = Result.from_outputs(mode, rules, outputs, summary, clock.timings, scorer)
    with clock.stage("report"):  # the records report.html shows, on the driver as locally
        result.records = report_sample(result, combined, id_name=id_name, source=source)
    return result
