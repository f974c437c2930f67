"""`linkage check`: the ETL gate exits 0 (pass), 1 (too many duplicates) or 2 (bad input)."""

from __future__ import annotations

import json

from tests.conftest import ROOT, run_clis

SAMPLE = ROOT / "sample_data" / "customers.csv"
RULES = ROOT / "rules" / "customers.yaml"


def test_pass_and_fail_by_the_rate():
    # The sample holds ~30% duplicates.
    failed, passed = run_clis(
        ("check", SAMPLE, "--rules", RULES, "--max-duplicate-rate", "0.01", "--json"),
        ("check", SAMPLE, "--rules", RULES, "--max-duplicate-rate", "0.5"))
    assert failed.returncode == 1, failed.stderr
    report = json.loads(failed.stdout)
    assert report["passed"] is False and 0.25 < report["duplicate_rate"] < 0.35
    assert report["duplicates"] == round(report["duplicate_rate"] * report["records"])
    assert passed.returncode == 0, passed.stderr
    assert passed.stdout.startswith("PASS")


def test_bad_input_exits_2(tmp_path):
    missing, bad_rate = run_clis(
        ("check", tmp_path / "nope.csv", "--rules", RULES, "--max-duplicate-rate", "0.01"),
        ("check", SAMPLE, "--rules", RULES, "--max-duplicate-rate", "5"))
    assert missing.returncode == 2 and "nope.csv" in missing.stderr
    assert bad_rate.returncode == 2 and "0.01" in bad_rate.stderr
