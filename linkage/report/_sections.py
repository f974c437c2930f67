"""The sections of report.html, each from what a written run holds (summary, tables, rules,
scorer), so a page made right after the run and one made later from its folder are the same.

Each builder returns the section's HTML, or "" when the run has nothing for it (no LSH
blocker: no S-curve). Nothing here reads a clock, a host name or timings.json.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from linkage.report import charts
from linkage.report._html import (
    Markup,
    bullets,
    count,
    esc,
    facts,
    figure,
    join,
    number,
    paragraph,
    section,
    share,
    table,
    tag,
)

if TYPE_CHECKING:
    from linkage.report._labels import Labels
    from linkage.result import Result

LARGEST_CLUSTERS = 10
MEMBERS_SHOWN = 6
VALUES_SHOWN = 30  # per removals column: the largest values by records
FEATURES_SHOWN = 20
SKIPPED_SHOWN = 50


def _stages(result: Result) -> dict[str, Any]:
    return result.summary_data.get("stages", {})


def threshold_of(result: Result) -> float | None:
    """The scorer's threshold (a match weight) as the run used it; None if it has none."""
    value = _stages(result).get("score", {}).get("threshold")
    if value is None:
        value = getattr(result.scorer, "threshold", None)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _card(value: str, label: str) -> str:
    return f'<div class="card"><div class="value">{esc(value)}</div>' \
           f'<div class="label">{esc(label)}</div></div>'


# ---------------------------------------------------------------------- diagnostics


def diagnostics(result: Result) -> Markup:
    """Model warnings, first on the page: the run's diagnostics (summary.json's
    `diagnostics`), each with what to do, and any comparison whose weights fall where
    agreement rises (`weight_falls`) that the diagnostics do not already name. Nothing when
    there are none."""
    s = result.summary_data
    found = list(s.get("diagnostics") or [])
    named = any(d.get("code") == "non_monotone_weights" for d in found)
    falls = weight_falls(result)
    if falls and not named:
        found.append({
            "severity": "warning", "code": "non_monotone_weights",
            "message": "Agreeing more counts as less evidence of a match for "
                       + "; ".join(falls) + ".",
            "what_to_do": "Check the level's pairs (`linkage explain`): a fall of less than "
                          "a bit is often noise in a rare level; a larger one means the model "
                          "learned a trait other than the match. Fix the level's m (or its "
                          "weight) in the rules, merge the level with its neighbour, or label "
                          "pairs (`linkage label`) so the fit learns from them."})
    if not found:
        return Markup("")
    unreliable = s.get("model_reliable") is False
    verdict = ("The model is unreliable: do not use these clusters before acting on the "
               "diagnostics below." if unreliable else
               "Look at these before trusting the output.")
    items = []
    for d in found:
        what = str(d.get("severity", "warning"))
        items.append(tag("div", Markup(
            f"<strong>{esc(what)}: {esc(d.get('code', ''))}</strong> "
            f"{esc(d.get('message', ''))}<br>" + str(paragraph(
                "What to do: " + str(d.get("what_to_do", ""))))),
            class_="unreliable" if what == "unreliable" else "warning"))
    return section("diagnostics", "Model warnings", paragraph(verdict), *items)


def weight_falls(result: Result) -> list[str]:
    """Comparisons whose weight falls from a level to a more similar one (levels run from
    the least similar to the most; `null` and levels never seen left out): for a
    Fellegi-Sunter scorer its fitted match weights, for a rule sum its weights."""
    scorer = result.scorer if result.scorer is not None else result.rules.scoring
    kind = str(getattr(scorer, "kind", ""))
    rows: list[tuple[str, str, float]] = []
    if kind == "fellegi_sunter" and hasattr(scorer, "parameter_table"):
        try:
            table = scorer.parameter_table()
        except Exception:  # an unfitted scorer has no table: nothing to check
            return []
        seen = (table["m"].to_numpy(dtype=float) > 1e-9) | (table["u"].to_numpy(dtype=float)
                                                             > 1e-9)
        rows = [(str(r.comparison), str(r.level), float(r.match_weight))
                for r, ok in zip(table.itertuples(index=False), seen, strict=True) if ok]
    elif kind == "rule_sum":
        from linkage.scoring import default_weights

        given = getattr(scorer, "weights", None) or {}
        for comparison in result.rules.comparisons:
            name = comparison.output_name
            weights = default_weights(comparison) if given.get(name) is None else given[name]
            rows += [(name, label, float(weights.get(label, 0.0)))
                     for label in comparison.level_labels]
    falls = []
    for name in dict.fromkeys(r[0] for r in rows):
        levels = [(level, w) for c, level, w in rows if c == name and level != "null"
                  and math.isfinite(w)]
        for (low, a), (high, b) in itertools.pairwise(levels):
            if b < a - 1e-9:
                falls.append(f"`{name}`: {high} ({b:+.2f}) below {low} ({a:+.2f})")
    return falls


