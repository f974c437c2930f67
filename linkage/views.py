"""Interactive views of a run, as Splink's dashboards are, each one self-contained HTML file
(the charts' JavaScript inlined, no network), deterministic, and shown inline in a notebook:

- `comparison_viewer`: the candidate pairs grouped by their pattern of comparison levels, a
  chart of how many pairs each pattern holds and what it weighs, and for each pattern sample
  pairs with their two records side by side and each comparison's part of the weight;
- `cluster_view`: chosen clusters (by default the largest and the weakest), each as its records
  and a graph of its scored pairs (matched pairs solid, pairs scored below the threshold
  dashed), with the pair that joined the cluster at the lowest weight named;
- `unlinkables_chart`: the share of records whose match weight against an exact copy of
  themselves stays below each threshold: records too sparse to be linked at all;
- `accuracy_charts`: precision against recall, and precision, recall and F1 against the
  threshold, from a labels file (the pairs a person labelled).

Charts are Vega-Lite specifications built with altair and drawn in the page by vega-embed,
whose code `vl-convert-python` bundles offline (`pip install "linkage[views]"`). `lk.Linker`
has the same views as methods, with the records it was fitted on.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.report import ReportPage

MAX_PATTERNS = 40  # comparison viewer: the most frequent patterns shown
PAIRS_PER_PATTERN = 4
MAX_CLUSTERS = 6  # cluster view: the largest and the weakest, half each
MAX_CLUSTER_SIZE = 60  # records drawn per cluster graph

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem auto; max-width: 1150px;
       color: #1f2933; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table.records { border-collapse: collapse; margin: .5rem 0 1rem; font-size: 13px; }
table.records th, table.records td { border: 1px solid #d5dbe3; padding: 3px 7px;
       text-align: left; vertical-align: top; }
table.records th { background: #f3f5f8; }
td.differs { background: #fff4d6; }
details { border: 1px solid #d5dbe3; border-radius: 6px; padding: .4rem .8rem; margin: .5rem 0; }
summary { cursor: pointer; font-weight: 600; }
.note { color: #52606d; }
.chart { margin: .5rem 0 1rem; }
"""


class View(ReportPage):
    """One view as a self-contained HTML page: `str(view)` is the page, `save(path)` writes it
    (as the report's page does); Jupyter shows it inline in an iframe that may run the page's
    own scripts (the charts) and nothing else."""

    __slots__ = ("title",)

    def __init__(self, page: str, title: str):
        super().__init__(page)
        self.title = title

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" sandbox="allow-scripts"'
                f' title="{html.escape(self.title)}" style="width: 100%; height: 800px; '
                'border: 1px solid #dde2e8;"></iframe>')

    def __repr__(self) -> str:
        return f"<linkage view {self.title!r}, {len(self.html):,} characters>"


# ---------------------------------------------------------------------- the page


def _modules():
    try:
        import altair as alt
        import vl_convert
    except ImportError as err:
        raise InputError("the interactive views need altair and vl-convert-python: pip install "
                         '"linkage[views]"') from err
    return alt, vl_convert


def _page(title: str, intro: str, body: list[str], charts: dict[str, dict]):
    """The page: `body` (HTML, escaped where it holds data) and `charts` (element id ->
    Vega-Lite spec), with vega-embed's bundle inlined once."""
    _, vl_convert = _modules()
    bundle = vl_convert.javascript_bundle().replace("</script", "<\\/script")
    embeds = "\n".join(
        f"vegaEmbed({json.dumps('#' + chart_id)}, {json.dumps(spec, sort_keys=True)}, "
        '{"actions": false, "renderer": "svg"});'
        for chart_id, spec in charts.items())
    page = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style>"
        f"<script>{bundle}</script></head><body>"
        f"<h1>{html.escape(title)}</h1><p class=\"note\">{intro}</p>"
        + "\n".join(body)
        + f"<script>{embeds}</script></body></html>\n")
    return View(page, title)


def _spec(chart) -> dict:
    spec = chart.to_dict()
    spec.pop("$schema", None)  # a URL; vega-embed needs none
    return spec


