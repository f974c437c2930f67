"""summary.json: what a run did, stage by stage, with its warnings and diagnostics."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from linkage.before_after import before_after, value_labels
from linkage.blocking import blocker_names
from linkage.clustering import non_match_summary, split_summary, splits_non_matches
from linkage.diagnostics import diagnose
from linkage.run.stages import stage_bit
from linkage.run.state import ROW_ID
from linkage.scoring import ComparisonMatrix
from linkage.settings import Rules
from linkage.version import __version__


def build_summary(mode, tables, rules, n, sizes, normalize_stats, pairs, matrix, matched, clusters,
             cluster_frame, id_column, records, *, above: int | None = None):
    """`above`: the pairs whose match weight reaches the threshold, when stages or guards
    make that differ from the pairs `matched`."""
    from linkage.normalize import NORMALIZATION_VERSION

    all_pairs = n * (n - 1) // 2 if mode == "dedupe" else sizes[0] * sizes[1]
    tally = matrix if isinstance(matrix, LevelTally) else LevelTally.of(matrix)
    level_counts = tally.as_dict()
    cluster_sizes = np.bincount(clusters)
    histogram = {str(int(s)): int(c) for s, c in
                 zip(*np.unique(cluster_sizes, return_counts=True), strict=True)}
    actions = cluster_frame["action"].value_counts().to_dict()
    action_counts = {a: int(actions.get(a, 0)) for a in ("keep", "duplicate", "preserved",
                                                         "review")}
    names = blocker_names(rules.blocking)
    summary = {
        "linkage_version": __version__,
        "mode": mode,
        "engine": "local",
        "inputs": [
            {"name": t.name, "records": len(t.frame), "checksum": t.checksum} for t in tables
        ],
        "id_column": id_column or ROW_ID,
        "rules": {"source": rules.source, "config_hash": rules.config_hash(),
                  "seed": getattr(rules.scoring, "seed", None)},
        "normalization_version": NORMALIZATION_VERSION,
        "versions": versions(rules),
        "stages": {
            "read": {"records": n},
            "normalize": normalize_stats,
            "block": {
                "blockers": {
                    name: {
                        "rule": b.describe(),
                        "estimated_pairs": pairs.estimated[name],
                        "proposed_pairs": pairs.proposed[name],
                    }
                    for name, b in zip(names, rules.blocking, strict=True)
                },
                "candidate_pairs": len(pairs),
                "reduction_ratio": round(1 - len(pairs) / all_pairs, 6) if all_pairs else 0.0,
                "skipped_blocks": [vars(s) for s in pairs.skipped],
            },
            "compare": {"pairs": tally.pairs, "levels": level_counts},
            "score": {
                "scorer": rules.scoring.kind,
                "threshold": rules.scoring.threshold,
                "pairs_at_or_above_threshold": int(matched.sum()) if above is None else above,
                "matched_pairs": int(matched.sum()),
            },
            "cluster": {
                "clusters": len(cluster_sizes),
                "clusters_with_several_records": int((cluster_sizes > 1).sum()),
                "largest_cluster": int(cluster_sizes.max()) if len(cluster_sizes) else 0,
                "size_histogram": histogram,
            },
            "keep": rules.keep.to_dict() if mode == "dedupe" else {},
        },
        "actions": action_counts,
        "warnings": skipped_block_warnings(pairs.skipped, rules.max_block_size),
    }
    summary["warnings"] += emptied_warnings(normalize_stats, n, rules.source)
    if mode == "dedupe":
        removal_rate = action_counts["duplicate"] / n if n else 0.0
        summary["removal_rate"] = round(removal_rate, 6)
        removed = (cluster_frame["action"] == "duplicate").to_numpy()
        columns = [c for c in [rules.source_column, *rules.report_columns] if c]
        summary["removals_by"] = {c: removals_by(records[c], removed) for c in columns}
        summary["before_after"] = before_after(records, removed, rules)
        summary["warnings"] += removal_rate_warnings(removal_rate, rules.max_removal_rate)
        summary["warnings"] += group_removal_warnings(summary["removals_by"], removal_rate,
                                                      rules.max_removal_rate)
    else:
        # Column by column: `cluster_frame` may be a ParquetFrame.
        linked = (cluster_frame["cluster_size"] > 1).to_numpy()
        sides = cluster_frame["source"].to_numpy()
        summary["linked_records"] = {
            side: int((linked & (sides == side)).sum()) for side in ("left", "right")
        }
    return summary


@dataclass
class LevelTally:
    """Pairs per level of each comparison (index 0 = null), for summary.json; added up batch
    by batch when the comparison matrix is never held whole."""

    comparisons: list
    counts: list[np.ndarray]
    pairs: int = 0

    @classmethod
    def empty(cls, comparisons: list) -> LevelTally:
        return cls(list(comparisons),
                   [np.zeros(len(c.level_labels) + 1, dtype=np.int64) for c in comparisons])

    @classmethod
    def of(cls, matrix: ComparisonMatrix) -> LevelTally:
        tally = cls.empty(matrix.comparisons)
        tally.add(matrix.levels)
        return tally

    def add(self, levels: np.ndarray) -> None:
        for c, comparison in enumerate(self.comparisons):
            self.counts[c] += np.bincount(levels[:, c].astype(np.int64) + 1,
                                          minlength=len(comparison.level_labels) + 1)
        self.pairs += len(levels)

    def as_dict(self) -> dict[str, dict[str, int]]:
        out = {}
        for comparison, counts in zip(self.comparisons, self.counts, strict=True):
            labels = ["null", *comparison.level_labels]
            out[comparison.output_name] = {
                label: int(count) for label, count in zip(labels, counts, strict=True)}
        return out


def _installed(package: str) -> str:
    """A package's version as installed (jellyfish 1.x has no `__version__`)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def versions(rules: Rules) -> dict[str, Any]:
    import pyarrow
    import rapidfuzz
    import scipy

    versions: dict[str, Any] = {
        "linkage": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "pyarrow": pyarrow.__version__,
        "rapidfuzz": rapidfuzz.__version__,
        "jellyfish": _installed("jellyfish"),
        "scipy": scipy.__version__,
    }
    from linkage.text.embeddings import STATIC_MODEL, embedding_models, model_manifest

    models = embedding_models(rules)
    if models:  # the libraries and weights behind the vectors; read, never imported here
        from importlib.metadata import PackageNotFoundError, version

        libraries = ["torch", "sentence-transformers"]
        libraries += ["model2vec"] if STATIC_MODEL in models else []
        for library in libraries:
            try:
                versions[library] = version(library)
            except PackageNotFoundError:
                versions[library] = "not installed"
        versions["embedding_models"] = {m: model_manifest(m) for m in models}
    return versions