# ---------------------------------------------------------------------- overview


def overview(result: Result) -> Markup:
    s = result.summary_data
    stages = _stages(result)
    cards = [
        _card(count(stages.get("read", {}).get("records")), "records read"),
        _card(count(stages.get("block", {}).get("candidate_pairs")), "candidate pairs"),
        _card(count(_matched(stages.get("score", {}))), "matched pairs"),
        _card(count(stages.get("cluster", {}).get("clusters")), "clusters"),
    ]
    if s.get("mode") == "dedupe":
        cards.append(_card(count(s.get("actions", {}).get("duplicate")),
                           f"duplicates removed ({share(s.get('removal_rate'))})"))
    else:
        cards.append(_card(count(s.get("links")), "links"))
    inputs = [f"{i.get('name')} ({count(i.get('records'))} records, {i.get('checksum', '')})"
              for i in s.get("inputs", [])]
    rules = s.get("rules", {})
    items = [("inputs", join(inputs, "; ") if inputs else "–"),
             ("id column", s.get("id_column", "–")),
             ("rules", rules.get("source", "–")),
             ("rules hash", rules.get("config_hash", "–")),
             ("scorer", f"{stages.get('score', {}).get('scorer', '–')}, threshold "
                        f"{_threshold_text(result)}"),
             ("engine", s.get("engine", "–")),
             ("linkage", f"{s.get('linkage_version', '–')} (normalization version "
                         f"{s.get('normalization_version', '–')})")]
    warnings = [tag("div", f"warning: {w}", class_="warning") for w in s.get("warnings", [])]
    skipped = stages.get("block", {}).get("skipped_blocks", [])
    if skipped:
        warnings.append(tag("div", f"warning: {len(skipped):,} oversized block(s) were "
                                   "sub-blocked or skipped (see the stage counts)",
                                class_="warning"))
    return section("overview", "Overview",
                   Markup('<div class="cards">' + "".join(cards) + "</div>"),
                   facts(items), *warnings)


def _matched(score: dict[str, Any]) -> Any:
    """The pairs marked `is_match` (a summary from before stages had no `matched_pairs`)."""
    return score.get("matched_pairs", score.get("pairs_at_or_above_threshold"))


def _stage_matches(score: dict[str, Any]) -> str:
    """The pairs below the threshold that a stage matched, which the histogram shows grey."""
    said = [f"{k:,} by the {name} stage" for name, k in score.get("matched_by_stage", {}).items()
            if k]
    return f" Below it, {', '.join(said)} pair(s) are matched too." if said else ""


def _threshold_text(result: Result) -> str:
    value = threshold_of(result)
    return "–" if value is None else f"{value:g}"


# ---------------------------------------------------------------------- stage counts