# ---------------------------------------------------------------------- records


def _records_by_id(result, records) -> pd.DataFrame:
    """The input records indexed by their id as text, from `records` (a DataFrame, or a
    list of them: the left and right table of a link)."""
    frames = records if isinstance(records, list | tuple) else [records]
    id_column = result.summary().get("id_column")
    names = id_column if isinstance(id_column, list) else [id_column] * len(frames)
    parts = []
    for frame, name in zip(frames, names, strict=False):
        if name and name in frame.columns:
            parts.append(frame.set_axis(frame[name].astype(str).to_numpy()))
        else:  # row numbers were the ids
            parts.append(frame.set_axis([str(i) for i in range(len(frame))]))
    return pd.concat(parts) if len(parts) > 1 else parts[0]


def _shown_columns(result, records: pd.DataFrame) -> list[str]:
    compared = list(result.rules.columns())
    return [c for c in dict.fromkeys(compared) if c in records.columns] or list(records.columns)


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def _side_by_side(left: pd.Series, right: pd.Series, columns: list[str]) -> str:
    """Two records as a table: a row per column, cells that differ marked."""
    rows = []
    for column in columns:
        a, b = _text(left.get(column)), _text(right.get(column))
        cls = ' class="differs"' if a.strip().lower() != b.strip().lower() else ""
        rows.append(f"<tr><th>{html.escape(column)}</th><td{cls}>{html.escape(a)}</td>"
                    f"<td{cls}>{html.escape(b)}</td></tr>")
    return ("<table class=\"records\"><tr><th></th><th>left</th><th>right</th></tr>"
            + "".join(rows) + "</table>")


# ---------------------------------------------------------------------- comparison viewer


def _patterns(result) -> tuple[pd.DataFrame, list[str]]:
    pairs = result.readable_pairs()
    names = [f"{c.output_name}_level" for c in result.rules.comparisons
             if f"{c.output_name}_level" in pairs]
    if not names:
        raise InputError("the run's pairs carry no comparison levels: nothing to group by.")
    pattern = pairs[names[0]].astype(str).str.cat(
        [pairs[n].astype(str) for n in names[1:]], sep=" | ") if len(names) > 1 else \
        pairs[names[0]].astype(str)
    return pairs.assign(pattern=pattern.to_numpy()), names


