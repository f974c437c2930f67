"""report.html: one self-contained page with the charts a reviewer needs to trust a run.

The page needs no network and no script: CSS and SVG charts (`linkage.report.charts`) are
inline, and it opens from file://. It shows the stage counts, the match weights with the
threshold, the precision per score band when labelled pairs are given, the scorer's parameters
(m and u and match weights for Fellegi-Sunter, the weight table of a rule sum, the features of a
supervised model), removals by source and category with the shares before and after, the largest
clusters, the guards' decisions and the review queue, and the S-curve of each MinHash-LSH
blocker. At the top, the run's diagnostics (`linkage.diagnostics`): the signs, found without any
truth, that the model learned the wrong thing, each with what to do.

Every value from the data is HTML-escaped. The page holds no time, host or timings, so the same
input and rules give the same bytes; and it is built only from what a written run keeps, so
`linkage report RUN_DIR` rebuilds the page that `Result.write` wrote::

    run = linkage.dedupe("customers.csv", "rules/customers.yaml")
    run.report()                          # inline in a notebook
    run.report().save("report.html")      # or a file
    render_html(run, labels="labels.csv") # with precision per band from labelled pairs
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from linkage.options import RedactMode, ScoreScale
from linkage.report._records import PairRows

if TYPE_CHECKING:
    from linkage.result import Result

__all__ = ["PairRows", "ReportPage", "inline", "render_html", "write_report"]

_SECTIONS = [("diagnostics", "Model warnings"), ("overview", "Overview"),
             ("stages", "Stage counts"), ("scores", "Scores"),
             ("precision", "Precision"), ("borderline", "Near the threshold"),
             ("removed", "Removed records"), ("model", "Scorer"), ("removals", "Removals"),
             ("clusters", "Clusters"), ("cluster-records", "Cluster records"),
             ("guards", "Guards"), ("lsh", "MinHash-LSH")]


class ReportPage:
    """The report as HTML: `str(page)` is the page; Jupyter shows it inline, in an iframe so
    that the page's CSS cannot restyle the notebook."""

    __slots__ = ("html",)

    def __init__(self, page: str):
        self.html = page

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" sandbox '
                'title="linkage report" style="width: 100%; height: 900px; '
                'border: 1px solid #dde2e8;"></iframe>')

    def save(self, path: str | Path) -> Path:
        """Write the page to `path` (UTF-8) and return the path."""
        path = Path(path)
        path.write_bytes(self.html.encode("utf-8"))
        return path

    def __str__(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<linkage report, {len(self.html):,} characters>"


def sample_records(result: Result, records: pd.DataFrame, *, id_name: str, source,
                   pair_rows=None) -> pd.DataFrame:
    """The input records report.html shows (removed records beside their keepers, pairs near
    the threshold, the largest and weakest clusters): a few dozen rows, picked in one pass
    over the pairs (`_records.sample`; `pair_rows`: a dedupe run's pairs as rows, see
    `_records.pick`)."""
    from linkage.report._records import sample

    return sample(result, records, id_name=id_name, source=source, pair_rows=pair_rows)


def render_html(result: Result, *, labels: pd.DataFrame | str | Path | None = None,
                bands: list[float] | None = None, on: ScoreScale | None = None,
                target: float = 0.95, redact: str | list[str] | None = None,
                redact_mode: RedactMode = "hash") -> str:
    """The report page of `result` as one HTML string.

    `labels`: labelled pairs (the CSV of `linkage sample` with `label` filled in, or that
    table) for the precision per band, computed by `linkage.measure.calibrate.calibrate` on `bands`
    of the match probability or weight (`on`); both default to the bands the file was sampled
    in. `target`: the precision the recommended threshold must reach.

    `redact`: columns (a list, or names separated by commas) whose values the page must not
    hold, for a report that is shared: hashed (`redact_mode="hash"`, equal values stay equal)
    or masked (`"mask"`, only their shape stays). See `linkage.report._redact`.
    """
    import dataclasses

    from linkage.report import _sections as s
    from linkage.report import _shown
    from linkage.report._html import CSS, Markup, esc, tag
    from linkage.report._labels import read_labels, resolve
    from linkage.report._records import pick
    from linkage.report._redact import Redactor, check_columns, redacted_summary

    if isinstance(redact, str):
        redact = [c.strip() for c in redact.split(",") if c.strip()]
    redactor = Redactor(redact or (), redact_mode)
    if redactor:
        readable = [*result.rules.columns(), *result.rules.report_columns]
        if result.records is not None:
            readable += [str(c) for c in result.records.columns]
        check_columns(redactor, readable, result.summary_data.get("id_column"))
    labelled = None
    if labels is not None:
        frame = labels if isinstance(labels, pd.DataFrame) else read_labels(labels)
        labelled = resolve(frame, bands=bands, on=on, pairs=result.pairs)
    records = _shown.Records(result, redactor)
    if redactor:
        result = dataclasses.replace(
            result, summary_data=redacted_summary(result.summary_data, redactor, result.rules))
    picked = pick(result)
    s.hold_cluster_members(result, [c.cluster_id for c in picked.largest + picked.weakest])
    threshold = s.threshold_of(result)
    sections = [
        s.diagnostics(result),
        s.overview(result),
        s.stage_counts(result),
        s.scores(result, labelled=labelled is not None),
        s.precision(result, labelled, target),
        _shown.borderline(result, picked, records, threshold),
        _shown.removed(result, picked, records),
        s.model(result),
        s.removals(result),
        s.largest_clusters(result, text=redactor.text),
        _shown.cluster_records(result, picked, records),
        s.guards(result, text=redactor.text),
        s.lsh(result),
    ]
    present = [(key, title) for (key, title), body in zip(_SECTIONS, sections, strict=True)
               if body]
    nav = " ".join(f'<a href="#{key}">{esc(title)}</a>' for key, title in present)
    summary = result.summary_data
    inputs = ", ".join(str(i.get("name", "")) for i in summary.get("inputs", []))
    title = f"linkage {summary.get('mode', result.mode)} report"
    if redactor:
        nav += f' <span class="redacted">redacted ({esc(redactor.mode)}): ' \
               f'{esc(", ".join(redactor.columns))}</span>'
    page = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}: {esc(inputs)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        f"<header>{tag('h1', title)}{tag('p', inputs)}</header>",
        f"<nav>{nav}</nav>",
        "<main>",
        *[str(body) for body in sections if body],
        "</main>",
        str(tag("footer", Markup(
            f"Made by linkage {esc(summary.get('linkage_version', ''))} from the run's "
            "summary.json, tables and rules; regenerate it with "
            "<code>linkage report RUN_DIR</code>."))),
        "</body>",
        "</html>",
    ]
    return "\n".join(page) + "\n"


def inline(result: Result, **options) -> ReportPage:
    """The report of `result` for a notebook (what `Result.report()` returns)."""
    return ReportPage(render_html(result, **options))


def write_report(result: Result, path: str | Path, **options) -> Path:
    """Write the report of `result` to `path` (UTF-8) and return the path."""
    return ReportPage(render_html(result, **options)).save(path)