def stage_counts(result: Result) -> Markup:
    s = result.summary_data
    stages = _stages(result)
    block = stages.get("block", {})
    score = stages.get("score", {})
    cluster = stages.get("cluster", {})
    actions = s.get("actions", {})
    rows: list[tuple[str, str, str]] = [("read", "records", count(stages.get("read", {})
                                                                  .get("records")))]
    for name, what in (("url", "records collapsed onto a copy with the same URL"),
                       ("exact", "records collapsed onto an identical record")):
        if name in stages:
            rows.append((name, "groups with copies",
                         count(stages[name].get("groups_with_copies"))))
            rows.append((name, what, count(stages[name].get("records_collapsed"))))
    if "semantic" in stages:
        rows.append(("semantic", "records embedded",
                     count(stages["semantic"].get("records_embedded"))))
        rows.append(("semantic", "near-duplicate pairs",
                     count(stages["semantic"].get("duplicate_pairs"))))
    rows += [
        ("block", "candidate pairs", count(block.get("candidate_pairs"))),
        ("block", "reduction ratio (pairs not compared)",
         number(block.get("reduction_ratio"), 6)),
        ("block", "oversized blocks sub-blocked or skipped",
         count(len(block.get("skipped_blocks", [])))),
        ("compare", "pairs compared", count(stages.get("compare", {}).get("pairs"))),
        ("score", f"pairs at or above the threshold {_threshold_text(result)}",
         count(score.get("pairs_at_or_above_threshold"))),
        *[("score", f"pairs below it matched by the {name} stage", count(k))
          for name, k in score.get("matched_by_stage", {}).items()],
        ("score", "matched pairs (after guards)", count(_matched(score))),
        ("cluster", "clusters", count(cluster.get("clusters"))),
        ("cluster", "clusters with several records",
         count(cluster.get("clusters_with_several_records"))),
        ("cluster", "largest cluster", count(cluster.get("largest_cluster"))),
    ]
    for action in ("keep", "duplicate", "preserved", "review"):
        if action in actions:
            rows.append(("keep", f"records: {action}", count(actions[action])))
    if s.get("mode") == "dedupe":
        rows.append(("keep", "removal rate", share(s.get("removal_rate"))))
    else:
        linked = s.get("linked_records", {})
        rows.append(("keep", "links", count(s.get("links"))))
        rows.append(("keep", "records linked (left / right)",
                     f"{count(linked.get('left'))} / {count(linked.get('right'))}"))
    rows.append(("warnings", "warnings", count(len(s.get("warnings", [])))))
    parts: list[object] = [table(["stage", "what", "count"], rows, numeric=[2])]
    parts += _blockers(block)
    parts += _normalized(stages.get("normalize", {}))
    parts += _levels(stages.get("compare", {}).get("levels", {}))
    skipped = block.get("skipped_blocks", [])
    if skipped:
        parts.append(tag("h3", "Oversized blocks"))
        parts.append(table(["blocker", "key", "value", "records", "paired by"],
                           [(b.get("blocker"), b.get("key"), b.get("value"), count(b.get("size")),
                             b.get("how") or "skipped: not paired")
                            for b in skipped[:SKIPPED_SHOWN]], numeric=[3]))
        if len(skipped) > SKIPPED_SHOWN:
            parts.append(paragraph(f"The first {SKIPPED_SHOWN} of {len(skipped):,} are shown; "
                                   "summary.json lists them all.", class_="note"))
    return section("stages", "Stage counts", *parts,
                   intro="What each stage did, cheapest first: read, exact copies, blocking "
                         "into candidate pairs, comparing, scoring, clustering, keeping.")


def _blockers(block: dict) -> list[object]:
    blockers = block.get("blockers", {})
    if not blockers:
        return []
    rows = [(name, b.get("rule", ""), count(b.get("estimated_pairs")),
             count(b.get("proposed_pairs"))) for name, b in blockers.items()]
    chart = charts.bar_chart_svg(list(blockers),
                                 [b.get("proposed_pairs") or 0 for b in blockers.values()],
                                 title="candidate pairs proposed per blocker",
                                 axis_label="pairs proposed", kind="blocker-pairs")
    return [tag("h3", "Pairs per blocker"),
            table(["blocker", "rule", "estimated pairs", "proposed pairs"], rows,
                  numeric=[2, 3]),
            figure("chart-blockers", chart,
                   "Pairs each blocker proposed. A pair proposed by several blockers is "
                   "compared once, so these add up to more than the candidate pairs.")]


def _normalized(normalize: dict) -> list[object]:
    if not normalize:
        return []
    rows = [(name, n.get("normalizer", ""), n.get("from", ""), count(n.get("changed")),
             count(n.get("missing"))) for name, n in normalize.items()]
    return [tag("h3", "Normalization"),
            table(["column", "normalizer", "from", "values changed", "missing after"], rows,
                  numeric=[3, 4])]


def _levels(levels: dict) -> list[object]:
    if not levels:
        return []
    rows = [(name, join((f"{label} {int(n):,}" for label, n in counts.items()), " · "))
            for name, counts in levels.items()]
    return [tag("h3", "Comparison levels of the candidate pairs"),
            table(["comparison", "pairs per level"], rows)]


# ---------------------------------------------------------------------- scores


