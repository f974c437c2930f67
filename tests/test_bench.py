"""The benchmark script itself works (its figures come from `make bench`, not from here)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_bench_script_runs_and_writes_results(tmp_path):
    results = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_bench.py"), "--rows", "3000",
         "--results", str(results)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    text = results.read_text()
    assert "python bench/run_bench.py --rows 3000" in text
    row = next(line for line in text.splitlines() if line.startswith("| 3,000"))
    f1 = float(row.strip("|").split("|")[-1])
    assert f1 > 0.9


def _compare_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_compare", ROOT / "bench" / "compare.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_compare_script_runs_linkage_on_persons_and_febrl(tmp_path):
    results = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "compare.py"), "--rows", "3000", "--tools",
         "linkage", "--results", str(results)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    text = results.read_text()
    assert "python bench/compare.py --rows 3000 --tools linkage" in text
    assert "GiB memory" in text and "Seconds per stage:" in text
    rows = {line.split("|")[1].strip(): line for line in text.splitlines()
            if line.startswith(("| febrl3 |", "| persons |"))}
    for name in ("febrl3", "persons"):
        f1 = float(rows[name].strip("|").split("|")[-1])
        assert f1 > 0.95, rows[name]


def test_recordlinkage_gets_the_linkage_rules_keys_and_comparisons():
    spec = _compare_module().recordlinkage_spec(ROOT / "bench" / "febrl_fs.yaml")
    assert spec["id"] == "rec_id"
    assert ["soundex(surname)", "first(given_name, 1)"] in spec["blocks"]
    assert ["soc_sec_id"] in spec["blocks"]
    # linkage's window 4 (three neighbours on); recordlinkage's odd window reaches both ways
    assert spec["sorted"] == [{"key": ["surname", "given_name"], "window": 7}]
    kinds = {c["column"]: c["type"] for c in spec["compare"]}
    assert kinds["given_name"] == "string" and kinds["date_of_birth"] == "exact"
    assert "given_name" in spec["clean"] and "date_of_birth" not in spec["clean"]


def test_simulation_extrapolates_pairs_measured_at_one_million():
    # A 100,000-record sample predicts the candidate pairs that full 1M runs produced
    # (measured: 429,291 with persons_scale.yaml, 3,233,996 with persons_fs.yaml).
    for rules, measured in (("persons_scale.yaml", 429_291), ("persons_fs.yaml", 3_233_996)):
        done = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "simulate_scale.py"), "--rules",
             str(ROOT / "bench" / rules), "--sample", "100000", "--sizes", "1e6", "1e7"],
            capture_output=True, text=True, timeout=300, cwd=ROOT,
        )
        assert done.returncode == 0, done.stderr
        row = next(line for line in done.stdout.splitlines() if "candidate pairs (union)" in line)
        cells = [c.strip() for c in row.strip("|").split("|")]
        at_1m = float(cells[1].rstrip("kMG")) * {"k": 1e3, "M": 1e6, "G": 1e9}[cells[1][-1]]
        assert abs(at_1m - measured) / measured < 0.1, row
        assert "peak RSS (GiB)" in done.stdout and "blocking joins" in done.stdout
