"""The outputs of the distributed route, written by Spark, and summary.json from aggregates.

clusters.parquet, deduplicated.parquet / links.parquet and pairs.parquet are Parquet folders
(part files in order: each table is sorted by Spark, range-partitioned, then written), with
the local engine's columns and row order: clusters and deduplicated by record (the input's
order), links by cluster id then both ids, pairs by left then right record. The reasons are
formatted by the same expressions as `linkage.run.outputs` (per batch, in mapInPandas), so a
record's reason reads as it does locally. guards.parquet (the records of the clusters a split
cut) is small and written from the driver.

summary.json has the local engine's keys, each from a Spark aggregate (counts per level, per
cluster size, per action, per value of `source_column` and `report_columns`), except
`before_after` (the columns' value shares before and after, left out), and one more key,
`spark`, saying the route and what reached the driver.
"""

from __future__ import annotations

import contextlib
import shutil
import weakref
from pathlib import Path

import numpy as np
import pandas as pd

from linkage.clustering import (
    non_match_summary,
    split_decisions,
    split_summary,
    splits_non_matches,
)
from linkage.diagnostics import diagnose_counts, giant_possible, inconsistent_possible
from linkage.engines.spark._frames import pinned
from linkage.engines.spark._guards_distributed import DECISIONS, guard_summary
from linkage.engines.spark._text import matched_pairs, stage_of
from linkage.io import ParquetFrame, as_text
from linkage.result import Result
from linkage.run.stages import stage_bit, stage_reasons
from linkage.run.summary import (
    LevelTally,
    emptied_warnings,
    group_removal_warnings,
    removal_rate_warnings,
    scorer_report,
    skipped_block_warnings,
    versions,
)


def _remove(folder: Path) -> None:
    """Delete a folder Spark wrote, then the run's staging folder once it is empty."""
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        folder.parent.rmdir()


# pandas' nullable types for Arrow's integers and booleans (what pandas reads back from a
# file it wrote itself with such a column holding nulls)
_NULLABLE = {"int8": pd.Int8Dtype(), "int16": pd.Int16Dtype(), "int32": pd.Int32Dtype(),
             "int64": pd.Int64Dtype(), "uint8": pd.UInt8Dtype(), "uint16": pd.UInt16Dtype(),
             "uint32": pd.UInt32Dtype(), "uint64": pd.UInt64Dtype(), "bool": pd.BooleanDtype()}


def _to_pandas(table) -> pd.DataFrame:
    """A table Spark wrote, as the local engine's frame: an integer or boolean column that
    holds nulls becomes pandas' nullable type (Int64, boolean), not float64 or object, so an
    age of 41 reads 41 as it does locally, not 41.0. (Spark writes no pandas metadata, which
    is what tells pyarrow to do so for a file pandas wrote.)"""
    frame = table.to_pandas()
    for k, field in enumerate(table.schema):
        column = table.column(k)
        if str(field.type) in _NULLABLE and column.null_count:
            frame[field.name] = column.to_pandas(
                types_mapper={field.type: _NULLABLE[str(field.type)]}.get)
    return frame


class ParquetFolder(ParquetFrame):
    """A table Spark wrote as a Parquet folder (part files), read like a `ParquetFrame`:
    `len` and `columns` from the files' metadata, a column or the whole table read only when
    asked; `write_parquet` copies the folder (hard links where it can). The folder is removed
    with the last object that holds it."""

    def __init__(self, path: Path, *, temporary: bool = True):
        import pyarrow.dataset as ds

        self.path = Path(path)
        self._frame = None
        self._dataset = ds.dataset(self.path, format="parquet")
        if temporary:
            weakref.finalize(self, _remove, self.path)

    @property
    def columns(self) -> pd.Index:
        return pd.Index(self._dataset.schema.names)

    @property
    def num_row_groups(self) -> int:
        return sum(f.num_row_groups for f in self._dataset.get_fragments())

    def __len__(self) -> int:
        return self._dataset.count_rows()

    def __getitem__(self, key):
        if self._frame is None and isinstance(key, str) and key in self.columns:
            return _to_pandas(self._dataset.to_table(columns=[key]))[key]
        if self._frame is None and isinstance(key, list) and all(
                isinstance(k, str) and k in self.columns for k in key):
            return _to_pandas(self._dataset.to_table(columns=key))
        return self.to_pandas()[key]

    def to_pandas(self) -> pd.DataFrame:
        if self._frame is None:
            self._frame = _to_pandas(self._dataset.to_table())
        return self._frame

    def copy_to(self, path: Path) -> None:
        """The folder at `path`, file by file (hard links where the file system allows)."""
        import os

        def link(src, dst):
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)

        shutil.copytree(self.path, path, copy_function=link)

    def __repr__(self) -> str:
        return f"<ParquetFolder {self.path.name}: {len(self):,} rows x {len(self.columns)} columns>"


