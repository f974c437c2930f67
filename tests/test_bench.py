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
