"""Before/after metrics in summary.json and report.html (issue 13, item 17): per source and
for the whole table, the mean length and token count of the text columns and each category's
share, before and after the duplicates go. Checked against numbers worked out by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.conftest import run_cli

RULES = """\
id_column: id
blocking:
  - keys: [[text]]
comparisons:
  - {type: levenshtein, column: text, thresholds: [0.9]}
scoring:
  type: rule_sum
  threshold: 1
  weights:
    text: {exact: 2, ">=0.9": 1, else: -1}
source_column: source
report_columns: [topic]
"""

# Record 2 is record 1 again: it is the one removed (keep: first). Record 5 has no text.
TABLE = pd.DataFrame({
    "id": [1, 2, 3, 4, 5, 6],
    "text": ["a b c", "a b c", "hello", "hello world", None, "xy z"],
    "source": ["crm", "crm", "web", "web", "web", "crm"],
    "topic": ["news", "news", "sport", "news", "sport", "sport"],
    "note": ["one two", "one two", "x", "x", "x", "three four five"],
})


def _run(tmp_path, rules: str = RULES):
    TABLE.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "rules.yaml").write_text(rules)
    done = run_cli("dedupe", tmp_path / "t.csv", "--rules", tmp_path / "rules.yaml",
                   "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    return json.loads((tmp_path / "out" / "summary.json").read_text()), done


def _both(before: float, after: float) -> dict:
    return {"before": pytest.approx(before, abs=1e-6), "after": pytest.approx(after, abs=1e-6)}


def test_text_and_category_metrics_per_source_and_for_the_table(tmp_path):
    summary, _ = _run(tmp_path)
    metrics = summary["before_after"]
    assert metrics["text_columns"] == ["text"]  # the text column the rules compare
    table = metrics["table"]
    assert table["records"] == {"before": 6, "after": 5}
    # Lengths 5, 5, 5, 11, 4 (record 5 has no text and is not counted) -> 30 / 5; after
    # record 2 goes: 25 / 4. Tokens 3, 3, 1, 2, 2 -> 11 / 5; after: 8 / 4.
    assert table["mean_chars"] == {"text": _both(6.0, 6.25)}
    # the libraries that made the figures, each by its installed version (jellyfish 1.x has
    # no __version__: it read "unknown")
    from importlib.metadata import version

    for name in ("numpy", "pandas", "pyarrow", "rapidfuzz", "jellyfish", "scipy"):
        assert summary["versions"][name] == version(name), name
    assert table["mean_tokens"] == {"text": _both(2.2, 2.0)}
    assert table["shares"] == {"topic": {"news": _both(3 / 6, 2 / 5),
                                         "sport": _both(3 / 6, 3 / 5)}}
    crm, web = metrics["by_source"]["crm"], metrics["by_source"]["web"]
    assert set(metrics["by_source"]) == {"crm", "web"}
    assert crm["records"] == {"before": 3, "after": 2}
    assert crm["mean_chars"] == {"text": _both(14 / 3, 9 / 2)}
    assert crm["mean_tokens"] == {"text": _both(8 / 3, 5 / 2)}
    assert crm["shares"] == {"topic": {"news": _both(2 / 3, 1 / 2),
                                       "sport": _both(1 / 3, 1 / 2)}}
    assert web["records"] == {"before": 3, "after": 3}
    assert web["mean_chars"] == {"text": _both(8.0, 8.0)}
    assert web["mean_tokens"] == {"text": _both(1.5, 1.5)}
    assert web["shares"] == {"topic": {"news": _both(1 / 3, 1 / 3),
                                       "sport": _both(2 / 3, 2 / 3)}}
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Before and after" in page and "mean tokens" in page


def test_text_columns_key_chooses_the_columns_measured(tmp_path):
    summary, _ = _run(tmp_path, RULES + "text_columns: [note]\n")
    metrics = summary["before_after"]
    assert metrics["text_columns"] == ["note"]
    # 7, 7, 1, 1, 1, 15 characters -> 32 / 6; without record 2: 25 / 5.
    assert metrics["table"]["mean_chars"] == {"note": _both(32 / 6, 5.0)}
    assert metrics["table"]["mean_tokens"] == {"note": _both(10 / 6, 8 / 5)}


def test_metrics_repeat_byte_for_byte(tmp_path):
    runs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        runs.append(_run(tmp_path / name)[0]["before_after"])
    assert json.dumps(runs[0]) == json.dumps(runs[1])


def test_a_text_column_not_in_the_table_is_a_clear_error(tmp_path):
    TABLE.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "rules.yaml").write_text(RULES + "text_columns: [body]\n")
    done = run_cli("dedupe", tmp_path / "t.csv", "--rules", tmp_path / "rules.yaml",
                   "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "t.csv" in done.stderr and "`body`" in done.stderr
    assert "text_columns[0]" in done.stderr and "Fix" in done.stderr
    assert not (tmp_path / "out").exists()