def scores(result: Result, *, labelled: bool = False) -> Markup:
    pairs = result.pairs
    route = (result.summary_data.get("spark") or {}).get("route")
    if pairs is None and route == "distributed":
        return section("scores", "Scores", paragraph(
            "This run was distributed on Spark: its scored pairs are in pairs.parquet (a "
            "Parquet folder) and its counts in summary.json; this page is built from the "
            "counts alone, so it shows no chart of the weights and no example records."))
    if pairs is None or "match_weight" not in pairs.columns or pairs.empty:
        return section("scores", "Scores", paragraph("No candidate pairs were scored."))
    threshold = threshold_of(result)
    weights = pairs["match_weight"].to_numpy(dtype=float)
    chart = charts.weight_histogram_svg(weights, threshold=threshold, log=True)
    parts: list[object] = [figure(
        "chart-weights", chart,
        "Match weights of the candidate pairs, counted on a log scale (1, 10, 100...) so that "
        "the few matches show next to the many non-matches; the dashed line is the "
        "threshold. Pairs at or "
        "above it (green) are linked, unless a guard says otherwise. A valley around the "
        "threshold means the scorer separates matches from non-matches well."
        + _stage_matches(_stages(result).get("score", {})))]
    probability = pairs["match_probability"].to_numpy(dtype=float) \
        if "match_probability" in pairs.columns else np.full(len(pairs), np.nan)
    if np.isfinite(probability).any():
        edges = [0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0 + 1e-12]
        counts, _ = np.histogram(probability[np.isfinite(probability)], bins=edges)
        labels = [f"[{a:g}, {min(b, 1.0):g}{']' if b > 1 else ')'}"
                  for a, b in itertools.pairwise(edges)]
        parts.append(table(["match probability", "pairs"],
                           [(label, count(n)) for label, n in zip(labels, counts, strict=True)],
                           numeric=[1]))
    if not labelled:
        on = "" if np.isfinite(probability).any() else " --on weight --bands 0,4,8"
        parts.append(paragraph(
            f"How precise is each score band? Label a sample (`linkage sample RUN_DIR{on} "
            "--out labels.csv`, then fill its `label` column) and run `linkage report RUN_DIR "
            "--labels labels.csv`.", class_="note"))
    return section("scores", "Scores", *parts)


# ---------------------------------------------------------------------- precision


def precision(result: Result, labels: Labels | None, target: float) -> Markup:
    if labels is None:
        return Markup("")
    from linkage.measure.calibrate import calibrate

    measured, recommended = calibrate(labels.frame, labels.bands, on=labels.on, target=target)
    rows, attributes = [], []
    for _, row in measured.iterrows():
        n = int(row["labelled"])
        rows.append((f"[{row['band_from']:g}, {row['band_to']:g})", count(n),
                     count(row["matches"]), "n/a" if n == 0 else number(row["precision"]),
                     f"{number(row['ci_low'])} – {number(row['ci_high'])}"))
        attributes.append({"class": "band", "data_band_from": repr(float(row["band_from"])),
                           "data_labelled": n,
                           "data_precision": "nan" if n == 0 else repr(float(row["precision"])),
                           "data_ci_low": repr(float(row["ci_low"])),
                           "data_ci_high": repr(float(row["ci_high"]))})
    score = "match probability" if labels.on == "probability" else "match weight"
    parts: list[object] = [
        paragraph(f"{count(int(measured['labelled'].sum()))} labelled pairs from "
                  f"{labels.source}, in bands of the {score} (edges "
                  f"{', '.join(f'{b:g}' for b in labels.bands)}, from {labels.bands_from}). "
                  "The same numbers as `linkage calibrate`.", class_="note"),
        table(["band", "labelled", "matches", "precision", "95% interval (Wilson)"], rows,
              row_attributes=attributes, numeric=[1, 2, 3]),
        figure("chart-precision", charts.precision_svg(measured, target=target),
               "Precision per band, with its 95% Wilson interval; the dashed line is the "
               "target precision."),
    ]
    if recommended is None:
        parts.append(paragraph(f"No band reaches precision {target:g}: keep the threshold, or "
                               "label more pairs.", class_="note"))
    else:
        parts.append(paragraph(f"Recommended threshold for precision {target:g}: "
                               f"{recommended:g} ({labels.on}); every band from it up reaches "
                               "the target.", class_="note"))
    if labels.not_in_run:
        parts.append(tag("div", f"warning: {labels.not_in_run:,} labelled pair(s) are not "
                                "candidate pairs of this run.", class_="warning"))
    return section("precision", "Precision per score band", *parts)


# ---------------------------------------------------------------------- the model