class DistributedResult(Result):
    """The `Result` of a distributed run: its tables are Parquet folders; its report is built
    from summary.json's counts (no table is read back to the driver for it)."""

    def report_view(self) -> Result:
        import dataclasses

        return dataclasses.replace(self, clusters=None, pairs=None, deduplicated=None,
                                   links=None)


def _write(frame, folder: Path) -> ParquetFolder:
    frame.write.mode("overwrite").parquet(str(folder))
    return ParquetFolder(folder)


def _two_decimals(weights: np.ndarray) -> np.ndarray:
    """`{:.2f}` of the weights rounded to 2 places, as `linkage.run.outputs` writes them."""
    return pd.Series(np.round(weights, 2)).map("{:.2f}".format).to_numpy(dtype=object)


def _cluster_batches(mode: str, threshold: float, id_name: str, stage_texts: list[str]):
    """mapInPandas: clusters.parquet's columns per record (and `row`, to sort by), with the
    reasons `linkage.run.outputs.record_outputs` gives (`stage_texts`: `stage_reasons`'
    texts, told where a stage matched the record's strongest link)."""
    lone = (f"no candidate pair at or above the threshold {threshold:g}" if mode == "dedupe"
            else f"no link at or above the threshold {threshold:g}")

    def run(batches):
        for b in batches:
            size = b["cluster_size"].to_numpy(dtype=np.int64)
            kept = b["kept"].to_numpy(dtype=bool)
            reasons = np.full(len(b), lone, dtype=object)
            linked = np.flatnonzero(size > 1)
            if len(linked):
                part = b.iloc[linked]
                via = part["_via"].astype(str).to_numpy(dtype=object)
                weights = _two_decimals(part["_bw"].to_numpy(dtype=np.float64))
                sizes = size[linked].astype(str).astype(object)
                tail = " (match weight " + weights + f" >= {threshold:g})"
                stage = part["_st"].to_numpy(dtype=np.int64)
                if (stage >= 0).any():
                    said = pd.Series(stage).map(dict(enumerate(stage_texts))).fillna("")
                    side = np.where(part["_bw"].to_numpy(dtype=np.float64) >= threshold,
                                    " >= ", " < ").astype(object)
                    tail = np.where(stage >= 0, " (" + said.to_numpy(dtype=object)
                                    + "; match weight " + weights + side + f"{threshold:g})",
                                    tail)
                if mode == "dedupe":
                    head = np.where(kept[linked], "kept for cluster of " + sizes,
                                    "duplicate of " + part["_rep"].astype(str).to_numpy(
                                        dtype=object))
                    degree = part["_degree"].to_numpy(dtype=np.int64).astype(str).astype(object)
                    text = head + ": linked by " + degree + " pair(s), strongest with " + via \
                        + tail
                else:
                    text = "linked with " + via + tail + " in cluster of " + sizes
                reasons[linked] = text
            out = pd.DataFrame({"row": b["row"].to_numpy(dtype=np.int64)})
            if mode == "link":
                out["source"] = np.where(b["_side"].to_numpy() == 0, "left", "right")
            out[id_name] = b["_id"].to_numpy()
            out["cluster_id"] = b["cluster_id"].to_numpy(dtype=np.int64)
            out["cluster_size"] = size
            if mode == "dedupe":
                actions = np.where(kept, "keep", "duplicate").astype(object)
            else:
                actions = np.full(len(b), "keep", dtype=object)
            groups = np.full(len(b), None, dtype=object)
            if "_gaction" in b.columns:  # guards speak last, as `record_outputs` has it
                action = as_text(b["_gaction"])
                guarded = ~pd.isna(action)
                actions[guarded] = action[guarded]
                reasons[guarded] = as_text(b["_greason"])[guarded]
                groups = as_text(b["_ggroup"])
            out["action"] = pd.Series(actions, dtype=object)
            out["reason"] = pd.Series(reasons, dtype=object)
            out["representative_id"] = b["_rep"].to_numpy()
            out["review_group"] = pd.Series(groups, dtype=object)
            yield out

    return run


