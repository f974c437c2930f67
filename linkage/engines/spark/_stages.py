"""The stages both routes of the Spark engine share: normalize → copies → block → compare →
score, over a records frame (row, source and the rules' input columns as text), up to the
scored pairs cached in Spark. The driver route (`_engine`) then collects them; the
distributed route (`_distributed`) never does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage.engines.spark._blocking import BlockedPairs, block, copies
from linkage.engines.spark._compare import (
    compare,
    compared_schema,
    level_patterns,
    score_batches,
)
from linkage.engines.spark._em import chance_agreement, fit_counts, random_matrix
from linkage.engines.spark._frames import shuffle_partitions
from linkage.engines.spark._normalize import normalize
from linkage.engines.spark.session import task_errors
from linkage.pipeline import load_model, random_pairs
from linkage.scoring import ComparisonMatrix, FellegiSunter


@dataclass
class Scored:
    """What the shared stages leave: the normalized records (`work`, cached), the normalize
    and copies statistics, the candidate pairs, the fitted scorer and the scored pairs
    (cached: l, r, mask, the levels, similarities, term frequencies, weight and probability)."""

    work: object
    normalize_stats: dict
    exact_stats: dict
    blocked: BlockedPairs
    scorer: object
    scored: object


def score_on_spark(spark, mode, rules, records, names, raw, fit, clock, bar, cached, *,
                   combined=None, ids=None, on_scored=None, kept=None) -> Scored:
    """Run the shared stages over `records`. `fit(scorer, compared, work)`: the fitted scorer;
    `cached`: a list the cached frames are added to (the caller unpersists them);
    `combined`, `ids`: the table on the driver, where the driver route holds it (a normalizer's
    error is then raised as locally); `on_scored(scored, scorer)`: run inside the score stage;
    `kept`: a `_resume.SparkCheckpoint` (--resume): the candidate and compared pairs of an
    earlier run read back instead of made, else kept there as each stage finishes."""
    from pyspark.sql import functions as F

    partitions = shuffle_partitions(spark)
    with clock.stage("normalize"):
        work, normalize_stats = normalize(records, rules, names, raw, combined, ids)
        cached.append(work)
        bar.update(1)

    def copies_and_block():
        with clock.stage("exact"), task_errors():
            star, blocked_work, exact_stats = None, work, {}
            if mode == "dedupe":
                star, blocked_work = copies(work, rules, names)
            if star is not None:
                cached.append(star)
                # `stage_stats`' counts: the groups (their first records) and the copies.
                row = star.agg(F.count(F.lit(1)).alias("n"),
                               F.count_distinct("l").alias("g")).first()
                exact_stats = {"copies": {"groups_with_copies": int(row["g"]),
                                          "records_collapsed": int(row["n"])}}

        with clock.stage("block"), task_errors():
            blocked = block(spark, blocked_work, rules, names, mode == "link", partitions,
                            None if star is None else {"copies": star})
            if star is not None:
                blocked.proposed["copies"] = exact_stats["copies"]["records_collapsed"]
        return blocked, exact_stats, None

    if kept is None:
        (blocked, exact_stats, _), resumed = copies_and_block(), False
    else:
        (blocked, exact_stats, _), resumed = kept.blocked(spark, copies_and_block)
    cached.append(blocked.pairs)
    if resumed:
        clock.timings["block"] = 0.0  # as the local engine reports a resumed stage
    bar.update(1)

    tf_columns = rules.scoring.tf_columns
    with clock.stage("compare"), task_errors():
        def compared_pairs():
            return compare(blocked.pairs, work, rules.comparisons, names, tf_columns)

        if kept is None:
            compared, resumed = compared_pairs(), False
        else:
            compared, resumed = kept.compared(spark, compared_pairs)
        compared = compared.cache()
        cached.append(compared)
        bar.update(1)
    if resumed:
        clock.timings["compare"] = 0.0

    with clock.stage("score"), task_errors():
        scorer = fit(rules.scoring, compared, work)
        schema = (compared_schema(rules.comparisons, tf_columns)
                  + ", match_weight double, match_probability double")
        scored = compared.mapInPandas(
            score_batches(scorer, rules.comparisons, tf_columns), schema).cache()
        cached.append(scored)
        if on_scored is not None:
            on_scored(scored, scorer)
        bar.update(1)
    return Scored(work, normalize_stats, exact_stats, blocked, scorer, scored)


def fit_scorer(spark, scorer, rules, compared, work, names, sizes, mode, model, frequencies):
    """The fitted scorer: loaded from `model`, or fitted as the local engine fits it, from
    what Spark aggregates (level-pattern counts of the candidate pairs and of the seeded
    random pairs, `chance_agreement` for a link); `frequencies(compared, comparisons,
    tf_columns, scorer)`: the term frequencies `fit_patterns` takes per TF comparison."""
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
        ri, rj = random_pairs(sizes if mode == "link" else [sum(sizes)], scorer.u_sample_size,
                              scorer.seed)
        drawn = spark.createDataFrame(
            pd.DataFrame({"l": ri.astype(np.int64), "r": rj.astype(np.int64),
                          "mask": np.zeros(len(ri), dtype=np.int64)}),
            schema="l long, r long, mask long")
        random_compared = compare(drawn, work, comparisons, names, [])
        random = random_matrix(comparisons, *level_patterns(random_compared, len(comparisons)))
    tf = frequencies(compared, comparisons, scorer.tf_columns, scorer)
    chance = chance_agreement(work, comparisons, names) if mode == "link" else None
    return fit_counts(scorer, comparisons, patterns, counts, random=random,
                      exact_frequencies=tf, chance=chance)
