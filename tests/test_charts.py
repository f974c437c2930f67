"""The SVG charts: well-formed, geometrically consistent, escaped and deterministic."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from linkage.errors import ParameterError
from linkage.report.charts import (
    NEGATIVE,
    NEUTRAL,
    POSITIVE,
    SVG,
    mu_chart_svg,
    waterfall_svg,
    weight_histogram_svg,
)
from tests.conftest import ROOT

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # raises when the document is not well-formed XML


def rects(root: ET.Element, cls: str) -> list[ET.Element]:
    return [r for r in root.iter(f"{NS}rect") if cls in r.get("class", "").split()]


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{NS}text")]


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame({
        "comparison": ["(prior)", "given_name", "surname", "a<b&c", "date_of_birth", "email"],
        "level": ["", "exact", ">=0.8", "else", "one_typo", "null"],
        "similarity": [np.nan, 1.0, 0.85, 0.1, 0.9, np.nan],
        "contribution": [-3.2, 7.25, 2.5, -4.125, 3.0, 0.0],
    })


def test_waterfall_has_a_bar_per_row_and_a_total(table):
    root = parse(waterfall_svg(table, title="pair 1 ~ 2", threshold=2.0))
    steps = rects(root, "step")
    assert len(steps) == len(table)
    assert len(rects(root, "total")) == 1
    assert [float(s.get("data-value")) for s in steps] == table["contribution"].tolist()
    assert float(rects(root, "total")[0].get("data-value")) == pytest.approx(5.425)
    assert float(root.get("data-total")) == pytest.approx(5.425)


def test_waterfall_puts_the_prior_first(table):
    shuffled = pd.concat([table.iloc[1:], table.iloc[:1]], ignore_index=True)
    root = parse(waterfall_svg(shuffled))
    assert rects(root, "step")[0].get("data-label") == "(prior)"
    assert float(rects(root, "step")[0].get("data-value")) == -3.2


def test_waterfall_steps_add_up(table):
    root = parse(waterfall_svg(table, threshold=2.0))
    zero = float(next(e for e in root.iter(f"{NS}line") if e.get("class") == "zero").get("data-x"))
    position = zero
    running = 0.0
    for step in rects(root, "step"):
        x, width = float(step.get("x")), float(step.get("width"))
        value = float(step.get("data-value"))
        assert width >= 0
        assert float(step.get("data-start")) == pytest.approx(running)
        running += value
        assert float(step.get("data-end")) == pytest.approx(running)
        if value >= 0:  # starts where the previous one ended, grows right
            assert x == pytest.approx(position, abs=0.02)
            position = x + width
        else:  # ends where the previous one ended, grows left
            assert x + width == pytest.approx(position, abs=0.02)
            position = x
    total = rects(root, "total")[0]
    x, width = float(total.get("x")), float(total.get("width"))
    # the total runs from zero to where the last step ended
    assert x == pytest.approx(min(zero, position), abs=0.02)
    assert x + width == pytest.approx(max(zero, position), abs=0.02)
    # widths are proportional to the values
    scale = width / abs(running)
    for step in rects(root, "step"):
        assert float(step.get("width")) == pytest.approx(
            abs(float(step.get("data-value"))) * scale, abs=0.03)


def test_waterfall_colours_by_sign(table):
    root = parse(waterfall_svg(table))
    for step in rects(root, "step"):
        value = float(step.get("data-value"))
        expected = POSITIVE if value > 0 else NEGATIVE if value < 0 else NEUTRAL
        assert step.get("fill") == expected
        assert ("positive" if value > 0 else "negative" if value < 0 else "zero") in step.get(
            "class").split()
    assert POSITIVE != NEGATIVE


def test_waterfall_threshold_line_only_when_given(table):
    with_line = parse(waterfall_svg(table, threshold=2.5))
    lines = [e for e in with_line.iter(f"{NS}line") if e.get("class") == "threshold"]
    assert len(lines) == 1
    assert float(lines[0].get("data-threshold")) == 2.5
    assert lines[0].get("stroke-dasharray")
    assert any("threshold 2.5" in t for t in texts(with_line))
    without = parse(waterfall_svg(table))
    assert not [e for e in without.iter(f"{NS}line") if e.get("class") == "threshold"]


def test_waterfall_labels_and_escaping(table):
    svg = waterfall_svg(table, title="pair <1> & \"2\"")
    assert "a<b&c" not in svg
    assert "a&lt;b&amp;c" in svg
    root = parse(svg)
    labels = texts(root)
    assert "a<b&c: else" in labels  # parsed back to the original text
    assert "given_name: exact" in labels
    assert "(prior)" in labels
    assert "match weight" in labels
    assert "+7.25" in labels and "-3.20" in labels and "+0.00" in labels
    assert 'pair <1> & "2"' in labels


def test_waterfall_is_deterministic_and_displays_inline(table):
    first = waterfall_svg(table, title="t", threshold=1.0)
    second = waterfall_svg(table.copy(), title="t", threshold=1.0)
    assert first == second
    assert isinstance(first, SVG) and isinstance(first, str)
    assert first._repr_svg_() == str(first) == first
    assert str(first).startswith("<svg")
    assert "script" not in first.lower() and "http://" not in first.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")


def test_waterfall_handles_a_threshold_far_away_and_no_prior(table):
    root = parse(waterfall_svg(table.iloc[1:], threshold=100.0))
    assert len(rects(root, "step")) == len(table) - 1
    line = next(e for e in root.iter(f"{NS}line") if e.get("class") == "threshold")
    total = rects(root, "total")[0]
    assert float(line.get("x1")) > float(total.get("x")) + float(total.get("width"))


def test_waterfall_rejects_bad_tables():
    # A LinkageError that says the fix (and a ValueError, as Python's own functions raise).
    with pytest.raises(ParameterError, match="contribution"):
        waterfall_svg(pd.DataFrame({"comparison": ["a"], "level": ["exact"]}))
    with pytest.raises(ValueError, match="at least one"):
        waterfall_svg(pd.DataFrame(columns=["comparison", "level", "contribution"]))
    with pytest.raises(ValueError, match="finite"):
        waterfall_svg(pd.DataFrame({"comparison": ["a"], "level": ["x"],
                                    "contribution": [np.inf]}))


def test_waterfall_of_a_real_run(tmp_path):
    import linkage as lk
    from linkage.explain import contributions_table

    run = lk.dedupe(ROOT / "sample_data" / "customers.csv", ROOT / "rules" / "customers.yaml")
    pairs = run.pairs.head(3)
    for (_, pair), table in zip(pairs.iterrows(),
                                contributions_table(pairs, run.rules, run.scorer), strict=True):
        root = parse(waterfall_svg(table, threshold=run.scorer.threshold))
        assert len(rects(root, "step")) == len(table)
        assert float(root.get("data-total")) == pytest.approx(pair["match_weight"], abs=1e-4)


@pytest.fixture
def parameters() -> pd.DataFrame:
    rows = [("given_name", "else", 0.2, 0.9), ("given_name", ">=0.8", 0.1, 0.05),
            ("given_name", "exact", 0.7, 0.05), ("a<b&c", "else", 0.1, 0.8),
            ("a<b&c", "exact", 0.9, 0.2)]
    frame = pd.DataFrame(rows, columns=["comparison", "level", "m", "u"])
    frame["match_weight"] = np.log2(frame.m) - np.log2(frame.u)
    return frame


def test_mu_chart_has_a_bar_per_level(parameters):
    svg = mu_chart_svg(parameters)
    root = parse(svg)
    bars = rects(root, "level")
    assert len(bars) == len(parameters)
    assert [(b.get("data-comparison"), b.get("data-level")) for b in bars] == list(
        zip(parameters.comparison, parameters.level, strict=True))
    for bar, (_, row) in zip(bars, parameters.iterrows(), strict=True):
        assert float(bar.get("data-weight")) == pytest.approx(math.log2(row.m / row.u))
        assert float(bar.get("data-m")) == row.m and float(bar.get("data-u")) == row.u
        assert bar.get("fill") == (POSITIVE if row.match_weight > 0 else NEGATIVE)
    # bar widths are proportional to |log2(m/u)|
    ratios = [float(b.get("width")) / abs(float(b.get("data-weight"))) for b in bars]
    assert max(ratios) - min(ratios) < 0.05
    labels = texts(root)
    assert "a<b&c" in labels and "given_name" in labels
    assert any("m=0.7" in t and "u=0.05" in t for t in labels)
    assert "a&lt;b&amp;c" in svg
    assert svg == mu_chart_svg(parameters.copy())


def test_mu_chart_computes_the_weight_and_survives_infinities(parameters):
    without = parameters.drop(columns="match_weight")
    assert [b.get("data-weight") for b in rects(parse(mu_chart_svg(without)), "level")] == [
        b.get("data-weight") for b in rects(parse(mu_chart_svg(parameters)), "level")]
    zero_u = without.assign(u=[0.9, 0.05, 0.0, 0.8, 0.2])
    bars = rects(parse(mu_chart_svg(zero_u)), "level")
    assert bars[2].get("data-weight") == "inf"


def test_mu_chart_of_a_fitted_model():
    import linkage as lk

    rules = lk.Rules.from_yaml(ROOT / "rules" / "customers.yaml").to_dict()
    rules["scoring"] = {"type": "fellegi_sunter", "threshold": 0.0}
    run = lk.dedupe(ROOT / "sample_data" / "customers.csv", lk.Rules.from_dict(rules))
    table = run.scorer.parameter_table()
    assert len(rects(parse(mu_chart_svg(table)), "level")) == len(table)


def test_histogram_counts_sum_to_the_weights():
    weights = np.random.default_rng(0).normal(5, 10, 1000)
    root = parse(weight_histogram_svg(weights, threshold=6.0, bins=25))
    bins = rects(root, "bin")
    assert len(bins) == 25
    assert sum(int(b.get("data-count")) for b in bins) == 1000
    assert int(root.get("data-n")) == 1000
    assert [e for e in root.iter(f"{NS}line") if e.get("class") == "threshold"]
    # bins at or above the threshold are green, the others grey
    for b in bins:
        middle = (float(b.get("data-low")) + float(b.get("data-high"))) / 2
        assert b.get("fill") == (POSITIVE if middle >= 6.0 else NEUTRAL)
    # taller bars for bigger counts
    heights = {int(b.get("data-count")): float(b.get("height")) for b in bins}
    counts = sorted(heights)
    assert [heights[c] for c in counts] == sorted(heights[c] for c in counts)


def test_histogram_edge_cases():
    root = parse(weight_histogram_svg(np.array([1.0, np.nan, np.inf, 1.0]), threshold=None))
    assert sum(int(b.get("data-count")) for b in rects(root, "bin")) == 2
    assert not [e for e in root.iter(f"{NS}line") if e.get("class") == "threshold"]
    empty = parse(weight_histogram_svg(np.array([]), threshold=0.0, bins=5))
    assert sum(int(b.get("data-count")) for b in rects(empty, "bin")) == 0
    with pytest.raises(ValueError, match="bins"):
        weight_histogram_svg(np.array([1.0]), threshold=None, bins=0)
    weights = np.linspace(-20, 40, 300)
    assert weight_histogram_svg(weights, threshold=3.0) == weight_histogram_svg(
        weights.copy(), threshold=3.0)


def test_svg_save(tmp_path, table):
    path = waterfall_svg(table).save(tmp_path / "pair.svg")
    assert parse(path.read_text(encoding="utf-8")).tag == f"{NS}svg"