def add_diagnostics(summary: dict, rules: Rules, scorer, splits: list[dict],
                    component_sizes: np.ndarray, clusters: np.ndarray, left: np.ndarray,
                    right: np.ndarray, matched: np.ndarray, mask=None) -> None:
    """summary.json's `stages.cluster.split_weak_links`, `diagnostics` and `model_reliable`
    (`linkage.diagnostics`), from the final clusters and matched pairs (`mask`: the pairs'
    blocker bits, which tell the pairs a stage proved identical)."""
    if rules.split_weak_links:
        summary["stages"]["cluster"]["split_weak_links"] = split_summary(splits,
                                                                         component_sizes)
    if splits_non_matches(rules, scorer):
        summary["stages"]["cluster"]["split_non_matches"] = non_match_summary(splits)
    identical = None
    if mask is not None:
        bits = sum(stage_bit(rules, name) for name in ("exact", "url", "copies"))
        identical = (np.asarray(mask, dtype=np.int64) & bits) > 0
    summary["diagnostics"], summary["model_reliable"] = diagnose(
        summary, scorer, rules.max_removal_rate, len(clusters), clusters, left, right, matched,
        identical)


def guard_counts(rules: Rules, decisions: list[dict]) -> dict[str, dict[str, int]]:
    """Per guard of the rules, how many records got each decision (for summary.json)."""
    return {
        g.guard_name: {
            decision: sum(1 for d in decisions
                          if d["guard"] == g.guard_name and d["decision"] == decision)
            for decision in sorted({d["decision"] for d in decisions
                                    if d["guard"] == g.guard_name})
        }
        for g in rules.guards
    }


def scorer_report(scorer) -> dict:
    """What the fitted scorer learned that a reviewer should see in summary.json."""
    report: dict = {"threshold": float(scorer.threshold)}
    if hasattr(scorer, "prior_"):  # Fellegi-Sunter
        report.update(prior=round(float(scorer.prior_), 8), em_iterations=scorer.n_iterations_,
                      em_converged=bool(scorer.converged_))
    if hasattr(scorer, "cv_precision_"):  # supervised: the cross-validated threshold
        report.update(probability_threshold=round(scorer.threshold_, 6),
                      cv_precision=round(scorer.cv_precision_, 4),
                      cv_recall=round(scorer.cv_recall_, 4), cv_f1=round(scorer.cv_f1_, 4),
                      labelled_pairs=int(scorer.n_labelled_))
    return report