def _id_type(ids_table) -> str:
    return ids_table.schema["_id"].dataType.simpleString()


def write_outputs(spark, mode, tables, rules, scorer, staging: Path, *, id_name, id_column,
                  sizes, work, scored, blocked, split, clusters, ranks, ids_table,
                  normalize_stats, exact_stats, clock, golden=None, guarded=None) -> Result:
    """Write the outputs under `staging` and return the run's `Result` (its tables as
    `ParquetFolder`s, its summary from aggregates); `golden`: golden.parquet's rows, sorted;
    `guarded`: what the guards did (`_guards_distributed.Guarded`)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from linkage.engines.spark._read import ROW, with_row_id

    staging.mkdir(parents=True, exist_ok=True)
    n = sum(sizes)
    threshold = float(scorer.threshold)
    edges = split.edges
    ids = ids_table.select("row", "_id", "_side")

    # -- clusters.parquet: each record's strongest accepted link and its degree
    both = edges.select(F.col("l").alias("row"), F.col("r").alias("other"), "w",
                        "st").unionByName(
        edges.select(F.col("r").alias("row"), F.col("l").alias("other"), "w", "st"))
    strongest = Window.partitionBy("row").orderBy(F.col("w").desc(), F.col("other").asc())
    best = (both.withColumn("_k", F.row_number().over(strongest))
            .withColumn("_degree", F.count(F.lit(1)).over(Window.partitionBy("row")))
            .where(F.col("_k") == 1).select("row", "other", F.col("w").alias("_bw"),
                                            F.col("st").alias("_st"), "_degree"))
    via = ids.select(F.col("row").alias("other"), F.col("_id").alias("_via"))
    rep = ids.select(F.col("row").alias("representative"), F.col("_id").alias("_rep"))
    per_record = (clusters.join(ranks.select("row", "representative", "kept"), "row")
                  .join(ids, "row").join(rep, "representative")
                  .join(best, "row", "left").join(via, "other", "left"))
    if guarded is not None:
        per_record = per_record.join(guarded.states.select(
            "row", F.col("action").alias("_gaction"), F.col("reason").alias("_greason"),
            F.col("grp").alias("_ggroup")), "row", "left")
    id_type = _id_type(ids_table)
    schema = ", ".join(["row long", *(["source string"] if mode == "link" else []),
                        f"`{id_name}` {id_type}", "cluster_id long", "cluster_size long",
                        "action string", "reason string", f"representative_id {id_type}",
                        "review_group string"])
    stage_texts = [text for _, text in stage_reasons(rules)]
    cluster_rows = per_record.mapInPandas(_cluster_batches(mode, threshold, id_name,
                                                           stage_texts), schema)
    outputs = {"clusters": _write(cluster_rows.orderBy("row").drop("row"),
                                  staging / "clusters.parquet")}

    # -- deduplicated.parquet / links.parquet
    # Each record's action: the keeper's, or a guard's (preserved, review) where it gave one.
    final = ranks.select("row", "kept", F.lit(None).cast("string").alias("_gaction"))
    if guarded is not None:
        final = ranks.select("row", "kept").join(guarded.states.select(
            "row", F.col("action").alias("_gaction")), "row", "left")
    action = F.coalesce(F.col("_gaction"), F.when(F.col("kept") | F.lit(mode == "link"),
                                                  F.lit("keep")).otherwise(F.lit("duplicate")))
    # pinned by the count of the actions, which reads it first
    final = final.select("row", "kept", action.alias("action")).transform(pinned, lazy=True)
    columns = ([c for c in dict.fromkeys([rules.source_column, *rules.report_columns]) if c]
               if mode == "dedupe" else [])
    by_action, removals = _per_action(tables[0], columns, final)
    if mode == "dedupe":
        kept_rows = final.where(F.col("action") != "duplicate").select(F.col("row").alias(ROW))
        kept = with_row_id(tables[0], id_name).join(kept_rows, ROW)
        outputs["deduplicated"] = _write(kept.orderBy(ROW).drop(ROW),
                                         staging / "deduplicated.parquet")
        if guarded is not None and by_action.get("review", 0):
            # review.parquet: the review records, by review group then id, as locally
            states = guarded.states.where(F.col("action") == "review").select(
                F.col("row").alias(ROW), F.col("grp").alias("review_group"),
                F.col("reason").alias("_reason"))
            of_cluster = clusters.select(F.col("row").alias(ROW), "cluster_id")
            table = with_row_id(tables[0], id_name)
            review = (table.join(states, ROW).join(of_cluster, ROW)
                      .select("review_group", "cluster_id", F.col("_reason").alias("reason"),
                              *[F.col(f"`{c}`") for c in table.columns if c != ROW]))
            outputs["review"] = _write(review.orderBy("review_group", f"`{id_name}`"),
                                       staging / "review.parquet")
    else:
        cluster_of = clusters.select(F.col("row").alias("l"), "cluster_id")
        links = (edges.join(ids.select(F.col("row").alias("l"), F.col("_id").alias("id_l")), "l")
                 .join(ids.select(F.col("row").alias("r"), F.col("_id").alias("id_r")), "r")
                 .join(cluster_of, "l")
                 .select("id_l", "id_r", F.col("w").cast("double").alias("match_weight"),
                         "cluster_id"))
        outputs["links"] = _write(links.orderBy("cluster_id", "id_l", "id_r"),
                                  staging / "links.parquet")

    if golden is not None:
        outputs["golden"] = _write(golden, staging / "golden.parquet")

    # -- pairs.parquet
    # matched before the edge guards and splits (`_dm`: after the domain thresholds)
    is_match = F.col("_dm") if "_dm" in scored.columns else matched_pairs(rules, threshold)
    pairs = scored
    removed = [r for r in (None if guarded is None else guarded.removed, split.removed)
               if r is not None]
    if removed:
        cut = removed[0]
        for more in removed[1:]:
            cut = cut.unionByName(more)
        pairs = pairs.join(cut.distinct().withColumn("_cut", F.lit(True)), ["l", "r"], "left")
        is_match = is_match & F.col("_cut").isNull()
    tf_columns = scorer.tf_columns
    columns = [F.col("_il").alias("id_l"), F.col("_ir").alias("id_r"),
               F.col("mask").alias("blockers")]
    for c, comparison in enumerate(rules.comparisons):
        name = comparison.output_name
        columns += [F.col(f"lev{c}").alias(f"{name}_level"),
                    F.col(f"sim{c}").alias(f"{name}_similarity")]
    for c, comparison in enumerate(rules.comparisons):
        if comparison.output_name in tf_columns:
            columns.append(F.col(f"tf{c}").alias(f"{comparison.output_name}_tf"))
    columns += ["match_weight", "match_probability", is_match.alias("is_match")]
    pair_rows = (pairs.join(ids.select(F.col("row").alias("l"), F.col("_id").alias("_il")), "l")
                 .join(ids.select(F.col("row").alias("r"), F.col("_id").alias("_ir")), "r"))
    outputs["pairs"] = _write(pair_rows.orderBy("l", "r").select(*columns),
                              staging / "pairs.parquet")

    decisions = split_decisions(split.splits, split.ids)
    counts: dict[str, dict[str, int]] = {}
    if guarded is not None:
        for row in guarded.decisions.groupBy("guard", "decision").count().collect():
            counts.setdefault(row["guard"], {})[row["decision"]] = int(row["count"])
    guard_rows = sum(sum(c.values()) for c in counts.values())
    for d in decisions:
        by_guard = counts.setdefault(d["guard"], {})
        by_guard[d["decision"]] = by_guard.get(d["decision"], 0) + 1
    if guard_rows:
        # The guards' decisions in the local order (Spark's), then the splits' (few).
        rows = guarded.decisions
        if decisions:
            splits = spark.createDataFrame(pd.DataFrame(decisions).astype({"record_id": str}),
                                           DECISIONS)
            rows = rows.unionByName(splits.select(
                "*", F.lit(1 << 40).cast("long").alias("_o1"),
                F.monotonically_increasing_id().alias("_o2"), F.lit(0).cast("long")
                .alias("_o3")).coalesce(1))
        outputs["guards"] = _write(rows.orderBy("_o1", "_o2", "_o3").drop(
            "_o1", "_o2", "_o3"), staging / "guards.parquet")
    elif decisions:
        outputs["guards"] = pd.DataFrame(decisions).astype({"record_id": str})

    summary = _summary(spark, mode, tables, rules, scorer, n, sizes, id_column, normalize_stats,
                       exact_stats, blocked, scored, is_match, pairs, clusters, by_action,
                       removals, split, counts,
                       links=len(outputs["links"]) if mode == "link" else None)
    return DistributedResult.from_outputs(mode, rules, outputs, summary, clock.timings, scorer)


def _summary(spark, mode, tables, rules, scorer, n, sizes, id_column, normalize_stats,
             exact_stats, blocked, scored, is_match, pairs, clusters, by_action, removals,
             split, counts, links=None):
    """summary.json as `linkage.run.summary.build_summary` writes it, from aggregates (few
    jobs: each small Spark job costs a run a tenth of a second or more); `by_action`,
    `removals`: `_per_action`'s; `links`: the rows of links.parquet (read from its files'
    metadata)."""
    from pyspark.sql import functions as F

    from linkage.blocking import blocker_names
    from linkage.normalize import NORMALIZATION_VERSION
    from linkage.run.state import ROW_ID
    from linkage.version import __version__

    threshold = float(scorer.threshold)
    comparisons = rules.comparisons
    # Levels per comparison, pairs at or above the threshold, matched pairs, whether an
    # exact, url or copies stage matched one: one pass.
    bits = sum(stage_bit(rules, name) for name in ("exact", "url", "copies"))
    identical = F.col("mask").bitwiseAND(F.lit(bits).cast("long")) != 0
    sums = [F.count(F.lit(1)).alias("n"),
            F.sum((F.col("match_weight") >= F.lit(threshold)).cast("long")).alias("above"),
            F.sum(is_match.cast("long")).alias("matched"),
            F.max((is_match & identical).cast("int")).alias("identical"),
            F.sum((is_match & ~identical).cast("long")).alias("own"),
            F.sum((~is_match).cast("long")).alias("unmatched")]
    for c, comparison in enumerate(comparisons):
        for level in range(-1, len(comparison.level_labels)):
            sums.append(F.sum((F.col(f"lev{c}") == level).cast("long")).alias(f"l{c}_{level + 1}"))
    reasons = stage_reasons(rules)
    below = is_match & (F.col("match_weight") < F.lit(threshold))
    if reasons:  # `matched_by_stage`: the matched pairs below the threshold, per stage
        stage = stage_of(rules)
        sums += [F.sum((below & (stage == k)).cast("long")).alias(f"stage{k}")
                 for k in range(len(reasons))]
    counted = pairs.agg(*sums).first()
    tally = LevelTally.empty(comparisons)
    tally.pairs = int(counted["n"])
    for c, comparison in enumerate(comparisons):
        tally.counts[c] = np.array([int(counted[f"l{c}_{j}"] or 0)
                                    for j in range(len(comparison.level_labels) + 1)],
                                   dtype=np.int64)
    above, matched = int(counted["above"] or 0), int(counted["matched"] or 0)

    # Records per cluster size (and, in a link, those of the left table): one job.
    per_size = clusters.groupBy("cluster_size").agg(
        F.count(F.lit(1)).alias("records"),
        *([F.sum((F.col("row") < F.lit(sizes[0])).cast("long")).alias("left")]
          if mode == "link" else [])).collect()
    by_size = {int(r["cluster_size"]): int(r["records"]) for r in per_size}
    histogram = {str(s): by_size[s] // s for s in sorted(by_size)}
    n_clusters = sum(by_size[s] // s for s in by_size)
    several = sum(by_size[s] // s for s in by_size if s > 1)
    largest = max(by_size, default=0)
    action_counts = {a: by_action.get(a, 0) for a in ("keep", "duplicate", "preserved",
                                                      "review")}

    all_pairs = n * (n - 1) // 2 if mode == "dedupe" else sizes[0] * sizes[1]
    names = blocker_names(rules.blocking)
    pairs_count = blocked.count
    summary = {
        "linkage_version": __version__,
        "mode": mode,
        "engine": "spark",
        "inputs": [{"name": t.name, "records": t.records, "checksum": t.checksum}
                   for t in tables],
        "id_column": id_column or ROW_ID,
        "rules": {"source": rules.source, "config_hash": rules.config_hash(),
                  "seed": getattr(rules.scoring, "seed", None)},
        "normalization_version": NORMALIZATION_VERSION,
        "versions": {**versions(rules), "spark": spark.version},
        "stages": {
            "read": {"records": n},
            "normalize": normalize_stats,
            "block": {
                "blockers": {
                    name: {"rule": b.describe(), "estimated_pairs": blocked.estimated[name],
                           "proposed_pairs": blocked.proposed[name]}
                    for name, b in zip(names, rules.blocking, strict=True)},
                "candidate_pairs": pairs_count,
                "reduction_ratio": round(1 - pairs_count / all_pairs, 6) if all_pairs else 0.0,
                "skipped_blocks": [vars(s) for s in blocked.skipped],
            },
            "compare": {"pairs": tally.pairs, "levels": tally.as_dict()},
            "score": {"scorer": rules.scoring.kind, "threshold": rules.scoring.threshold,
                      "pairs_at_or_above_threshold": above, "matched_pairs": matched},
            "cluster": {"clusters": n_clusters, "clusters_with_several_records": several,
                        "largest_cluster": largest, "size_histogram": histogram},
            "keep": rules.keep.to_dict() if mode == "dedupe" else {},
        },
        "actions": action_counts,
        "warnings": skipped_block_warnings(blocked.skipped, rules.max_block_size),
    }
    summary["warnings"] += emptied_warnings(normalize_stats, n, rules.source)
    if mode == "dedupe":
        removal_rate = action_counts["duplicate"] / n if n else 0.0
        summary["removal_rate"] = round(removal_rate, 6)
        summary["removals_by"] = removals
        summary["warnings"] += removal_rate_warnings(removal_rate, rules.max_removal_rate)
        summary["warnings"] += group_removal_warnings(summary["removals_by"], removal_rate,
                                                      rules.max_removal_rate)
    else:
        left = sum(int(r["left"]) for r in per_size if int(r["cluster_size"]) > 1)
        linked = sum(by_size[s] for s in by_size if s > 1)
        summary["linked_records"] = {"left": left, "right": linked - left}
    if reasons:
        summary["stages"]["score"]["matched_by_stage"] = {
            name: int(counted[f"stage{k}"] or 0) for k, (name, _) in enumerate(reasons)}
    summary["stages"]["score"].update(scorer_report(scorer))
    for name, stats in exact_stats.items():
        summary["stages"][name] = stats
    summary["stages"]["guard"] = guard_summary(rules, counts)
    if mode == "link":
        summary["links"] = int(links)
    if rules.split_weak_links:
        summary["stages"]["cluster"]["split_weak_links"] = split_summary(
            split.splits, np.array([split.largest_before]))
    if splits_non_matches(rules, scorer):
        summary["stages"]["cluster"]["split_non_matches"] = non_match_summary(split.splits)
    # Clusters holding a scored pair that is not a match (`_inconsistent`): counted where
    # the diagnostic could name them (the joins and the job are most of a small run's summary).
    flagged = 0
    if inconsistent_possible(several, int(counted["unmatched"] or 0)):
        roots_l = clusters.select(F.col("row").alias("l"), F.col("cluster_id").alias("_cl"))
        roots_r = clusters.select(F.col("row").alias("r"), F.col("cluster_id").alias("_cr"))
        flagged = (pairs.where(~is_match).select("l", "r").join(roots_l, "l")
                   .join(roots_r, "r").where(F.col("_cl") == F.col("_cr")).select("_cl")
                   .distinct().count())
    linked_records = sum(by_size[s] for s in by_size if s > 1)
    giant = {"largest": largest, "linked": linked_records, "matched_pairs": matched}
    has_identical = bool(counted["identical"])
    # The giant-cluster test reads the model's own links (`add_diagnostics`), whose components
    # lie inside the clusters: counted where a cluster is large enough for the test to fire.
    if has_identical and giant_possible(n, largest):
        giant = _own_components(spark, pairs.where(is_match & ~identical), n,
                                int(counted["own"] or 0))
    summary["diagnostics"], summary["model_reliable"] = diagnose_counts(
        summary, scorer, rules.max_removal_rate, n, several=several, flagged=int(flagged),
        identical=has_identical, **giant)
    summary["spark"] = {"route": "distributed", "pairs_to_driver": split.gathered_pairs,
                        "records_to_driver": split.gathered_rows}
    return summary


def _own_components(spark, own, n: int, count: int) -> dict[str, int]:
    """The largest component of the matched pairs `own` (l, r; `count` of them), the records
    in components of several, and the pairs."""
    from pyspark.sql import functions as F

    from linkage.engines.spark._graph import component_roots

    roots = component_roots(spark, own.select(F.col("l").alias("a"), F.col("r").alias("b")), n,
                            lazy=True)  # read once, by the aggregate below
    sizes = roots.groupBy("root").agg(F.count(F.lit(1)).alias("size")).where("size > 1")
    row = sizes.agg(F.max("size").alias("largest"), F.sum("size").alias("linked")).first()
    return {"largest": int(row["largest"] or (1 if n else 0)), "linked": int(row["linked"] or 0),
            "matched_pairs": count}


def _per_action(table, columns: list[str], ranks):
    """The records per action, and `linkage.run.summary.removals_by` for each of `columns`
    (its values as text): one aggregate over each record's action and values, exploded to
    (dimension, value)."""
    from pyspark.sql import functions as F

    from linkage.before_after import MISSING
    from linkage.engines.spark._read import ROW

    frame = ranks.select("row", "action")
    keys = [F.struct(F.lit(0).alias("k"), F.col("action").alias("key"))]
    if columns:
        frame = frame.join(table.frame.select(F.col(ROW).alias("row"), *[
            F.col(f"`{c}`").alias(f"v{j}") for j, c in enumerate(columns)]), "row")
        keys += [F.struct(F.lit(j + 1).alias("k"), F.coalesce(
            F.col(f"v{j}").cast("string"), F.lit(MISSING)).alias("key"))
            for j in range(len(columns))]
    removed = (F.col("action") == "duplicate").cast("long")
    rows = (frame.select(F.explode(F.array(*keys)).alias("d"), removed.alias("removed"))
            .groupBy(F.col("d.k").alias("k"), F.col("d.key").alias("key"))
            .agg(F.count(F.lit(1)).alias("size"), F.sum("removed").alias("sum")).collect())
    by_action = {r["key"]: int(r["size"]) for r in rows if r["k"] == 0}
    # by value, as Spark orders text (its UTF-8 bytes: the code points' order, as Python's)
    return by_action, {c: _removals_by(sorted((r for r in rows if r["k"] == j + 1),
                                              key=lambda r: r["key"]))
                       for j, c in enumerate(columns)}


def _removals_by(rows) -> dict[str, dict]:
    """`linkage.run.summary.removals_by` from (key, size, sum) rows, in the values' order."""
    before = sum(int(r["size"]) for r in rows)
    kept = sum(int(r["size"]) - int(r["sum"]) for r in rows)
    return {str(r["key"]): {
        "records": int(r["size"]), "removed": int(r["sum"]),
        "removal_rate": round(int(r["sum"]) / int(r["size"]), 6),
        "share_before": round(int(r["size"]) / before, 6),
        "share_after": round((int(r["size"]) - int(r["sum"])) / kept, 6) if kept else 0.0}
        for r in rows}