def comparison_viewer(result, records, *, path: str | Path | None = None,
                      patterns: int = MAX_PATTERNS, per_pattern: int = PAIRS_PER_PATTERN,
                      seed: int = 0):
    """The comparison viewer of `result` (see the module's docstring); `records`: the input
    table (a link: [left, right]). The `patterns` most frequent level patterns are shown,
    each with up to `per_pattern` pairs drawn with `seed`."""
    alt, _ = _modules()
    pairs, names = _patterns(result)
    by_id = _records_by_id(result, records)
    columns = _shown_columns(result, by_id)
    threshold = float(result.scorer.threshold)
    groups = (pairs.groupby("pattern", sort=False)
              .agg(pairs=("match_weight", "size"), weight=("match_weight", "mean"))
              .reset_index().sort_values(["pairs", "weight", "pattern"],
                                         ascending=[False, False, True]).head(patterns))
    groups["matched"] = groups["weight"] >= threshold
    chart = (alt.Chart(groups).mark_bar().encode(
        x=alt.X("pairs:Q", title="candidate pairs", scale=alt.Scale(type="symlog")),
        y=alt.Y("pattern:N", sort="-x", title=None, axis=alt.Axis(labelLimit=600)),
        color=alt.Color("weight:Q", title="mean match weight",
                        scale=alt.Scale(scheme="redblue", domainMid=threshold)),
        tooltip=["pattern", "pairs", alt.Tooltip("weight:Q", format=".2f")])
        .properties(width=520, height=alt.Step(16),
                    title="Candidate pairs per pattern of comparison levels"))
    rng = np.random.default_rng(seed)
    sections = []
    from linkage.explain import contributions_table

    for k, row in enumerate(groups.itertuples(index=False)):
        members = pairs[pairs["pattern"] == row.pattern]
        take = np.sort(rng.choice(len(members), size=min(per_pattern, len(members)),
                                  replace=False))
        shown = members.iloc[take]
        raw = result.pairs.loc[shown.index] if isinstance(result.pairs, pd.DataFrame) else None
        parts = []
        tables = contributions_table(raw, result.rules, result.scorer) if raw is not None \
            else [None] * len(shown)
        for (_, pair), contrib in zip(shown.iterrows(), tables, strict=True):
            a, b = str(pair["id_l"]), str(pair["id_r"])
            if a in by_id.index and b in by_id.index:
                table = _side_by_side(by_id.loc[a], by_id.loc[b], columns)
            else:
                table = "<p class=\"note\">(records not in the table given)</p>"
            weights = "" if contrib is None else "<p class=\"note\">" + html.escape(", ".join(
                f"{r.comparison} {r.level} {r.contribution:+.2f}"
                for r in contrib.itertuples())) + "</p>"
            parts.append(f"<p><b>{html.escape(a)}</b> ~ <b>{html.escape(b)}</b>: match weight "
                         f"{pair['match_weight']:.2f} ("
                         f"{'matched' if pair['match_weight'] >= threshold else 'not matched'})"
                         f"</p>{table}{weights}")
        verdict = "matched" if row.matched else "not matched"
        sections.append(
            f"<details id=\"pattern-{k}\"{' open' if k == 0 else ''}><summary>"
            f"{html.escape(row.pattern)}: {row.pairs:,} pairs, mean weight {row.weight:.2f} "
            f"({verdict})</summary>{''.join(parts)}</details>")
    head = " | ".join(n.removesuffix("_level") for n in names)
    intro = (f"{len(pairs):,} candidate pairs in {pairs['pattern'].nunique():,} patterns of "
             f"levels ({html.escape(head)}); the threshold is {threshold:g}. Open a pattern for "
             "sample pairs with their records side by side (differing values marked) and each "
             "comparison's part of the weight.")
    view = _page("Comparison viewer", intro,
                 ["<div id=\"patterns\" class=\"chart\"></div>", "<h2>Patterns</h2>",
                  *sections], {"patterns": _spec(chart)})
    if path is not None:
        view.save(path)
    return view


# ---------------------------------------------------------------------- cluster view


