"""`linkage check`: the ETL gate exits 0 (pass), 1 (too many duplicates) or 2 (bad input)."""

from __future__ import annotations

import json

import pytest

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


def test_json_errors_under_json(tmp_path):
    """With `--json` a pipeline parses one format whatever happens: an error is one JSON
    object on standard output naming the exit code and its kind (and still said on standard
    error); without `--json` standard output stays empty."""
    missing, usage, evaluate, plain = run_clis(
        ("check", tmp_path / "nope.csv", "--rules", RULES, "--max-duplicate-rate", "0.01",
         "--json"),
        ("check", SAMPLE, "--rules", RULES, "--json"),  # --max-duplicate-rate left out
        ("evaluate", tmp_path / "no_run", "--truth", tmp_path / "t.csv", "--truth-id", "id",
         "--truth-cluster", "e", "--json"),
        ("check", tmp_path / "nope.csv", "--rules", RULES, "--max-duplicate-rate", "0.01"))
    for done in (missing, usage, evaluate):
        assert done.returncode == 2, done.stderr
        error = json.loads(done.stdout)
        assert error["exit_code"] == 2 and error["kind"] == "bad_input"
        assert error["error"] and error["error"].split()[0] in done.stderr
    assert "nope.csv" in json.loads(missing.stdout)["error"]
    assert "--max-duplicate-rate" in json.loads(usage.stdout)["error"]
    assert plain.returncode == 2 and plain.stdout == "" and "nope.csv" in plain.stderr


def test_the_gate_from_python_says_what_the_command_does():
    import linkage as lk
    from linkage.errors import RulesError

    gate = lk.check(SAMPLE, RULES, max_duplicate_rate=0.01)
    assert gate.code == 1 and not gate.passed and gate.format().startswith("FAIL")
    done = run_clis(("check", SAMPLE, "--rules", RULES, "--max-duplicate-rate", "0.01",
                     "--json"))[0]
    assert done.returncode == gate.code
    assert json.loads(done.stdout) == {**gate.report, "input": str(SAMPLE)}
    assert lk.check(SAMPLE, RULES, max_duplicate_rate=0.5).code == 0
    with pytest.raises(RulesError, match=r"1% is 0\.01"):
        lk.check(SAMPLE, RULES, max_duplicate_rate=5)
