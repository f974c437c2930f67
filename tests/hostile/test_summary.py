"""Hostile cases for summary.json: what a run removed must never hide inside a table-wide
figure (issue 13, item 13)."""

from __future__ import annotations

import json

import pandas as pd

from tests.hostile._runs import dedupe

RULES = """\
id_column: id
blocking:
  - keys: [[name]]
comparisons:
  - {type: exact, column: name}
scoring:
  type: rule_sum
  threshold: 1
  weights:
    name: {exact: 2, else: -1}
source_column: source
report_columns: [category]
"""


def _table() -> pd.DataFrame:
    """Source `a` loses 40 of its 100 records (40%), `b` none of 400, `tiny` 1 of 2 (50%,
    but two records cannot tell): the table loses 41 of 502 (8.2%). Category `x` is all of
    `a`'s copies."""
    rows = []
    for i in range(60):  # 60 originals in `a`, 40 of them loaded twice
        rows.append({"name": f"a{i}", "source": "a", "category": "x"})
        if i < 40:
            rows.append({"name": f"a{i}", "source": "a", "category": "x"})
    rows += [{"name": f"b{i}", "source": "b", "category": "y"} for i in range(400)]
    rows += [{"name": "t", "source": "tiny", "category": "y"}] * 2
    frame = pd.DataFrame(rows)
    frame.insert(0, "id", [f"R{i:04d}" for i in range(len(frame))])
    return frame


def test_a_source_over_the_removal_limit_warns_though_the_table_is_under(workdir):
    done = dedupe(workdir, _table(), RULES)
    summary = json.loads((workdir / "out" / "summary.json").read_text())
    assert summary["removal_rate"] < 0.2  # the table-wide figure hides it
    assert summary["removals_by"]["source"]["a"]["removal_rate"] == 0.4
    warnings = summary["warnings"]
    by_source = [w for w in warnings if "`source`" in w]
    assert len(by_source) == 1, warnings
    # The column, the value, its rate, the limit and what to do.
    assert "'a'" in by_source[0] and "40.0%" in by_source[0] and "(20%)" in by_source[0]
    assert "`max_removal_rate`" in by_source[0]
    by_category = [w for w in warnings if "`category`" in w]
    assert len(by_category) == 1 and "'x'" in by_category[0], warnings
    # 1 of 2 records is 50%, but too few to tell from chance: no warning for `tiny`.
    assert not any("'tiny'" in w for w in warnings)
    for w in warnings:  # printed as well
        assert f"warning: {w}" in done.stdout


def test_no_group_warning_when_no_source_loses_more_than_the_limit(workdir):
    frame = _table()
    frame = frame[~frame.duplicated(["name", "source"], keep="first") | (frame["source"] != "a")
                  | (frame["name"] < "a1")]  # `a` keeps only a handful of copies
    dedupe(workdir, frame, RULES)
    summary = json.loads((workdir / "out" / "summary.json").read_text())
    assert summary["removals_by"]["source"]["a"]["removal_rate"] < 0.2
    assert summary["warnings"] == []
