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
    level_patterns,
)
from linkage.engines.spark._em import chance_agreement, fit_counts, random_matrix
from linkage.engines.spark._frames import shuffle_partitions
from linkage.engines.spark._normalize import normalize
from linkage.engines.spark._supervised import score_pairs
from linkage.engines.spark._text import semantic_distributed, stage_proposed, stage_stars
from linkage.engines.spark.session import task_errors
from linkage.pipeline import check_link_stages, load_model, random_pairs, record_pairs
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
    centroid: object = None  # (row, d): the semantic stage's centroid distances, or None


def score_on_spark(spark, mode, rules, records, names, raw, fit, clock, bar, cached, *,
                   combined=None, ids=None, on_scored=None, kept=None, staging=None,
                   n=0) -> Scored:
    """Run the shared stages over `records`. `fit(scorer, compared, work)`: the fitted scorer;
    `cached`: a list the cached frames are added to (the caller unpersists them);
    `combined`, `ids`: the table on the driver, where the driver route holds it (a normalizer's
    error is then raised as locally); `on_scored(scored, scorer)`: run inside the score stage;
    `kept`: a `_resume.SparkCheckpoint` (--resume): the candidate and compared pairs of an
    earlier run read back instead of made, else kept there as each stage finishes;
    `staging`: the url, exact and semantic stages' input (`stage_records`' records frame, the
    Spark names of its columns, the exact stage's columns) and `n` the records, for rules with
    those stages (`_text`: stars by stage, one record per group on, SemDeDup's pairs)."""
    partitions = shuffle_partitions(spark)
    with clock.stage("normalize"):
        work, normalize_stats = normalize(records, rules, names, raw, combined, ids)
        cached.append(work)
        bar.update(1)

    def stages_and_block():
        with clock.stage("exact"), task_errors():
            # url, exact and copies: stars by stage, one record per group goes on (`_text`)
            check_link_stages(rules, mode)
            stars, blocked_work, exact_stats = {}, work, {}
            if mode == "dedupe":
                stage_input = staging or (None, {}, [])
                stars, exact_stats, blocked_work = stage_stars(
                    spark, work, *stage_input, rules, copies(work, rules, names)[0], n)
            cached.extend(stars.values())

        centroid = None
        with clock.stage("block"), task_errors():
            check_link_stages(rules, mode, semantic=True)
            if rules.semantic is not None:  # SemDeDup's pairs join the blocked (`_text`)
                stars["semantic"], centroid, semantic_stats = semantic_distributed(
                    spark, *staging[:2], rules, stars, n)
            blocked = block(spark, blocked_work, rules, names, mode == "link", partitions,
                            stars or None, gather=False)
            blocked.proposed.update(stage_proposed(stars, exact_stats))
            if rules.semantic is not None:
                blocked.proposed["semantic"] = semantic_stats["duplicate_pairs"]
                exact_stats["semantic"] = semantic_stats
        return blocked, exact_stats, centroid

    if kept is None or rules.semantic is not None:
        # (the semantic stage's centroid distances are a Spark frame here: not kept)
        (blocked, exact_stats, centroid), resumed = stages_and_block(), False
    else:
        (blocked, exact_stats, centroid), resumed = kept.blocked(spark, stages_and_block)
    cached.append(blocked.pairs)
    if resumed:
        clock.timings["block"] = 0.0  # as the local engine reports a resumed stage
    bar.update(1)

    tf_columns = rules.scoring.tf_columns
    compared = compare_stage(spark, clock, bar, cached, kept, lambda: compare(
        blocked.pairs, work, rules.comparisons, names, tf_columns))

    with clock.stage("score"), task_errors():
        scorer = fit(rules.scoring, compared, work)
        scored = score_pairs(compared, scorer, rules.comparisons, tf_columns,
                             partitions).cache()
        cached.append(scored)
        if on_scored is not None:
            on_scored(scored, scorer)
        bar.update(1)
    return Scored(work, normalize_stats, exact_stats, blocked, scorer, scored, centroid)


def compare_stage(spark, clock, bar, cached: list, kept, make):
    """The compare stage of both routes: the compared pairs `make()` gives, or those an
    earlier run kept (`kept`, --resume; None: none kept), cached; a resumed stage is timed 0
    s, as the local engine reports it."""
    with clock.stage("compare"), task_errors():
        compared, resumed = (make(), False) if kept is None else kept.compared(spark, make)
        compared = compared.cache()
        cached.append(compared)
        bar.update(1)
    if resumed:
        clock.timings["compare"] = 0.0
    return compared

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
        random.population = record_pairs(sizes if mode == "link" else [sum(sizes)])
    tf = frequencies(compared, comparisons, scorer.tf_columns, scorer)
    chance = chance_agreement(work, comparisons, names) if mode == "link" else None
    return fit_counts(scorer, comparisons, patterns, counts, random=random,
                      exact_frequencies=tf, chance=chance)