def emptied_warnings(normalize_stats: dict, n: int, source: str) -> list[str]:
    """A warning per normalize step that turned values into missing ones: they then neither
    block nor compare, which changes results, so it is never silent."""
    from linkage.settings import Normalize

    out = []
    for target, step in normalize_stats.items():
        if not step.get("emptied"):
            continue
        into = f" (into `{target}`)" if target != step["from"] else ""
        examples = ", ".join(repr(v) for v in step["emptied_examples"])
        fix = " or `on_error: raise` to stop on them" if Normalize.has_on_error(
            step["normalizer"]) else ""
        out.append(
            f"normalizer `{step['normalizer']}` on column `{step['from']}`{into} could not read "
            f"the value of {step['emptied']:,} of {n:,} records ({step['emptied'] / n:.1%}), "
            f"now missing, so they neither block nor compare (e.g. {examples}). Fix the values, "
            f"or the step's options in {source}{fix}."
        )
    return out


def removals_by(values: pd.Series, removed: np.ndarray) -> dict[str, dict]:
    """Per value of a column: records, removed, removal rate, and its share before and after."""
    frame = pd.DataFrame({"value": value_labels(values).to_numpy(), "removed": removed})
    grouped = frame.groupby("value", sort=True)["removed"].agg(["size", "sum"])
    before, kept = grouped["size"].sum(), (grouped["size"] - grouped["sum"]).sum()
    return {
        str(value): {
            "records": int(row["size"]),
            "removed": int(row["sum"]),
            "removal_rate": round(row["sum"] / row["size"], 6),
            "share_before": round(row["size"] / before, 6),
            "share_after": round((row["size"] - row["sum"]) / kept, 6) if kept else 0.0,
        }
        for value, row in grouped.iterrows()
    }


def removal_rate_warnings(removal_rate: float, limit: float) -> list[str]:
    """The warning when the run removed more than `max_removal_rate` of the records."""
    if removal_rate <= limit:
        return []
    return [f"{removal_rate:.1%} of the records were removed as duplicates, above "
            f"`max_removal_rate` ({limit:.0%}): if this table should hold few duplicates, the "
            "ingestion may be loading rows twice. Check the loads, or raise `max_removal_rate` "
            "in the rules if this is expected."]


def group_removal_warnings(by: dict[str, dict[str, dict]], table_rate: float,
                           limit: float) -> list[str]:
    """A warning per value of a `removals_by` column that lost more than `limit` of its
    records, beyond chance: the lower end of the 95% Wilson interval of its removal rate is
    above the limit, so 1 removed of 2 records (interval 9%-91%) says nothing, 40 of 100
    (31%-50%) does. A column with one value repeats the table-wide figure and is left out."""
    from linkage.measure.calibrate import wilson

    out = []
    for column, values in by.items():
        if len(values) < 2:
            continue
        for value, v in values.items():
            low, high = wilson(v["removed"], v["records"])
            if low > limit:
                out.append(
                    f"`{column}` {value!r}: {v['removal_rate']:.1%} of its {v['records']:,} "
                    f"records were removed as duplicates (95% interval {low:.1%}-{high:.1%}), "
                    f"above `max_removal_rate` ({limit:.0%}), while the whole table lost "
                    f"{table_rate:.1%}. Check how the {value!r} records were loaded, or raise "
                    "`max_removal_rate` in the rules if this is expected.")
    return out


SKIPPED_BLOCKS_LISTED = 10  # one warning each; the rest are counted, all in `skipped_blocks`


def skipped_block_warnings(skipped: list, max_block_size: int) -> list[str]:
    """A sentence per oversized block (the largest first): how it was sub-blocked, or that it
    was skipped (no pair inside it compared)."""
    largest = sorted(skipped, key=lambda s: -s.size)
    out = []
    for s in largest[:SKIPPED_BLOCKS_LISTED]:
        where = (f"a block of {s.size:,} records where {s.key} = {s.value!r}, above "
                 f"`max_block_size` = {max_block_size:,}")
        if getattr(s, "how", ""):
            out.append(f"blocker `{s.blocker}` sub-blocked {where}, by {s.how}: each record "
                       "was compared with its neighbours in that order only. Add a part to "
                       "that key so that it splits the block, or raise `max_block_size` in "
                       "the rules, to compare every pair inside it.")
        else:
            out.append(f"blocker `{s.blocker}` skipped {where}: pairs inside it were not "
                       "compared, so duplicates among them are found only through other "
                       "blockers. Add a part to that key so that it splits the block, or raise "
                       "`max_block_size` in the rules.")
    if len(largest) > SKIPPED_BLOCKS_LISTED:
        out.append(f"{len(largest) - SKIPPED_BLOCKS_LISTED:,} more oversized block(s) were "
                   "sub-blocked or skipped; summary.json's `stages.block.skipped_blocks` lists "
                   "them all.")
    return out
