"""Removal reports: per source and category, with before/after shares, and the 20% warning."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from linkage.run.summary import removals_by
from tests.conftest import ROOT, run_cli


def test_removals_by_matches_a_hand_count():
    values = pd.Series(["crm", "crm", "web", "web", "web", None])
    removed = np.array([True, False, True, True, False, False])
    got = removals_by(values, removed)
    assert got["crm"] == {"records": 2, "removed": 1, "removal_rate": 0.5,
                          "share_before": pytest.approx(2 / 6, abs=1e-6),
                          "share_after": pytest.approx(1 / 3, abs=1e-6)}
    assert got["web"]["removed"] == 2 and got["web"]["share_after"] == pytest.approx(1 / 3,
                                                                                      abs=1e-6)
    assert got["(missing)"]["records"] == 1
    assert sum(v["share_after"] for v in got.values()) == pytest.approx(1.0, abs=1e-5)


def test_high_removal_warns_on_terminal_and_in_summary(tmp_path, datasets):
    # FEBRL3 is 60% duplicates by construction: far above the default 20%.
    done = run_cli("dedupe", datasets / "febrl" / "dataset3.csv", "--rules",
                   ROOT / "rules" / "febrl.yaml", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    # said once, as the removal_rate diagnostic with what to do
    assert "warning: [removal_rate]" in done.stdout and "rows loaded twice" in done.stdout
    assert done.stdout.count("of the records were removed as duplicates") == 1
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    removal = [w for w in summary["warnings"] if "max_removal_rate" in w]
    assert summary["removal_rate"] > 0.2 and len(removal) == 1


def test_sample_reports_per_source_without_warning(tmp_path):
    done = run_cli("dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                   ROOT / "rules" / "customers.yaml", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    by_source = summary["removals_by"]["source"]
    assert set(by_source) == {"crm", "web", "shop", "import"}
    assert sum(v["removed"] for v in by_source.values()) == summary["actions"]["duplicate"]
    assert summary["warnings"] == []