def model(result: Result) -> Markup:
    scorer = result.scorer if result.scorer is not None else result.rules.scoring
    kind = str(getattr(scorer, "kind", type(scorer).__name__))
    score = _stages(result).get("score", {})
    if kind == "fellegi_sunter":
        parts = _fellegi_sunter(scorer, score)
    elif kind == "rule_sum":
        parts = _rule_sum(result, scorer)
    elif kind == "supervised":
        parts = _supervised(scorer, score)
    else:
        parts = [paragraph(f"This scorer ({kind}) has no parameters to chart.", class_="note")]
    return section("model", f"The scorer: {kind}", *parts)


def _fellegi_sunter(scorer: Any, score: dict) -> list[object]:
    items = [("prior (share of candidate pairs that match)", number(score.get("prior"), 6)),
             ("EM iterations", score.get("em_iterations", "–")),
             ("EM converged", score.get("em_converged", "–"))]
    if not hasattr(scorer, "m_probabilities_"):
        return [facts(items), paragraph("The scorer was not saved with this run (no "
                                        "model.json), so its m and u are unknown.",
                                        class_="note")]
    parameters = scorer.parameter_table()
    rows = [(r.comparison, r.level, f"{r.m:.4g}", f"{r.u:.4g}", f"{r.match_weight:+.2f}")
            for r in parameters.itertuples(index=False)]
    return [
        facts(items),
        figure("chart-mu", charts.mu_bars_svg(parameters),
               "m: how often true matches land on each level; u: how often non-matches do."),
        figure("chart-match-weights", charts.mu_chart_svg(parameters),
               "Match weight log2(m/u) of each level: what agreeing (or disagreeing) adds to "
               "a pair's score."),
        table(["comparison", "level", "m", "u", "match weight"], rows, numeric=[2, 3, 4]),
    ]


def _rule_sum(result: Result, scorer: Any) -> list[object]:
    from linkage.scoring import default_weights

    given = getattr(scorer, "weights", None) or {}
    rows = []
    for comparison in result.rules.comparisons:
        name = comparison.output_name
        weights = default_weights(comparison) if given.get(name) is None else given[name]
        for label in comparison.level_labels:
            rows.append({"comparison": name, "level": label,
                         "weight": float(weights.get(label, 0.0))})
    frame = pd.DataFrame(rows, columns=["comparison", "level", "weight"])
    return [
        figure("chart-rule-weights",
               charts.level_weights_svg(frame, title="weight per comparison level"),
               "A pair's score is the sum of its levels' weights; a null (missing value) "
               "weighs 0. Levels left out of the rules weigh 0; comparisons left out get the "
               "default weights."),
        table(["comparison", "level", "weight"],
              [(r["comparison"], r["level"], f"{r['weight']:+g}") for r in rows], numeric=[2]),
    ]


def _supervised(scorer: Any, score: dict) -> list[object]:
    items = [("model", getattr(scorer, "model", "–")),
             ("labelled pairs", count(score.get("labelled_pairs"))),
             ("probability threshold", number(score.get("probability_threshold"), 4)),
             ("cross-validated precision", number(score.get("cv_precision"), 4)),
             ("cross-validated recall", number(score.get("cv_recall"), 4)),
             ("cross-validated F1", number(score.get("cv_f1"), 4))]
    parts: list[object] = [facts(items)]
    fitted = getattr(scorer, "model_", None)
    names = list(getattr(scorer, "feature_names_", []))
    if fitted is None or not names:
        parts.append(paragraph("The trained model was not saved with this run, so its "
                               "features cannot be shown.", class_="note"))
        return parts
    if hasattr(fitted, "feature_importances_"):
        values = np.asarray(fitted.feature_importances_, dtype=float)
        title, axis, caption = ("feature importances", "importance",
                                "How much each feature (a comparison level or similarity) "
                                "the trees split on counted, largest first.")
    elif hasattr(fitted, "coef_"):
        values = np.asarray(fitted.coef_[0], dtype=float) / math.log(2.0)
        title, axis, caption = ("coefficients (log2 odds)", "log2 odds per unit",
                                "What each feature adds to a pair's log2 odds, largest "
                                "effect first.")
    else:
        return parts
    order = np.argsort(-np.abs(values), kind="stable")[:FEATURES_SHOWN]
    chart = charts.bar_chart_svg([names[i] for i in order], values[order], title=title,
                                 axis_label=axis, kind="features", digits=3)
    parts.append(figure("chart-features", chart, caption))
    return parts


