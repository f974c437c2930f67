"""Explanations: why a record went where it went, from a run in memory or on disk."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.run.disk import comparison_matrix
from linkage.run.stages import LABELLED_JOIN, pair_stage, stage_reasons
from linkage.settings import Rules


class Explanation(str):
    """`Linker.explain`'s text: prints as text, shows in a notebook as preformatted text."""

    def _repr_html_(self) -> str:
        return f"<pre style='white-space: pre-wrap'>{html.escape(str(self))}</pre>"

    def __repr__(self) -> str:  # a notebook cell's last expression shows the text itself
        return str(self)


def _find(clusters: pd.DataFrame, record_id: Any) -> pd.Series:
    id_column = clusters.columns[1] if clusters.columns[0] == "source" else clusters.columns[0]
    as_text = clusters[id_column].astype(str)
    hits = clusters[as_text == str(record_id)]
    if hits.empty:
        raise InputError(
            f"no record with id {record_id!r} in this run's clusters (id column "
            f"`{id_column}`). Check the id, e.g. {clusters[id_column].iloc[0]!r}."
        )
    return hits.iloc[0]


def contributions_table(pairs: pd.DataFrame, rules, scorer) -> list[pd.DataFrame]:
    """One table per pair: comparison, level, similarity, contribution to the match weight."""
    matrix = comparison_matrix(pairs, rules)
    contrib = scorer.contributions(matrix)
    # With several kinds of non-match (Fellegi-Sunter's mixture), the weight also holds the
    # pair's pattern scored against them as a whole (`non_match_term`).
    term = scorer.non_match_term(matrix) if hasattr(scorer, "non_match_term") else None
    # ... and at least the floor that chance sets for its pattern (`chance_term`).
    lift = scorer.chance_term(matrix) if hasattr(scorer, "chance_term") else None
    tables = []
    for row in range(len(pairs)):
        rows = []
        bias = scorer.bias()
        if bias:
            rows.append({"comparison": "(prior)", "level": "", "similarity": np.nan,
                         "contribution": bias})
        for k, comparison in enumerate(rules.comparisons):
            rows.append({
                "comparison": comparison.output_name,
                "level": comparison.label_of(int(matrix.levels[row, k])),
                "similarity": float(matrix.similarities[row, k]),
                "contribution": float(contrib.iloc[row, k]),
            })
        if term is not None and term[row] != 0.0:
            rows.append({"comparison": "(kinds of non-match)", "level": "",
                         "similarity": np.nan, "contribution": float(term[row])})
        if lift is not None and lift[row] != 0.0:
            rows.append({"comparison": "(chance bound)", "level": "",
                         "similarity": np.nan, "contribution": float(lift[row])})
        tables.append(pd.DataFrame(rows))
    return tables


def _labelled_matches(labels: pd.DataFrame | None) -> set[tuple[str, str]]:
    """The pairs a person labelled a match (`labels.csv`), both ways round, as text ids."""
    if labels is None or labels.empty:
        return set()
    said = labels[labels["label"].astype(str).str.strip() == "1"]
    ids_l, ids_r = said["id_l"].astype(str), said["id_r"].astype(str)
    return set(zip(ids_l, ids_r, strict=True)) | set(zip(ids_r, ids_l, strict=True))


def _pair_lines(pairs: pd.DataFrame, rules, scorer,
                labelled: set[tuple[str, str]] = frozenset()) -> list[str]:
    reasons = [text for _, text in stage_reasons(rules)]
    stages = pair_stage(rules, pairs["blockers"].to_numpy())
    lines = []
    for (_, pair), table, stage in zip(pairs.iterrows(),
                                       contributions_table(pairs, rules, scorer), stages,
                                       strict=True):
        weight, threshold = pair["match_weight"], scorer.threshold
        # `is_match` is the run's verdict: a stage's pair matches whatever its weight.
        verdict = "match" if pair.get("is_match", weight >= threshold) else "no match"
        joined = (verdict == "match" and weight < threshold
                  and (str(pair["id_l"]), str(pair["id_r"])) in labelled)
        if stage >= 0 or joined:  # a stage's pair, or a labelled match the clusters joined
            said = reasons[stage] if stage >= 0 else LABELLED_JOIN
            side = ">=" if weight >= threshold else "<"
            lines.append(f"  pair {pair['id_l']} ~ {pair['id_r']}: {verdict} by "
                         f"{said}; match weight {weight:.2f} {side} threshold "
                         f"{threshold:g}")
        else:
            lines.append(f"  pair {pair['id_l']} ~ {pair['id_r']}: match weight "
                         f"{weight:.2f} ({verdict}, threshold {threshold:g})")
        for _, t in table.iterrows():
            sim = "" if np.isnan(t["similarity"]) else f" similarity {t['similarity']:.3f}"
            lines.append(f"    {t['comparison']:<20} {t['level']:<20}{sim:<18} "
                         f"{t['contribution']:+.2f}")
    return lines


