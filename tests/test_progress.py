"""The terminal's progress (issue 16, item 6): every stage of a run shows on one stage line
(tqdm), suggesting rules and writing included, so that no part of a long run is silent; with
--no-progress (and by default in a log or a pipe) nothing is drawn."""

from __future__ import annotations

import re

from tests.conftest import ROOT, run_clis

SAMPLE = ROOT / "sample_data" / "customers.csv"
STAGES = ["suggesting rules", "prepare", "normalize", "block", "compare", "score", "guard",
          "cluster", "keep", "summary", "report", "writing the outputs"]
OPTIONAL = {"exact"}  # the exact-hash stage, where the rules have one


def _stages_shown(stderr: str) -> list[str]:
    names = re.findall(r"linkage: ([a-z ]+?)(?: \(| *\r| *$)", stderr.replace("\r", "\r\n"),
                       flags=re.M)
    return list(dict.fromkeys(n.strip() for n in names))  # in order, once each


def test_every_stage_is_shown_in_order(tmp_path):
    shown, quiet, default = run_clis(
        ("dedupe", SAMPLE, "--out", tmp_path / "shown", "--progress"),
        ("dedupe", SAMPLE, "--out", tmp_path / "quiet", "--no-progress"),
        ("dedupe", SAMPLE, "--out", tmp_path / "default"))  # stderr is a pipe here
    for done in (shown, quiet, default):
        assert done.returncode == 0, done.stderr
    stages = _stages_shown(shown.stderr)
    named = [next((x for x in STAGES if s.startswith(x)), s) for s in stages]
    assert [s for s in named if s not in OPTIONAL] == STAGES
    for done in (quiet, default):
        assert "linkage: " not in done.stderr and "comparing" not in done.stderr
    # The same outputs either way: progress is shown, never part of the result.
    assert ((tmp_path / "shown" / "clusters.parquet").read_bytes()
            == (tmp_path / "quiet" / "clusters.parquet").read_bytes())