# ---------------------------------------------------------------------- removals


def removals(result: Result) -> Markup:
    if result.summary_data.get("mode") != "dedupe":
        return Markup("")
    by = result.summary_data.get("removals_by", {})
    if not by:
        return section("removals", "Removals by source and category", paragraph(
            "Set `source_column` (and `report_columns`) in the rules to see which source or "
            "category lost how many records, and its share before and after.", class_="note"),
            *before_after(result))
    parts: list[object] = []
    for k, (column, values) in enumerate(by.items()):
        frame = pd.DataFrame([{"value": v, **stats} for v, stats in values.items()],
                             columns=["value", "records", "removed", "removal_rate",
                                      "share_before", "share_after"])
        frame = frame.sort_values(["records", "value"], ascending=[False, True],
                                  kind="stable").reset_index(drop=True)
        shown = frame.head(VALUES_SHOWN)
        rows = [(r.value, count(r.records), count(r.removed), share(r.removal_rate),
                 share(r.share_before), share(r.share_after))
                for r in shown.itertuples(index=False)]
        parts.append(tag("h3", f"by {column}"))
        parts.append(table([column, "records", "removed", "removal rate", "share before",
                            "share after"], rows, numeric=[1, 2, 3, 4, 5]))
        if len(frame) > VALUES_SHOWN:
            parts.append(paragraph(f"The {VALUES_SHOWN} largest of {len(frame):,} values are "
                                   "shown; summary.json has them all.", class_="note"))
        parts.append(figure(f"chart-removals-{k}",
                            charts.shares_svg(shown, title=f"share of the records by {column}"),
                            f"Each {column}'s share of the records before and after the "
                            "duplicates were removed: one that shrinks lost more than the "
                            "others."))
    return section("removals", "Removals by source and category", *parts, *before_after(result))


def before_after(result: Result) -> list[object]:
    """summary.json's `before_after`: text lengths per source and the whole table, and each
    source's category shares, before and after the duplicates went."""
    metrics = result.summary_data.get("before_after")
    if not metrics:
        return []
    groups = [("whole table", metrics["table"]), *metrics.get("by_source", {}).items()]
    shown = groups[:VALUES_SHOWN + 1]
    parts: list[object] = [tag("h3", "Before and after")]
    if metrics["text_columns"]:
        rows = [(name, column, count(g["records"]["before"]), count(g["records"]["after"]),
                 number(g["mean_chars"][column]["before"], 1),
                 number(g["mean_chars"][column]["after"], 1),
                 number(g["mean_tokens"][column]["before"], 2),
                 number(g["mean_tokens"][column]["after"], 2))
                for name, g in shown for column in metrics["text_columns"]]
        parts.append(table(["source", "text column", "records before", "after",
                            "mean characters before", "after", "mean tokens before", "after"],
                           rows, numeric=[2, 3, 4, 5, 6, 7]))
    for column in metrics["table"]["shares"]:
        rows = [(name, value, share(s["before"]), share(s["after"]))
                for name, g in shown[1:] for value, s in g["shares"][column].items()]
        if rows:
            parts.append(table(["source", column, "share before", "share after"],
                               rows[:VALUES_SHOWN], numeric=[2, 3]))
    if len(groups) > len(shown):
        parts.append(paragraph(f"The first {VALUES_SHOWN} of {len(groups) - 1:,} sources are "
                               "shown; summary.json has them all.", class_="note"))
    return parts


# ---------------------------------------------------------------------- clusters


def sizes_above_one(cluster: np.ndarray) -> pd.Series:
    """The number of records of each cluster id holding more than one (index: cluster id), as
    `value_counts` gives them; counted by `np.bincount` where the ids are small integers."""
    if (cluster.dtype.kind in "iu" and len(cluster)
            and cluster.min() >= 0 and cluster.max() < 4 * len(cluster) + 1024):
        counts = np.bincount(cluster)
        at = np.flatnonzero(counts > 1)
        return pd.Series(counts[at], index=at.astype(cluster.dtype, copy=False),
                         name="count")
    sizes = pd.Series(cluster).value_counts(sort=False)
    return sizes[sizes > 1]