def _chosen_clusters(result, clusters: list | None) -> list:
    table = result.clusters
    sizes = table.groupby("cluster_id").size()
    if clusters is not None:
        unknown = [c for c in clusters if c not in sizes.index]
        if unknown:
            raise InputError(f"cluster(s) {unknown[:3]} are not clusters of this run.")
        return list(clusters)
    several = sizes[sizes > 1]
    largest = several.sort_values(ascending=False, kind="stable").head(MAX_CLUSTERS // 2)
    id_column = table.columns[0]
    cluster_of = table.set_index(table[id_column].astype(str))["cluster_id"]
    pairs = result.pairs
    matched = pairs[pairs["is_match"].to_numpy(dtype=bool)] if "is_match" in pairs else pairs
    in_cluster = matched["id_l"].astype(str).map(cluster_of)
    weakest = (matched.assign(c=in_cluster.to_numpy()).groupby("c")["match_weight"].min()
               .drop(labels=list(largest.index), errors="ignore")
               .sort_values(kind="stable").head(MAX_CLUSTERS - len(largest)))
    return [*largest.index.tolist(), *[c for c in weakest.index.tolist() if c in several]]


def cluster_view(result, records, clusters: list | None = None, *,
                 path: str | Path | None = None):
    """The cluster view of `result` (see the module's docstring); `records`: the input table
    (a link: [left, right]); `clusters`: the cluster ids to show (default: the largest and
    the ones joined by the weakest matched pair)."""
    alt, _ = _modules()
    by_id = _records_by_id(result, records)
    columns = _shown_columns(result, by_id)
    table = result.clusters
    id_column = table.columns[0]
    threshold = float(result.scorer.threshold)
    chosen = _chosen_clusters(result, clusters)
    pairs = result.pairs
    left, right = pairs["id_l"].astype(str), pairs["id_r"].astype(str)
    body, charts = [], {}
    for k, cluster in enumerate(chosen):
        ids = table.loc[table["cluster_id"] == cluster, id_column].astype(str).tolist()
        ids = ids[:MAX_CLUSTER_SIZE]
        members = set(ids)
        edges = pairs[left.isin(members).to_numpy() & right.isin(members).to_numpy()]
        angle = 2 * np.pi * np.arange(len(ids)) / max(len(ids), 1)
        position = {i: (float(np.cos(a)), float(np.sin(a))) for i, a in zip(ids, angle,
                                                                            strict=True)}
        nodes = pd.DataFrame({"id": ids, "x": [position[i][0] for i in ids],
                              "y": [position[i][1] for i in ids],
                              "record": [" · ".join(_text(by_id.loc[i].get(c)) for c in columns)
                                         if i in by_id.index else "" for i in ids]})
        lines = pd.DataFrame({
            "x": [position[str(a)][0] for a in edges["id_l"]],
            "y": [position[str(a)][1] for a in edges["id_l"]],
            "x2": [position[str(b)][0] for b in edges["id_r"]],
            "y2": [position[str(b)][1] for b in edges["id_r"]],
            "weight": edges["match_weight"].round(2).to_numpy(),
            "matched": np.where(edges["match_weight"].to_numpy() >= threshold, "matched",
                                "below the threshold"),
            "pair": [f"{a} ~ {b}" for a, b in zip(edges["id_l"], edges["id_r"], strict=True)]})
        axis = alt.Axis(title=None, labels=False, ticks=False, grid=False, domain=False)
        scale = alt.Scale(domain=[-1.3, 1.3])
        drawn = alt.layer(
            alt.Chart(lines).mark_rule(strokeWidth=2).encode(
                x=alt.X("x:Q", axis=axis, scale=scale), y=alt.Y("y:Q", axis=axis, scale=scale),
                x2="x2:Q", y2="y2:Q",
                color=alt.Color("weight:Q", scale=alt.Scale(scheme="redblue",
                                                            domainMid=threshold)),
                strokeDash=alt.StrokeDash("matched:N", scale=alt.Scale(
                    domain=["matched", "below the threshold"], range=[[1, 0], [4, 4]])),
                tooltip=["pair", "weight", "matched"]),
            alt.Chart(nodes).mark_circle(size=220, color="#1f2933").encode(
                x="x:Q", y="y:Q", tooltip=["id", "record"]),
            alt.Chart(nodes).mark_text(dy=-14, fontSize=11).encode(x="x:Q", y="y:Q",
                                                                  text="id:N"),
        ).properties(width=420, height=420, title=f"Cluster {cluster}: {len(ids)} records, "
                                                  f"{len(edges)} scored pairs")
        charts[f"cluster-{k}"] = _spec(drawn)
        matched = edges[edges["match_weight"] >= threshold]
        weakest = ""
        if not matched.empty:
            low = matched.loc[matched["match_weight"].idxmin()]
            weakest = ("<p>Weakest matched pair (the one that joins the cluster at the lowest "
                       f"weight): <b>{html.escape(str(low['id_l']))}</b> ~ "
                       f"<b>{html.escape(str(low['id_r']))}</b>, weight "
                       f"{low['match_weight']:.2f}.</p>")
        rows = "".join(
            "<tr>" + f"<td>{html.escape(i)}</td>" + "".join(
                f"<td>{html.escape(_text(by_id.loc[i].get(c)) if i in by_id.index else '')}</td>"
                for c in columns) + "</tr>" for i in ids)
        record_table = ("<table class=\"records\"><tr><th>id</th>"
                        + "".join(f"<th>{html.escape(c)}</th>" for c in columns) + "</tr>"
                        + rows + "</table>")
        body.append(f"<details id=\"cluster-box-{k}\"{' open' if k == 0 else ''}><summary>"
                    f"Cluster {html.escape(str(cluster))}: {len(ids)} records</summary>"
                    f"<div id=\"cluster-{k}\" class=\"chart\"></div>{weakest}{record_table}"
                    "</details>")
    intro = (f"{len(chosen)} clusters: the largest and those joined by the weakest matched pair. "
             f"Edges are scored candidate pairs (solid: at or above the threshold {threshold:g};"
             " dashed: below it), coloured by match weight; hover for records and weights.")
    view = _page("Cluster view", intro, body, charts)
    if path is not None:
        view.save(path)
    return view


# ---------------------------------------------------------------------- accuracy from labels


def labelled_weights(result, labels: pd.DataFrame) -> pd.DataFrame:
    """The labelled pairs (id_l, id_r, label 1/0) with the run's match weight of each (either
    order); a pair the run never compared has no weight (it is a miss at every threshold)."""
    for column in ("id_l", "id_r", "label"):
        if column not in labels.columns:
            raise InputError(f"labels: column `{column}` is missing (the file `linkage sample` "
                             "writes, with `label` filled in: 1 match, 0 non-match).")
    text = labels["label"].astype(str).str.strip()
    kept = labels[text.isin(["0", "1", "0.0", "1.0"])]
    y = kept["label"].astype(str).str.strip().str[0].astype(int).to_numpy()
    pairs = result.pairs
    weight = pd.Series(pairs["match_weight"].to_numpy(), index=pd.MultiIndex.from_arrays(
        [pairs["id_l"].astype(str), pairs["id_r"].astype(str)]))
    weight = weight[~weight.index.duplicated()]
    a, b = kept["id_l"].astype(str).to_numpy(), kept["id_r"].astype(str).to_numpy()
    forward = weight.reindex(pd.MultiIndex.from_arrays([a, b])).to_numpy()
    backward = weight.reindex(pd.MultiIndex.from_arrays([b, a])).to_numpy()
    return pd.DataFrame({"id_l": a, "id_r": b, "label": y,
                         "match_weight": np.where(np.isnan(forward), backward, forward)})


def accuracy_table(result, labels: pd.DataFrame) -> pd.DataFrame:
    """Precision, recall and F1 of the labelled pairs at each threshold (every labelled
    weight), as Splink's accuracy charts compute them from a labels table."""
    scored = labelled_weights(result, labels)
    y = scored["label"].to_numpy()
    w = scored["match_weight"].to_numpy()
    positives = int(y.sum())
    if positives == 0:
        raise InputError("labels: no pair is labelled a match (1): precision and recall need "
                         "some.")
    scored = ~np.isnan(w)
    order = np.argsort(-w[scored], kind="stable")  # heaviest first
    ws, ys = w[scored][order], y[scored][order]
    thresholds, first = np.unique(-ws, return_index=True)  # each weight's first place
    last = np.append(first[1:], len(ws)) - 1  # ... and its last: ties go in together
    predicted = last + 1
    tp = np.cumsum(ys)[last]
    precision = tp / predicted
    recall = tp / positives
    total = precision + recall
    f1 = np.divide(2 * precision * recall, total, out=np.zeros_like(total), where=total > 0)
    return pd.DataFrame({"threshold": -thresholds, "precision": precision, "recall": recall,
                         "f1": f1, "predicted": predicted}).iloc[::-1].reset_index(drop=True)


def accuracy_charts(result, labels, *, path: str | Path | None = None):
    """Precision against recall, and precision, recall and F1 against the threshold, from
    `labels` (a CSV path or a DataFrame: id_l, id_r, label), with the run's threshold marked."""
    alt, _ = _modules()
    if not isinstance(labels, pd.DataFrame):
        labels = pd.read_csv(labels, dtype=str, keep_default_na=False)
    table = accuracy_table(result, labels)
    threshold = float(result.scorer.threshold)
    long = table.melt(id_vars=["threshold"], value_vars=["precision", "recall", "f1"],
                      var_name="measure", value_name="value")
    by_threshold = alt.layer(
        alt.Chart(long).mark_line(interpolate="step-after").encode(
            x=alt.X("threshold:Q", title="threshold (match weight)"),
            y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title=None),
            color=alt.Color("measure:N", title=None),
            tooltip=["threshold", "measure", alt.Tooltip("value:Q", format=".3f")]),
        alt.Chart(pd.DataFrame({"threshold": [threshold]})).mark_rule(
            color="#1f2933", strokeDash=[4, 3]).encode(x="threshold:Q"),
    ).properties(width=520, height=300, title="Precision, recall and F1 by threshold")
    curve = alt.Chart(table).mark_line(point=True).encode(
        x=alt.X("recall:Q", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("precision:Q", scale=alt.Scale(domain=[0, 1])),
        order="threshold:Q",
        tooltip=[alt.Tooltip("threshold:Q", format=".2f"), alt.Tooltip("precision:Q",
                 format=".3f"), alt.Tooltip("recall:Q", format=".3f")],
    ).properties(width=360, height=300, title="Precision against recall")
    at = table[table["threshold"] >= threshold].head(1)
    current = ("" if at.empty else
               f" At the run's threshold {threshold:g}: precision {at['precision'].iloc[0]:.3f},"
               f" recall {at['recall'].iloc[0]:.3f} of the labelled matches.")
    scored = labelled_weights(result, labels)
    intro = html.escape(
        f"{len(scored):,} labelled pairs ({int(scored['label'].sum()):,} matches; "
        f"{int(scored['match_weight'].isna().sum()):,} never compared, missed at every "
        f"threshold).{current} Labelled pairs are a sample: recall here is recall among them.")
    view = _page("Accuracy from labels", intro,
                 ["<div id=\"by-threshold\" class=\"chart\"></div>",
                  "<div id=\"pr-curve\" class=\"chart\"></div>"],
                 {"by-threshold": _spec(by_threshold), "pr-curve": _spec(curve)})
    if path is not None:
        view.save(path)
    return view


# ---------------------------------------------------------------------- unlinkables


def unlinkables_chart(self_weights: pd.Series, threshold: float, *,
                      path: str | Path | None = None):
    """The share of records (y) whose self-match weight (`Linker.self_match_weights`: the
    weight against an exact copy) is below each threshold (x), with the run's threshold
    marked: at the threshold, that share of the records cannot be linked to anything."""
    alt, _ = _modules()
    weights = np.sort(self_weights.to_numpy(dtype=float))
    values = np.unique(weights)
    share = np.searchsorted(weights, values, side="left") / max(len(weights), 1)
    curve = pd.DataFrame({"threshold": values, "unlinkable": share})
    below = float(np.mean(weights < threshold)) if len(weights) else 0.0
    chart = alt.layer(
        alt.Chart(curve).mark_line(interpolate="step-after").encode(
            x=alt.X("threshold:Q", title="threshold (match weight)"),
            y=alt.Y("unlinkable:Q", title="share of records unlinkable",
                    axis=alt.Axis(format="%")),
            tooltip=[alt.Tooltip("threshold:Q", format=".2f"),
                     alt.Tooltip("unlinkable:Q", format=".2%")]),
        alt.Chart(pd.DataFrame({"threshold": [threshold]})).mark_rule(
            color="#1f2933", strokeDash=[4, 3]).encode(x="threshold:Q"),
    ).properties(width=520, height=300, title="Records that cannot be linked, by threshold")
    sparse = self_weights[self_weights < threshold].sort_values(kind="stable").head(10)
    listed = "".join(f"<tr><td>{html.escape(str(i))}</td><td>{w:.2f}</td></tr>"
                     for i, w in sparse.items())
    body = ["<div id=\"unlinkables\" class=\"chart\"></div>"]
    if listed:
        body.append("<h2>The sparsest records</h2><table class=\"records\"><tr><th>id</th>"
                    f"<th>weight against itself</th></tr>{listed}</table>")
    intro = html.escape(
        f"{below:.2%} of the {len(weights):,} records weigh less than the threshold "
        f"{threshold:g} even against an exact copy of themselves (their missing values earn "
        "nothing): no duplicate of theirs can be found.")
    view = _page("Unlinkable records", intro, body, {"unlinkables": _spec(chart)})
    if path is not None:
        view.save(path)
    return view
