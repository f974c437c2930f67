"""A dedupe through the real CLI on a table and rules written for one case."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests.hostile.conftest import assert_unchanged_outside, run_cli, snapshot


def dedupe(workdir: Path, frame: pd.DataFrame, rules: str):
    """Write `frame` and `rules` into `workdir`, dedupe into `workdir/out`, check it succeeded
    and changed nothing outside `out`. Returns the finished process (its stdout)."""
    frame.to_csv(workdir / "t.csv", index=False)
    (workdir / "rules.yaml").write_text(rules)
    before = snapshot(workdir)
    done = run_cli("dedupe", workdir / "t.csv", "--rules", workdir / "rules.yaml",
                   "--out", workdir / "out")
    assert done.returncode == 0, done.stderr
    assert_unchanged_outside(before, snapshot(workdir), "out")
    return done