def _guard_lines(decisions: pd.DataFrame | None, record_id: Any) -> list[str]:
    if decisions is None or decisions.empty:
        return []
    mine = decisions[decisions["record_id"].astype(str) == str(record_id)]
    return [f"  guard {row['guard']}: {row['decision']} ({row['detail']})"
            for _, row in mine.iterrows()]


def explain_text(clusters, pairs, rules, scorer, record_id, other_id=None,
                 decisions: pd.DataFrame | None = None,
                 labels: pd.DataFrame | None = None) -> str:
    record = _find(clusters, record_id)
    labelled = _labelled_matches(labels)
    ids_l, ids_r = pairs["id_l"].astype(str), pairs["id_r"].astype(str)
    me = str(record_id)
    lines = [
        f"record {record_id}: {record['action']} in cluster {record['cluster_id']} "
        f"({record['cluster_size']} record(s)); representative {record['representative_id']}",
        f"  reason: {record['reason']}",
        *_guard_lines(decisions, record_id),
    ]
    if other_id is None:
        touching = pairs[((ids_l == me) | (ids_r == me)) & pairs["is_match"]]
        touching = touching.sort_values("match_weight", ascending=False, kind="stable")
        if touching.empty:
            lines.append("  no candidate pair reached the threshold")
        else:
            lines.append(f"  linked by {len(touching)} pair(s):")
            lines += _pair_lines(touching, rules, scorer, labelled)
        return "\n".join(lines)
    other = _find(clusters, other_id)
    you = str(other_id)
    same = record["cluster_id"] == other["cluster_id"]
    lines.append(f"record {other_id}: cluster {other['cluster_id']} -> "
                 + ("same cluster" if same else "different clusters"))
    pair = pairs[((ids_l == me) & (ids_r == you)) | ((ids_l == you) & (ids_r == me))]
    if pair.empty:
        lines.append("  these two were never compared: no blocker proposed the pair (no "
                     "blocking key of theirs is equal)" + (", but other pairs join their "
                                                          "clusters" if same else ""))
    else:
        lines += _pair_lines(pair, rules, scorer, labelled)
    return "\n".join(lines)


def explain_run(run_dir: str | Path, record_id: Any, other_id: Any = None) -> str:
    """Explain from a run folder written by `linkage dedupe` or `linkage link`."""
    run_dir = Path(run_dir)
    if not (run_dir / "clusters.parquet").exists():
        raise InputError(f"{run_dir}: not a run folder (no clusters.parquet). Pass the --out "
                         "folder of a `linkage dedupe` or `linkage link` run.")
    rules = Rules.from_yaml(run_dir / "rules.yaml")
    clusters = pd.read_parquet(run_dir / "clusters.parquet")
    pairs = pd.read_parquet(run_dir / "pairs.parquet")
    scorer = rules.scoring
    model = run_dir / "model.json"
    if model.exists() and hasattr(type(scorer), "load"):
        scorer = type(scorer).load(model)
    else:
        scorer = scorer.fit(comparison_matrix(pairs.iloc[:0], rules))
    guards = run_dir / "guards.parquet"
    decisions = pd.read_parquet(guards) if guards.exists() else None
    labels = run_dir / "labels.csv"
    labels = (pd.read_csv(labels, dtype=str, keep_default_na=False) if labels.exists()
              else None)
    return explain_text(clusters, pairs, rules, scorer, record_id, other_id, decisions,
                        labels)