def top_clusters(cluster_id: pd.Series) -> pd.Series:
    """The sizes of the `LARGEST_CLUSTERS` largest clusters of several records (index: the
    cluster id; ties in the order of the ids), from the clusters' `cluster_id` column."""
    # (counted by np.bincount where the ids are small integers: a groupby of ten million
    # ids took 1.6 s, twice a report)
    sizes = sizes_above_one(cluster_id.to_numpy()).sort_index()
    sizes.index.name, sizes.name = None, None
    return sizes.sort_values(ascending=False, kind="stable").head(LARGEST_CLUSTERS)


def hold_cluster_members(result: Result, cluster_ids) -> None:
    """Read once the rows of clusters.parquet that the page shows: those of `cluster_ids` and
    of the largest clusters (`top_clusters`), kept on the result for `cluster_members`. A run
    of millions of records shows a few clusters; only a file not loaded yet is read so."""
    clusters = result.clusters
    path = getattr(clusters, "path", None)
    if path is None or getattr(clusters, "_frame", None) is not None \
            or "cluster_id" not in clusters.columns:
        return
    wanted = sorted({*top_clusters(clusters["cluster_id"]).index.tolist(), *cluster_ids})
    if wanted:
        rows = pd.read_parquet(path, filters=[("cluster_id", "in", wanted)])
        result._report_members = (set(wanted), rows)


def cluster_members(result: Result, cluster_ids) -> pd.DataFrame:
    """The rows of the run's clusters whose `cluster_id` is one of `cluster_ids`, in their
    order (the index not kept where they were read from the file)."""
    cluster_ids = list(cluster_ids)
    held = getattr(result, "_report_members", None)
    clusters = result.clusters
    if held is not None and set(cluster_ids) <= held[0]:
        clusters = held[1]
    return clusters[clusters["cluster_id"].isin(cluster_ids)]


def largest_clusters(result: Result, text=str) -> Markup:
    clusters = result.clusters
    stages = _stages(result)
    parts: list[object] = []
    histogram = stages.get("cluster", {}).get("size_histogram", {})
    if histogram:
        sizes = sorted(histogram, key=int)
        parts.append(figure(
            "chart-cluster-sizes",
            charts.bar_chart_svg([f"{s} record(s)" for s in sizes],
                                 [histogram[s] for s in sizes], title="clusters by size",
                                 axis_label="clusters", kind="cluster-sizes"),
            "How many clusters hold one record, two, three... A few very large clusters "
            "usually mean chaining: a loose key or a low threshold linking strangers."))
    if clusters is None or clusters.empty:
        return section("clusters", "Largest clusters", *parts)
    id_name = result.summary_data.get("id_column") or clusters.columns[0]
    if id_name not in clusters.columns:
        id_name = clusters.columns[0]
    top = top_clusters(clusters["cluster_id"])  # (from a file: that column alone)
    if top.empty:
        parts.append(paragraph("No cluster holds more than one record.", class_="note"))
        return section("clusters", "Largest clusters", *parts)
    members = cluster_members(result, top.index.tolist()).copy()
    members["_id"] = members[id_name].astype(str)
    has_representative = "representative_id" in members.columns
    # The representative first, then the others by id: the order never depends on the run.
    members["_rank"] = 1
    if has_representative:
        members["_rank"] = (members["_id"] != members["representative_id"].astype(str)) * 1
    members = members.sort_values(["cluster_id", "_rank", "_id"], kind="stable")
    grouped = dict(list(members.groupby("cluster_id", sort=False)))
    rows = []
    for cluster_id, size in top.items():
        group = grouped[cluster_id]
        actions = group["action"].astype(str).value_counts().sort_index()
        lines = []
        head = group.head(MEMBERS_SHOWN)
        sides = head["source"].astype(str) if "source" in head.columns else [""] * len(head)
        for member, side, action, reason in zip(head["_id"], sides, head["action"],
                                                head["reason"], strict=True):
            side = f" ({side})" if side else ""  # link runs: which table it came from
            reason = _shorten(text(reason)) if isinstance(reason, str) else ""
            lines.append(f"{member}{side} — {action}: {reason}")
        if len(group) > MEMBERS_SHOWN:
            lines.append(f"… and {len(group) - MEMBERS_SHOWN:,} more")
        representative = str(group["representative_id"].iloc[0]) if has_representative \
            else "–"
        rows.append((str(cluster_id), count(size), representative,
                     ", ".join(f"{a} {n:,}" for a, n in actions.items()),
                     bullets(lines, class_="members")))
    parts.append(table(["cluster", "records", "representative", "actions",
                        "records: id — action: reason"], rows, numeric=[1]))
    parts.append(paragraph("`linkage explain RUN_DIR RECORD_ID` prints why a record is in its "
                           "cluster, pair by pair.", class_="note"))
    return section("clusters", "Largest clusters", *parts)


