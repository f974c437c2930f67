"""Interactive views (issue 16, item 4): the comparison viewer, the cluster view and the
accuracy charts, each a self-contained page, drawn by headless Chromium with no network."""

from __future__ import annotations

import pandas as pd
import pytest

import linkage as lk
from linkage.views import accuracy_table
from tests._browser import chromium_page
from tests.conftest import ROOT

pytest.importorskip("vl_convert")
RULES = ROOT / "rules" / "customers.yaml"
SAMPLE = ROOT / "sample_data" / "customers.csv"


@pytest.fixture(scope="module")
def linker():
    return lk.Linker(RULES).fit(SAMPLE)


@pytest.fixture(scope="module")
def labels(linker):
    truth = pd.read_csv(ROOT / "sample_data" / "customers_truth.csv", dtype=str).set_index(
        "customer_id")["person_id"]
    pairs = linker.result_.pairs
    same = pairs["id_l"].map(truth) == pairs["id_r"].map(truth)
    return pd.DataFrame({"id_l": pairs["id_l"], "id_r": pairs["id_r"],
                         "label": same.astype(int)}).sample(400, random_state=0)


@pytest.fixture(scope="module")
def browser():
    with chromium_page() as (page, console_errors, page_errors):
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.set_viewport_size({"width": 1280, "height": 900})

        def show(path):
            for found in (console_errors, page_errors, requests):
                found.clear()
            page.goto(path.resolve().as_uri())
            page.wait_for_selector(".chart svg", timeout=20_000)  # vega-embed drew
            return page, {"console": list(console_errors), "errors": list(page_errors),
                          "requests": [r for r in requests if not r.startswith("file:")]}

        yield show


def _png_pixels(png: bytes) -> bytes:
    """The decompressed image data of a PNG (its IDAT chunks): enough to tell a drawn chart
    from a blank area without an imaging library."""
    import struct
    import zlib

    at, data = 8, b""
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        if kind == b"IDAT":
            data += png[at + 8:at + 8 + length]
        at += 12 + length
    return zlib.decompress(data)


def _drawn(page, seen, chart: str) -> None:
    assert seen["errors"] == [] and seen["console"] == []
    assert seen["requests"] == []  # nothing fetched: the page carries its code
    svg = page.locator(f"{chart} svg").first
    box = svg.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 150
    pixels = _png_pixels(svg.screenshot())
    assert len(set(pixels)) > 20  # marks, axes and labels: many shades, not a blank box


def test_comparison_viewer_shows_patterns_and_records(linker, browser, tmp_path):
    path = linker.comparison_viewer(tmp_path / "viewer.html").save(tmp_path / "viewer.html")
    page, seen = browser(path)
    _drawn(page, seen, "#patterns")
    first = page.locator("details#pattern-0")
    assert first.is_visible() and "pairs, mean weight" in first.locator("summary").inner_text()
    # the records themselves, side by side, differing values marked
    table = first.locator("table.records").first
    assert table.is_visible()
    records = pd.read_csv(SAMPLE, dtype=str)
    assert any(name in table.inner_text() for name in records["name"].dropna().head(2000))
    # the same input gives the same page, byte for byte
    assert str(linker.comparison_viewer()) == path.read_text(encoding="utf-8")


def test_cluster_view_draws_the_largest_cluster_with_its_weakest_pair(linker, browser,
                                                                     tmp_path):
    view = linker.cluster_view()
    path = view.save(tmp_path / "clusters.html")
    page, seen = browser(path)
    _drawn(page, seen, "#cluster-0")
    clusters = linker.result_.clusters
    largest = clusters.groupby("cluster_id").size().idxmax()
    box = page.locator("details#cluster-box-0")
    assert f"Cluster {largest}:" in box.locator("summary").inner_text()
    assert page.locator("#cluster-0 svg").count() == 1
    members = clusters.loc[clusters["cluster_id"] == largest, "customer_id"].astype(str)
    text = box.inner_text()
    assert all(m in text for m in members) and "Weakest matched pair" in text


def test_accuracy_charts_agree_with_the_table(linker, labels, browser, tmp_path):
    table = accuracy_table(linker.result_, labels)
    assert table["recall"].is_monotonic_decreasing and table["recall"].iloc[0] == 1.0
    y = labels["label"].to_numpy()
    weights = linker.predict()
    chosen = table.iloc[len(table) // 2]
    merged = labels.merge(weights[["id_l", "id_r", "match_weight"]], on=["id_l", "id_r"])
    tp = int(((merged["match_weight"] >= chosen["threshold"]) & (merged["label"] == 1)).sum())
    assert chosen["recall"] == pytest.approx(tp / int(y.sum()))
    path = linker.accuracy_charts(labels).save(tmp_path / "accuracy.html")
    page, seen = browser(path)
    _drawn(page, seen, "#by-threshold")
    _drawn(page, seen, "#pr-curve")
    assert page.locator("#by-threshold svg").count() == 1
    assert page.locator("#pr-curve svg").count() == 1
    assert "labelled pairs" in page.inner_text("body")


def test_unlinkables_are_the_records_too_sparse_to_link(browser, tmp_path):
    records = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)
    sparse = records.index[:25]
    keep = {"customer_id", "name"}
    for column in records.columns:
        if column not in keep:
            records.loc[sparse, column] = ""
    path = tmp_path / "sparse.csv"
    records.to_csv(path, index=False)
    linker = lk.Linker(RULES).fit(path)
    weights = linker.self_match_weights()
    threshold = float(linker.scorer_.threshold)
    unlinkable = set(weights.index[weights < threshold])
    assert set(records.loc[sparse, "customer_id"]) <= unlinkable  # a name alone: too little
    full = records.index[25:]
    assert (weights.loc[records.loc[full, "customer_id"]] >= threshold).mean() > 0.95
    view_path = linker.unlinkables_chart().save(tmp_path / "unlinkables.html")
    page, seen = browser(view_path)
    _drawn(page, seen, "#unlinkables")
    text = page.inner_text("body")
    assert f"{len(unlinkable) / len(weights):.2%}" in text
    assert records.loc[sparse[0], "customer_id"] in text or "sparsest" in text
