"""`linkage check`: the ETL gate exits 0 (pass), 1 (too many duplicates) or 2 (bad input)."""

from __future__ import annotations

import json

from tests.conftest import ROOT, run_cli

SAMPLE = ROOT / "sample_data" / "customers.csv"
RULES = ROOT / "rules" / "customers.yaml"


def test_pass_and_fail_by_the_rate():
    # The sample holds ~30% duplicates.
    failed = run_cli("check", SAMPLE, "--rules", RULES, "--max-duplicate-rate", "0.01", "--json")
    assert failed.returncode == 1, failed.stderr
    report = json.loads(failed.stdout)
    assert report["passed"] is False and 0.25 < report["duplicate_rate"] < 0.35
    assert report["duplicates"] == round(report["duplicate_rate"] * report["records"])
    passed = run_cli("check", SAMPLE, "--rules", RULES, "--max-duplicate-rate", "0.5")
    assert passed.returncode == 0, passed.stderr
    assert passed.stdout.startswith("PASS")


def test_bad_input_exits_2(tmp_path):
    missing = run_cli("check", tmp_path / "nope.csv", "--rules", RULES,
                      "--max-duplicate-rate", "0.01")
    assert missing.returncode == 2 and "nope.csv" in missing.stderr
    bad_rate = run_cli("check", SAMPLE, "--rules", RULES, "--max-duplicate-rate", "5")
    assert bad_rate.returncode == 2 and "0.01" in bad_rate.stderr