def _shorten(text: str, limit: int = 180) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------- guards


def guards(result: Result, text=str) -> Markup:
    decisions = _stages(result).get("guard", {})
    actions = result.summary_data.get("actions", {})
    review = result.review
    if not decisions and not result.rules.guards and not actions.get("review") \
            and not actions.get("preserved"):
        return Markup("")
    rows = [(guard, decision, count(n)) for guard, counts in decisions.items()
            for decision, n in counts.items()]
    empty = [guard for guard, counts in decisions.items() if not counts]
    parts: list[object] = []
    if rows:
        parts.append(table(["guard", "decision", "records"], rows, numeric=[2]))
        parts.append(figure("chart-guards", charts.bar_chart_svg(
            [f"{guard}: {decision}" for guard, decision, _ in rows],
            [n for counts in decisions.values() for n in counts.values()],
            title="guard decisions", axis_label="records", kind="guard-decisions"),
            "Records each guard decided on, by decision."))
    if empty:
        parts.append(paragraph(f"No decision by: {', '.join(empty)}.", class_="note"))
    groups = 0
    if review is not None and "review_group" in review.columns:
        groups = int(review["review_group"].nunique())
    parts.append(facts([
        ("records sent to review", count(actions.get("review", 0))),
        ("review groups (review.parquet)", count(groups)),
        ("records preserved (kept as legitimate repeats)", count(actions.get("preserved", 0))),
    ]))
    if review is not None and not review.empty and "review_group" in review.columns:
        sizes = review.groupby("review_group", sort=True).size()
        largest = sizes.sort_values(ascending=False, kind="stable").head(LARGEST_CLUSTERS)
        parts.append(tag("h3", "Largest review groups"))
        parts.append(table(["review group", "records", "reason"],
                           [(text(g), count(n),
                             _shorten(text(review.loc[review["review_group"] == g,
                                                      "reason"].iloc[0])))
                            for g, n in largest.items()], numeric=[1]))
    return section("guards", "Guards and the review queue", *parts,
                   intro="Guards keep legitimate repeats and send doubtful groups to a person "
                         "instead of merging them.")


# ---------------------------------------------------------------------- LSH


def lsh(result: Result) -> Markup:
    from linkage.blocking import blocker_names
    from linkage.text.lsh import resolve_params, s_curve

    blockers = result.rules.blocking
    found = [(name, b) for name, b in zip(blocker_names(blockers), blockers, strict=True)
             if getattr(b, "kind", None) == "minhash"]
    if not found:
        return Markup("")
    stats = _stages(result).get("block", {}).get("blockers", {})
    parts: list[object] = []
    for k, (name, blocker) in enumerate(found):
        bands, rows = resolve_params(blocker.threshold, blocker.num_perm, blocker.bands,
                                     blocker.rows)
        js = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
        ps = s_curve(bands, rows, np.array(js))
        parts.append(tag("h3", f"{name}: {blocker.column}"))
        parts.append(facts([
            ("bands × rows", f"{bands} × {rows} of {blocker.num_perm} permutations"),
            ("S-curve threshold (1/b)^(1/r)", f"{(1 / bands) ** (1 / rows):.3f}"),
            ("verified at Jaccard ≥", f"{blocker.threshold:g}"),
            ("pairs estimated (before verification)",
             count(stats.get(name, {}).get("estimated_pairs"))),
            ("pairs proposed (verified)", count(stats.get(name, {}).get("proposed_pairs"))),
        ]))
        parts.append(figure(f"chart-s-curve-{k}",
                            charts.s_curve_svg(bands, rows, threshold=blocker.threshold,
                                               title=f"S-curve of {name}: {bands} bands × "
                                                     f"{rows} rows"),
                            "The probability that a pair of texts with Jaccard similarity J "
                            "becomes a candidate: 1 - (1 - J^r)^b. Candidates are then verified "
                            "by their exact Jaccard against the dashed threshold."))
        parts.append(table(["Jaccard J", "P(candidate)"],
                           [(f"{j:g}", f"{p:.3f}") for j, p in zip(js, ps, strict=True)],
                           numeric=[1]))
    return section("lsh", "MinHash-LSH", *parts)
