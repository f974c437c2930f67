"""report.html: self-contained, complete for each kind of run, equal to `calibrate`, escaped,
deterministic, and rendered by a real browser without errors or network."""

from __future__ import annotations

import html
import json
import math
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import linkage as lk
from linkage.errors import InputError, LinkageWarning
from linkage.measure.calibrate import calibrate, sample_pairs
from linkage.report import render_html
from linkage.report.charts import bar_chart_svg, precision_svg, s_curve_svg, shares_svg
from linkage.result import Result
from linkage.text.lsh import resolve_params, s_curve
from tests._browser import chromium_page, png_pixels
from tests.conftest import ROOT, run_cli
from tests.test_febrl import _opaque, _read_febrl

NS = "{http://www.w3.org/2000/svg}"


# ---------------------------------------------------------------------- reading a page back


class _Elements(HTMLParser):
    """Every start tag of a page with its attributes, in order."""

    def __init__(self, page: str):
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def find(self, tag: str, cls: str | None = None) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag
                and (cls is None or cls in a.get("class", "").split())]

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if "id" in a}


def _chart(page: str, chart_id: str) -> ET.Element:
    """The SVG inside <figure id=chart_id>, parsed as XML (so it must be well-formed)."""
    start = page.index(f'<figure class="chart" id="{chart_id}">')
    svg = page[page.index("<svg", start): page.index("</svg>", start) + len("</svg>")]
    return ET.fromstring(svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def _rects(root: ET.Element, cls: str) -> list[ET.Element]:
    return [r for r in root.iter(f"{NS}rect") if cls in r.get("class", "").split()]


# ---------------------------------------------------------------------- the runs


@pytest.fixture(scope="module")
def customers(tmp_path_factory) -> Path:
    """The sample customers through the CLI (rule sum, source column): its written folder."""
    out = tmp_path_factory.mktemp("customers") / "out"
    done = run_cli("dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                   ROOT / "rules" / "customers.yaml", "--out", out)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def febrl(tmp_path_factory, datasets):
    """FEBRL dataset1 with Fellegi-Sunter, written, and a labelled sample of its pairs."""
    folder = tmp_path_factory.mktemp("febrl")
    frame, entity = _opaque(_read_febrl(datasets / "febrl" / "dataset1.csv"), "report")
    frame.to_csv(folder / "in.csv", index=False)
    rules = lk.Rules.from_yaml(ROOT / "rules" / "febrl.yaml").to_dict()
    rules["scoring"] = {"type": "fellegi_sunter"}
    run = lk.dedupe(folder / "in.csv", lk.Rules.from_dict(rules), progress=False)
    run.write(folder / "out")
    todo = sample_pairs(folder / "out", [0.0, 0.5, 0.9], 30)
    # A reviewer's labels, here from the hidden truth; one left unsure, one written as a word.
    todo["label"] = [str(int(entity[a] == entity[b]))
                     for a, b in zip(todo["id_l"], todo["id_r"], strict=True)]
    todo.loc[0, "label"] = ""
    todo.loc[len(todo) - 1, "label"] = "yes" if todo.loc[len(todo) - 1, "label"] == "1" else "no"
    todo.to_csv(folder / "labels.csv", index=False)
    return run, folder / "out", folder / "labels.csv"


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> tuple[Result, Path]:
    """The labelled texts with the shipped document rules minus the embedding stage: exact
    copies, a MinHash-LSH blocker, guards that send conflicts to review."""
    rules = lk.Rules.from_yaml(ROOT / "rules" / "documents.yaml").to_dict()
    rules.pop("semantic")
    run = lk.dedupe(ROOT / "sample_data" / "labelled_text.csv", lk.Rules.from_dict(rules),
                    progress=False)
    out = tmp_path_factory.mktemp("documents") / "out"
    run.write(out)
    return run, out


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module; `show(path)` opens a page and reports on it."""
    with chromium_page() as (page, console_errors, page_errors):
        requests: list[str] = []
        dialogs: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.set_viewport_size({"width": 1280, "height": 900})

        def show(path: Path) -> dict:
            for found in (console_errors, page_errors, requests, dialogs):
                found.clear()
            page.goto(Path(path).resolve().as_uri())
            page.wait_for_load_state("load")
            boxes = {}
            for k, svg in enumerate(page.query_selector_all("svg")):
                owner = svg.evaluate("e => e.closest('figure') ? e.closest('figure').id : ''")
                boxes[owner or f"svg-{k}"] = svg.bounding_box()
            sections = page.eval_on_selector_all("section", "all => all.map(s => s.id)")
            # a removed record beside the one kept, with a marked difference: as drawn
            marked = page.query_selector("table.pair[data-kind='removed']:has(del):has(ins)")
            shown = marked is not None and marked.is_visible()
            record = {"shot": marked.screenshot() if shown else b"",
                      "text": marked.inner_text() if shown else "",
                      "ids": (marked.get_attribute("data-removed"),
                              marked.get_attribute("data-kept")) if shown else ()}
            log_axis = page.query_selector("#chart-weights svg[data-scale='log']") is not None
            return {"console": list(console_errors), "errors": list(page_errors),
                    "requests": list(requests), "dialogs": list(dialogs), "svgs": boxes,
                    "sections": sections, "figures": page.eval_on_selector_all(
                        "figure.chart", "all => all.map(f => f.id)"),
                    "scripts": page.evaluate("document.querySelectorAll('script').length"),
                    "text": page.inner_text("body"), "record": record,
                    "log_axis": log_axis}

        yield show


def _assert_clean(seen: dict) -> None:
    """No errors, no script, every request a local file, every chart drawn with a size."""
    assert seen["console"] == [] and seen["errors"] == [] and seen["dialogs"] == []
    assert seen["scripts"] == 0
    assert seen["requests"] and all(u.startswith("file://") for u in seen["requests"])
    assert set(seen["figures"]) <= set(seen["svgs"])  # every chart figure holds an svg
    for owner, box in seen["svgs"].items():
        assert box is not None and box["width"] > 50 and box["height"] > 50, owner


def _offline(page: str) -> None:
    lowered = page.lower()
    for needle in ("http:", "https:", "//cdn", "url(", "@import", "<script", "<link",
                   "<img", "src="):
        assert needle not in lowered, needle


# ---------------------------------------------------------------------- customers


def test_customers_page_in_a_browser(customers, browser):
    page = (customers / "report.html").read_text(encoding="utf-8")
    _offline(page)
    seen = browser(customers / "report.html")
    _assert_clean(seen)
    assert seen["sections"] == ["overview", "stages", "scores", "borderline", "removed",
                                "model", "removals", "clusters",
                                "cluster-records"]  # no labels, LSH, guards: no such sections
    assert {"chart-blockers", "chart-weights", "chart-rule-weights", "chart-removals-0",
            "chart-cluster-sizes"} <= set(seen["figures"])
    summary = json.loads((customers / "summary.json").read_text())
    assert f"{summary['stages']['block']['candidate_pairs']:,}" in seen["text"]
    assert f"{summary['actions']['duplicate']:,}" in seen["text"]


def test_customers_stage_counts_and_histogram_match_the_run(customers):
    page = (customers / "report.html").read_text(encoding="utf-8")
    summary = json.loads((customers / "summary.json").read_text())
    pairs = pd.read_parquet(customers / "pairs.parquet")
    histogram = _chart(page, "chart-weights")
    assert sum(int(b.get("data-count")) for b in _rects(histogram, "bin")) == len(pairs)
    assert float(histogram.get("data-threshold")) == summary["stages"]["score"]["threshold"]
    blockers = _chart(page, "chart-blockers")
    assert {b.get("data-label"): float(b.get("data-value")) for b in _rects(blockers, "bar")} \
        == {name: b["proposed_pairs"]
            for name, b in summary["stages"]["block"]["blockers"].items()}
    sizes = _chart(page, "chart-cluster-sizes")
    assert sum(float(b.get("data-value")) for b in _rects(sizes, "bar")) \
        == summary["stages"]["cluster"]["clusters"]


def test_customers_removals_by_source_show_before_and_after_shares(customers):
    page = (customers / "report.html").read_text(encoding="utf-8")
    by_source = json.loads((customers / "summary.json").read_text())["removals_by"]["source"]
    chart = _chart(page, "chart-removals-0")
    for kind in ("before", "after"):
        got = {r.get("data-label"): float(r.get("data-value")) for r in _rects(chart, kind)}
        assert got == {v: s[f"share_{kind}"] for v, s in by_source.items()}
    for stats in by_source.values():
        assert f"{stats['share_before']:.2%}" in page and f"{stats['share_after']:.2%}" in page


def test_rule_sum_weights_are_the_rules_weights(customers):
    page = (customers / "report.html").read_text(encoding="utf-8")
    rules = lk.Rules.from_yaml(ROOT / "rules" / "customers.yaml")
    bars = _rects(_chart(page, "chart-rule-weights"), "level")
    got = {(b.get("data-comparison"), b.get("data-level")): float(b.get("data-weight"))
           for b in bars}
    assert got[("name", "exact")] == 3.0 and got[("birth_date", "else")] == -4.0
    assert got[("postcode", "else")] == -0.3
    expected = sum(len(c.level_labels) for c in rules.comparisons)
    assert len(bars) == expected


def test_largest_clusters_are_the_largest(customers):
    page = (customers / "report.html").read_text(encoding="utf-8")
    clusters = pd.read_parquet(customers / "clusters.parquet")
    section = page[page.index('<section id="clusters">'):]
    section = section[: section.index("</section>")]
    rows = _Elements(section).find("tr")[1:]
    assert len(rows) == 10
    largest = clusters["cluster_size"].max()
    first_id = clusters.sort_values(["cluster_size", "cluster_id"], ascending=[False, True])\
        .iloc[0]["cluster_id"]
    assert f"<td>{first_id}</td><td class=\"num\">{largest}</td>" in section
    representative = clusters.loc[clusters["cluster_id"] == first_id,
                                  "representative_id"].iloc[0]
    assert f"<li>{representative} — keep: " in section  # the representative leads its list


def test_report_verb_rebuilds_the_same_page(customers, tmp_path):
    done = run_cli("report", customers, "--out", tmp_path / "again.html")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "again.html").read_bytes() == (customers / "report.html").read_bytes()


# ---------------------------------------------------------------------- Fellegi-Sunter


def test_fellegi_sunter_page_with_labels_in_a_browser(febrl, browser, tmp_path):
    run, out, labels = febrl
    done = run_cli("report", out, "--labels", labels, "--out", tmp_path / "labelled.html")
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout
    page = (tmp_path / "labelled.html").read_text(encoding="utf-8")
    _offline(page)
    seen = browser(tmp_path / "labelled.html")
    _assert_clean(seen)
    # Half of FEBRL1 is duplicates, above `max_removal_rate`: a diagnostic, shown first.
    assert seen["sections"] == ["diagnostics", "overview", "stages", "scores", "precision",
                                "borderline", "removed", "model", "removals", "clusters",
                                "cluster-records"]
    assert {"chart-mu", "chart-match-weights", "chart-precision"} <= set(seen["figures"])
    # The m/u bars and the match-weight bars are the scorer's parameters.
    table = run.scorer.parameter_table()
    mu = _chart(page, "chart-mu")
    m = {(r.get("data-comparison"), r.get("data-level")): float(r.get("data-value"))
         for r in _rects(mu, "m")}
    u = {(r.get("data-comparison"), r.get("data-level")): float(r.get("data-value"))
         for r in _rects(mu, "u")}
    weights = {(r.get("data-comparison"), r.get("data-level")): float(r.get("data-weight"))
               for r in _rects(_chart(page, "chart-match-weights"), "level")}
    for row in table.itertuples(index=False):
        assert m[(row.comparison, row.level)] == pytest.approx(row.m, rel=1e-12)
        assert u[(row.comparison, row.level)] == pytest.approx(row.u, rel=1e-12)
        assert weights[(row.comparison, row.level)] == pytest.approx(row.match_weight)
    summary = json.loads((out / "summary.json").read_text())
    assert f"{summary['stages']['score']['prior']:.6f}" in page


def test_precision_per_band_equals_calibrate(febrl):
    run, out, labels_path = febrl
    page = render_html(Result.load(out), labels=labels_path)
    # The bands come from the file's `band` column: those it was sampled in.
    labels = pd.read_csv(labels_path, dtype={"label": str}, keep_default_na=False)
    expected, recommended = calibrate(labels, [0.0, 0.5, 0.9], on="probability")
    rows = _Elements(page).find("tr", "band")
    assert len(rows) == len(expected) == 3
    for row, (_, want) in zip(rows, expected.iterrows(), strict=True):
        assert float(row["data-band-from"]) == want["band_from"]
        assert int(row["data-labelled"]) == want["labelled"]
        if want["labelled"]:
            assert float(row["data-precision"]) == want["precision"]
        else:
            assert row["data-precision"] == "nan"  # the band nobody could label
        assert float(row["data-ci-low"]) == want["ci_low"]
        assert float(row["data-ci-high"]) == want["ci_high"]
    assert expected["labelled"].sum() == len(labels) - 1  # the unsure one is left out
    bars = _rects(_chart(page, "chart-precision"), "band")
    assert [float(b.get("data-precision")) for b in bars] == \
        expected.loc[expected["labelled"] > 0, "precision"].tolist()
    assert recommended is not None and f"{recommended:g} (probability)" in page
    # Given bands win over the file's, and give calibrate's numbers for those bands.
    other = render_html(run, labels=labels, bands=[0.0, 0.9])
    again, _ = calibrate(labels, [0.0, 0.9], on="probability")
    got = [float(r["data-precision"]) for r in _Elements(other).find("tr", "band")]
    assert got == again["precision"].tolist()


def test_written_report_is_byte_identical(febrl, tmp_path):
    run, out, _ = febrl
    run.write(tmp_path / "one")
    run.write(tmp_path / "two")
    one = (tmp_path / "one" / "report.html").read_bytes()
    assert one == (tmp_path / "two" / "report.html").read_bytes()
    assert one == (out / "report.html").read_bytes()
    assert one == render_html(Result.load(out)).encode("utf-8")  # the folder has all it needs
    assert "second" not in one.decode("utf-8").lower()  # timings.json stays apart


def test_report_shows_inline_in_a_notebook(febrl):
    run, _, _ = febrl
    shown = run.report()
    frame = shown._repr_html_()
    assert frame.startswith("<iframe ") and ' srcdoc="' in frame and "sandbox" in frame
    srcdoc = frame[frame.index(' srcdoc="') + len(' srcdoc="'):]
    srcdoc = srcdoc[: srcdoc.index('"')]
    assert "<" not in srcdoc  # the page is escaped into the attribute
    assert html.unescape(srcdoc) == str(shown) == render_html(run)
    assert "chart-mu" in str(shown)


def test_supervised_scorer_shows_its_features(febrl, tmp_path):
    run, _, labels = febrl
    rules = run.rules.to_dict()
    rules["scoring"] = {"type": "supervised", "labels": str(labels),
                        "model": "logistic_regression", "cv": 3}
    frame = pd.read_csv(labels.parent / "in.csv", dtype=str, keep_default_na=False)
    supervised = lk.dedupe(frame, lk.Rules.from_dict(rules), progress=False)
    page = render_html(supervised)
    bars = _rects(_chart(page, "chart-features"), "bar")
    names = supervised.scorer.feature_names_
    coefficients = dict(zip(names, supervised.scorer.model_.coef_[0] / math.log(2.0),
                            strict=True))
    assert bars and all(float(b.get("data-value")) == pytest.approx(
        coefficients[b.get("data-label")]) for b in bars)
    assert "cross-validated precision" in page


# ---------------------------------------------------------------------- MinHash-LSH


def test_lsh_page_has_the_s_curve_and_the_guards_in_a_browser(documents, browser):
    run, out = documents
    seen = browser(out / "report.html")
    _assert_clean(seen)
    assert seen["sections"] == ["overview", "stages", "scores", "borderline", "removed",
                                "model", "removals", "clusters", "cluster-records", "guards",
                                "lsh"]
    page = (out / "report.html").read_text(encoding="utf-8")
    blocker = run.rules.blocking[0]
    bands, rows = resolve_params(blocker.threshold, blocker.num_perm, blocker.bands,
                                 blocker.rows)
    curve = _chart(page, "chart-s-curve-0")
    assert (int(curve.get("data-bands")), int(curve.get("data-rows"))) == (bands, rows)
    assert float(curve.get("data-threshold")) == blocker.threshold
    for point in curve.iter(f"{NS}circle"):
        if point.get("class") == "point":
            assert float(point.get("data-p")) == pytest.approx(
                float(s_curve(bands, rows, float(point.get("data-j")))))
    summary = run.summary_data
    review_groups = run.review["review_group"].nunique()
    assert f"<dt>records sent to review</dt><dd>{summary['actions']['review']:,}</dd>" in page
    assert f"<dt>review groups (review.parquet)</dt><dd>{review_groups:,}</dd>" in page
    decisions = {r.get("data-label"): float(r.get("data-value"))
                 for r in _rects(_chart(page, "chart-guards"), "bar")}
    assert decisions == {f"{g}: {d}": n for g, c in summary["stages"]["guard"].items()
                         for d, n in c.items()}
    assert set(summary["removals_by"]) == {"source", "domain"}
    assert "chart-removals-1" in seen["figures"]  # one chart per reported column


def test_link_run_reports_links_not_removals(datasets):
    left = pd.read_csv(datasets / "febrl" / "dataset4a.csv", dtype=str, skipinitialspace=True,
                       keep_default_na=False).head(400)
    right = pd.read_csv(datasets / "febrl" / "dataset4b.csv", dtype=str, skipinitialspace=True,
                        keep_default_na=False).head(400)
    run = lk.link(left, right, ROOT / "rules" / "febrl.yaml", progress=False)
    page = render_html(run)
    ids = _Elements(page).ids()
    assert "removals" not in ids and {"overview", "stages", "scores", "clusters"} <= ids
    assert f"{run.summary_data['links']:,}" in page and "(left)" in page and "(right)" in page


def test_a_run_without_pairs_or_with_skipped_blocks_still_reports():
    rules = {"blocking": [{"keys": ["city"]}], "comparisons": [{"type": "exact",
                                                               "column": "name"}]}
    alone = pd.DataFrame({"name": ["anna", "bob", "carl"], "city": ["x", "y", "z"]})
    page = render_html(lk.dedupe(alone, rules, progress=False))
    assert "No candidate pairs were scored." in page and "No cluster holds" in page
    # Not copies (those are paired without blocking): one city, thirty-one names.
    crowded = pd.DataFrame({"name": [f"anna{k}" for k in range(30)] + ["bob"],
                            "city": ["x"] * 31})
    with pytest.warns(LinkageWarning):
        run = lk.dedupe(crowded, {**rules, "max_block_size": 10}, progress=False)
    page = render_html(run)
    assert "Oversized blocks" in page and "oversized block(s) were sub-blocked" in page
    assert "sorted neighbourhood on name" in page  # how the block of 31 was paired


# ---------------------------------------------------------------------- escaping


def test_record_values_are_escaped(tmp_path, browser):
    frame = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str).head(300)
    copy = frame.iloc[[0]]
    attack = pd.concat([copy] * 5, ignore_index=True)
    attack["customer_id"] = [f"<script>alert({i})</script>" for i in range(5)]
    attack["source"] = '<img src=x onerror="alert(1)">'
    frame = pd.concat([frame, attack], ignore_index=True)
    run = lk.dedupe(frame, ROOT / "rules" / "customers.yaml", progress=False)
    run.write(tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(0)&lt;/script&gt;" in page
    seen = browser(tmp_path / "out" / "report.html")
    _assert_clean(seen)
    assert "<script>alert(0)</script>" in seen["text"]  # shown as text, never run
    assert '<img src=x onerror="alert(1)">' in seen["text"]


# ---------------------------------------------------------------------- bad input


def test_bad_inputs_are_clear_errors(febrl, customers, tmp_path):
    from click.testing import CliRunner

    from linkage.cli import main

    def report(*args) -> tuple[int, str]:  # the real CLI, in this process: six runs, fast
        done = CliRunner().invoke(main, ["report", *map(str, args)])
        return done.exit_code, done.stderr

    _, out, labels = febrl
    code, error = report(tmp_path / "nowhere")
    assert code == 2 and "no such folder" in error
    (tmp_path / "empty").mkdir()
    code, error = report(tmp_path / "empty")
    assert code == 2 and "not a run folder" in error
    pd.DataFrame({"id_l": ["a"], "id_r": ["b"]}).to_csv(tmp_path / "nolabel.csv", index=False)
    code, error = report(out, "--labels", tmp_path / "nolabel.csv")
    assert code == 2 and "nolabel.csv" in error and "`label`" in error
    blank = pd.read_csv(labels, dtype=str, keep_default_na=False).assign(label="")
    blank.to_csv(tmp_path / "blank.csv", index=False)
    code, error = report(out, "--labels", tmp_path / "blank.csv")
    assert code == 2 and "no row has a usable `label`" in error
    # Labels of another run: none of its pairs are candidate pairs here.
    code, error = report(customers, "--labels", labels)
    assert code == 2 and "another run" in error
    code, error = report(out, "--labels", tmp_path / "missing.csv")
    assert code == 2 and "missing.csv" in error
    assert not (tmp_path / "empty" / "report.html").exists()


# ---------------------------------------------------------------------- the new charts


def test_report_charts_are_well_formed_and_escaped():
    bars = ET.fromstring(bar_chart_svg(["a<b", "c"], [3, -1.5], title="t", axis_label="x",
                                       digits=1))
    assert [r.get("data-label") for r in _rects(bars, "bar")] == ["a<b", "c"]
    shares = ET.fromstring(shares_svg(pd.DataFrame({"value": ["crm", "web"],
                                                    "share_before": [0.6, 0.4],
                                                    "share_after": [0.5, 0.5]}), title="s"))
    after = _rects(shares, "after")
    assert float(after[0].get("width")) == pytest.approx(float(after[1].get("width")))
    table = pd.DataFrame({"band_from": [0.5, 0.9], "band_to": [0.9, 1.0], "labelled": [0, 10],
                          "matches": [0, 9], "precision": [np.nan, 0.9],
                          "ci_low": [0.0, 0.6], "ci_high": [1.0, 0.98]})
    precision = ET.fromstring(precision_svg(table, target=0.95))
    assert len(_rects(precision, "band")) == 1  # the empty band has no bar
    curve = ET.fromstring(s_curve_svg(20, 5, threshold=0.5))
    middle = next(c for c in curve.iter(f"{NS}circle") if c.get("class") == "midpoint")
    assert float(middle.get("data-j")) == pytest.approx((1 / 20) ** (1 / 5))
    with pytest.raises(ValueError, match="positive integers"):
        s_curve_svg(0, 5)


# ---------------------------------------------------------------------- records (issue 16)


def test_report_shows_records_with_differences_in_a_browser(customers, browser, tmp_path):
    """The records themselves: removed ones with the record kept, the pairs on both sides of
    the threshold, and the clusters' joining pairs, differences marked and visible."""
    page = (customers / "report.html").read_text(encoding="utf-8")
    assert (customers / "report_records.parquet").is_file()
    seen = browser(customers / "report.html")
    _assert_clean(seen)
    for section_id in ("borderline", "removed", "cluster-records"):
        assert section_id in seen["sections"]
    elements = _Elements(page)
    kinds = {a.get("data-kind") for a in elements.find("table", "pair")}
    assert {"removed", "borderline-above", "borderline-below", "join-largest"} <= kinds
    threshold = float(json.loads((customers / "summary.json").read_text())["stages"]["score"]
                      ["threshold"])
    above = [float(a["data-weight"]) for a in elements.find("table", "pair")
             if a.get("data-kind") == "borderline-above"]
    below = [float(a["data-weight"]) for a in elements.find("table", "pair")
             if a.get("data-kind") == "borderline-below"]
    assert above and below and min(above) >= threshold > max(below)
    assert "pair(s) just below the threshold" in seen["text"]
    assert seen["log_axis"]
    # The screenshot of a removed record beside the one kept: both records' values are on
    # screen, and the marked characters are drawn in the colours of a deletion and an insertion.
    shown = seen["record"]
    assert shown["shot"] and len(shown["ids"]) == 2
    kept = pd.read_parquet(customers / "report_records.parquet").set_index("customer_id")
    for record_id in shown["ids"]:
        values = [v for v in kept.loc[record_id].dropna() if len(v) > 3]
        assert values and all(v in shown["text"] for v in values), record_id
    pixels = png_pixels(shown["shot"])
    deleted = sum(_near(p, (0xF8, 0xC9, 0xC9)) for p in pixels)  # `del` background
    inserted = sum(_near(p, (0xC6, 0xEC, 0xC6)) for p in pixels)  # `ins` background
    assert deleted > 40 and inserted > 40, (deleted, inserted)


def _near(pixel: tuple[int, ...], colour: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 6 for a, b in zip(pixel[:3], colour, strict=True))


def test_redacted_values_never_reach_the_page(customers, tmp_path):
    run = Result.load(customers)
    shown = run.records["email"].dropna()
    assert len(shown) and any(e in render_html(run) for e in shown)  # unredacted: on the page
    # Every value of the redacted columns in the input, not only the records the page shows
    # (free text, removals by value, reasons...), whichever way the page writes it.
    source = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    secret = {v for c in ("email", "name") for v in source[c].dropna() if len(v) >= 3}
    for mode in ("hash", "mask"):
        page = render_html(run, redact="email,name", redact_mode=mode)
        readable = html.unescape(page)
        assert not [v for v in secret if v in page or v in readable], mode
        assert page == render_html(run, redact=["email", "name"], redact_mode=mode)
    # `linkage report --redact` writes that page (the same bytes) to share
    done = run_cli("report", customers, "--redact", "email,name", "--redact-mode", "mask",
                   "--out", tmp_path / "shared.html")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "shared.html").read_text(encoding="utf-8") == page
    # Without --out the redacted page goes beside the run's own report, which stays whole.
    copy = tmp_path / "run"
    shutil.copytree(customers, copy)
    before = (copy / "report.html").read_bytes()
    done = run_cli("report", copy, "--redact", "email,name", "--redact-mode", "mask")
    assert done.returncode == 0, done.stderr
    assert (copy / "report_redacted.html").read_text(encoding="utf-8") == page
    assert (copy / "report.html").read_bytes() == before
    with pytest.raises(InputError):
        render_html(run, redact="no_such_column")


def test_records_are_chosen_the_same_whatever_the_batches(customers, tmp_path, monkeypatch):
    """The choice reads the pairs a batch (a row group) at a time and keeps a few rows: the
    same records whether the pairs are in memory or in a file of many row groups."""
    import dataclasses

    from linkage.io import ParquetFrame, write_parquet
    from linkage.report import _records

    run = Result.load(customers)
    whole = _records.pick(run)
    assert whole.removed and whole.above and whole.below and whole.largest and whole.weakest
    monkeypatch.setattr(_records, "BATCH_ROWS", 97)
    assert _records.pick(run) == whole
    monkeypatch.setenv("LINKAGE_ROW_GROUP_ROWS", "131")
    write_parquet(run.pairs, tmp_path / "pairs.parquet")
    in_file = ParquetFrame(tmp_path / "pairs.parquet")
    assert in_file.num_row_groups > 3
    assert _records.pick(dataclasses.replace(run, pairs=in_file)) == whole


def test_records_are_chosen_the_same_whether_ids_are_arrow_or_python_text(customers,
                                                                          monkeypatch):
    """Issue 18: ids are looked up as Arrow text (one hash lookup per column) where that gives
    `_text`'s strings; the dict of Python strings it replaced must choose the same records."""
    from linkage.report import _records

    run = Result.load(customers)
    fast = _records.pick(run)
    run = Result.load(customers)
    monkeypatch.setattr(_records, "_arrow_text", lambda values: None)
    assert _records.pick(run) == fast and fast.removed and fast.largest


def test_record_lookup_helpers_equal_the_python_ones():
    """Repeated ids (the last position wins, per side), unknown and missing ids, integer ids;
    the removed records' order by their hash's hex text; the cluster sizes of value_counts."""
    import hashlib

    import pyarrow as pa

    from linkage.report import _records, _sections

    rng = np.random.default_rng(3)
    for ids in (pd.Series([f"r{i}" for i in rng.integers(0, 40, 200)], dtype="str"),
                pd.Series(rng.integers(-5, 60, 200)), pd.Series([f"r{i}" for i in range(50)])):
        sides = rng.choice(["", "left", "right"], len(ids)).astype(object)
        arrow = _records._arrow_text(ids)
        assert arrow is not None and arrow.to_pylist() == _records._text(ids).tolist()
        text = _records._text(ids)
        fast = _records._Lookup(sides, _records._Ids(ids, arrow), arrow)
        slow = _records._Lookup(sides, _records._Ids(ids), None)
        asked = np.array([*text[rng.integers(0, len(ids), 60)], "nope", "r999"], dtype=object)
        chunks = [pa.array(asked[:30].tolist()), pa.array(asked[30:].tolist())]
        for side in ("", "left", "right", "other"):
            expected = slow.positions(side, asked)
            assert (expected >= 0).any() or side == "other"
            assert fast.positions(side, asked).tolist() == expected.tolist()
            assert fast.positions_of(side, chunks).tolist() == expected.tolist()
            assert slow.positions_of(side, chunks).tolist() == expected.tolist()
        hexed = np.array([hashlib.blake2b(t.encode(), digest_size=8).hexdigest() for t in text],
                         dtype=object)
        for count in (1, 12, len(text) + 5):
            assert _records._first_by_hash(text, count).tolist() == \
                np.lexsort((text, hexed))[:count].tolist()
            # hashed from the Arrow bytes of some of the records: the same order
            some = np.flatnonzero(rng.random(len(ids)) < 0.5)
            assert _records._first_by_hash(_records._Ids(ids, arrow).subset(some),
                                           count).tolist() == \
                _records._first_by_hash(text[some], count).tolist()
    assert _records._arrow_text(pd.Series(["a", None])) is None
    assert _records._arrow_text(pd.Series([1.0, 2.0])) is None
    for cluster in (rng.integers(0, 30, 300), rng.integers(-3, 30, 300),
                    np.array([10**12, 10**12, 5, 7, 7, 7])):
        expected = pd.Series(cluster).value_counts(sort=False)
        expected = expected[expected > 1].sort_index()
        got = _sections.sizes_above_one(cluster).sort_index()
        assert got.index.tolist() == expected.index.tolist()
        assert got.tolist() == expected.tolist()
        # the largest clusters, ties in the order of the ids, as a groupby gives them
        ids = pd.Series(cluster)
        sizes = ids.groupby(ids.to_numpy(), sort=True).size()
        top = sizes[sizes > 1].sort_values(ascending=False, kind="stable").head(
            _sections.LARGEST_CLUSTERS)
        pd.testing.assert_series_equal(_sections.top_clusters(ids), top)


def test_report_picks_helpers_equal_the_pandas_ones():
    """Issue 18: each cluster's joining edge (the last tree edge of its cluster, weakest last)
    by numpy as by a pandas sort and groupby; a few values of an Arrow-chunked column read one
    by one as `_text` of `iloc` gives them."""
    import pyarrow as pa

    from linkage.report import _records

    rng = np.random.default_rng(5)
    for cluster in (rng.integers(0, 40, 300), np.array([10**12, 10**12, 5, 7, 7, 7] * 9)):
        edges = rng.permutation(len(cluster))
        got = _records._joining_edges(cluster, edges)
        frame = pd.DataFrame({"cluster": cluster, "edge": edges, "rank": np.arange(len(edges))})
        expected = frame.sort_values(["cluster", "rank"], kind="stable").groupby(
            "cluster", sort=True).tail(1).set_index("cluster")["edge"]
        assert got.index.tolist() == expected.index.tolist()
        assert got.tolist() == expected.tolist() and got.index.dtype == expected.index.dtype
    chunked = pa.chunked_array([pa.array([f"r{i}" for i in range(k, k + 50)]) for k in (0, 50)])
    for values in (pd.Series(chunked.to_pylist(), dtype="string[pyarrow]"),
                   pd.Series(pd.arrays.ArrowExtensionArray(chunked)),
                   pd.Series(["a", None, "c"], dtype="string[pyarrow]"),
                   pd.Series(np.arange(100)), pd.Series(chunked.to_pylist(), dtype=object)):
        rows = [k for k in (0, 49, 50, 99, 2) if k < len(values)]
        assert _records._take_text(values, rows).tolist() == \
            _records._text(values.iloc[rows]).tolist()


@pytest.mark.parametrize("labelled", [False, True])
def test_a_run_picks_from_its_rows_what_the_ids_pick(tmp_path, labelled):
    """Issue 18: a dedupe hands the report its pairs as rows (in the order of pairs.parquet,
    is_match with the labelled joins); the picks (nearest the threshold, removed records'
    weights, clusters) equal those that reading pairs.parquet and looking the pairs' ids up
    gives, as a report re-rendered from the run folder does."""
    from linkage.api import dedupe
    from linkage.report import _records

    labels = None
    if labelled:  # a low pair between two clusters, said to match: the labels join them
        first = dedupe(ROOT / "sample_data/customers.csv", ROOT / "rules/customers.yaml",
                       progress=False)
        pairs = first.pairs.to_pandas() if hasattr(first.pairs, "to_pandas") else first.pairs
        cluster = dict(zip(first.clusters["customer_id"].astype(str),
                           first.clusters["cluster_id"], strict=True))
        apart = pairs[[cluster[str(a)] != cluster[str(b)]
                       for a, b in zip(pairs["id_l"], pairs["id_r"], strict=True)]]
        low = apart.nsmallest(1, "match_weight")
        labels = tmp_path / "labels.csv"
        low[["id_l", "id_r"]].assign(label=1).to_csv(labels, index=False)
    run = dedupe(ROOT / "sample_data/customers.csv", ROOT / "rules/customers.yaml",
                 progress=False, labels=labels)
    if labelled:
        assert run.summary()["labels"]["joined_clusters"] >= 1
    from_rows = run._report_picked
    assert from_rows.largest and from_rows.weakest and from_rows.removed
    assert from_rows.above and from_rows.below
    assert any(weight is not None for *_, weight in from_rows.removed)
    assert _records._pick(run) == from_rows


def test_a_link_picks_beside_its_summary_what_its_summary_picks():
    """Issue 18: the records the report shows are picked on a thread beside the summary,
    from a stand-in of the run (its outputs, mode, id column and threshold); the picks equal
    those of the finished run, whose summary is the whole one, and the records are theirs."""
    from linkage.api import link
    from linkage.report import _records

    run = link(ROOT / "sample_data/link_left.csv", ROOT / "sample_data/link_right.csv",
               ROOT / "rules/link.yaml", progress=False)
    beside = run._report_picked
    assert beside.above or beside.below
    assert _records._pick(run) == beside
    assert run.records is not None
    assert set(run.records["record_side"]) == {"left", "right"}
    assert len(run.records) == len(beside.keys())
