"""`linkage evaluate`: a FEBRL run scored against its truth through the CLI gives the figures
of `linkage.measure.evaluate` called directly; bad truth tables exit 2 with the fix."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from linkage.blocking import blocker_names
from linkage.measure.evaluate import blocking_report, score_clusters, scores_by_threshold
from linkage.settings import Rules
from tests.conftest import ROOT, run_cli, run_clis

FEBRL_RULES = ROOT / "rules" / "febrl.yaml"


def _febrl(datasets):
    """FEBRL dataset1 with `rec_id` (which carries the truth) swapped for opaque ids: the input
    for the run, and apart from it a truth table `id, entity`."""
    frame = pd.read_csv(datasets / "febrl" / "dataset1.csv", dtype=str, skipinitialspace=True,
                        keep_default_na=False)
    entity = frame["rec_id"].str.extract(r"rec-(\d+)-")[0]
    opaque = ["r" + hashlib.sha256(f"ev:{v}".encode()).hexdigest()[:12] for v in frame["rec_id"]]
    truth = pd.DataFrame({"record": opaque, "person": "p" + entity})
    frame = frame.assign(rec_id=opaque).sample(frac=1.0, random_state=5).reset_index(drop=True)
    return frame, truth


@pytest.fixture(scope="module")
def febrl_run(tmp_path_factory, datasets):
    folder = tmp_path_factory.mktemp("evaluate")
    frame, truth = _febrl(datasets)
    frame.to_csv(folder / "in.csv", index=False)
    truth.to_csv(folder / "truth.csv", index=False)
    done = run_cli("dedupe", folder / "in.csv", "--rules", FEBRL_RULES, "--out", folder / "run")
    assert done.returncode == 0, done.stderr
    return folder


def _direct(run_dir, truth_csv, thresholds):
    """The same figures from `linkage.measure.evaluate`, read straight from the run's files."""
    clusters = pd.read_parquet(run_dir / "clusters.parquet")
    pairs = pd.read_parquet(run_dir / "pairs.parquet")
    truth_frame = pd.read_csv(truth_csv, dtype=str)
    truth = pd.Series(truth_frame["person"].to_numpy(), index=truth_frame["record"].to_numpy())
    predicted = pd.Series(clusters["cluster_id"].to_numpy(), index=clusters["rec_id"].to_numpy())
    rules = Rules.from_yaml(run_dir / "rules.yaml")
    return (score_clusters(predicted, truth),
            blocking_report(pairs, truth, blocker_names(rules.blocking), len(clusters)),
            scores_by_threshold(pairs, truth, thresholds))


def test_json_equals_the_module(febrl_run):
    done = run_cli("evaluate", febrl_run / "run", "--truth", febrl_run / "truth.csv",
                   "--truth-id", "record", "--truth-cluster", "person",
                   "--thresholds", "0,1,3,5", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    scores, blocking, by_threshold = _direct(febrl_run / "run", febrl_run / "truth.csv",
                                             [0.0, 1.0, 3.0, 5.0])
    assert report["scores"] == pytest.approx(scores.as_dict(), abs=1e-6)
    assert report["scores"]["f1"] > 0.9  # FEBRL1 with the shipped rules: a real run, not empty
    assert report["records"] == report["records_in_truth"] == 1000
    assert [b["blocker"] for b in report["blocking"]] == list(blocking["blocker"])
    for row, expected in zip(report["blocking"], blocking.to_dict(orient="records"), strict=True):
        assert row == pytest.approx(expected, abs=1e-6)
    assert [t["threshold"] for t in report["by_threshold"]] == [0.0, 1.0, 3.0, 5.0]
    for row, expected in zip(report["by_threshold"], by_threshold.to_dict(orient="records"),
                             strict=True):
        assert row == pytest.approx(expected, abs=1e-6)
    assert report["threshold"] == 1.0  # rules/febrl.yaml


def test_table_prints_the_same_figures(febrl_run):
    done = run_cli("evaluate", febrl_run / "run", "--truth", febrl_run / "truth.csv",
                   "--truth-id", "record", "--truth-cluster", "person")
    assert done.returncode == 0, done.stderr
    scores, blocking, by_threshold = _direct(febrl_run / "run", febrl_run / "truth.csv",
                                             [-1.0, 0.0, 1.0, 2.0, 3.0])
    out = done.stdout
    assert f"precision {scores.precision:.4f}  recall {scores.recall:.4f}  F1 {scores.f1:.4f}" \
        in out
    assert f"F1 {scores.bcubed_f1:.4f}" in out and f"{scores.exact_clusters:.4f}" in out
    union = blocking.set_index("blocker").loc["(union)"]
    assert f"recall {union['recall']:.4f}  reduction ratio {union['reduction_ratio']:.6f}" in out
    # Without --thresholds: the run's threshold (1) and two steps either side, marked.
    marked = [line for line in out.splitlines() if "<- the run's threshold" in line]
    row = by_threshold.set_index("threshold").loc[1.0]
    assert len(marked) == 1 and f"{row['f1']:.4f}" in marked[0]


def test_link_run(tmp_path, datasets):
    """Left: one record per person; right: the other records. Every true pair crosses."""
    frame, truth = _febrl(datasets)
    entity = truth.set_index("record")["person"]
    first = ~entity.reindex(frame["rec_id"]).duplicated().to_numpy()  # one record per person
    frame[first].to_csv(tmp_path / "left.csv", index=False)
    frame[~first].to_csv(tmp_path / "right.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    done = run_cli("link", tmp_path / "left.csv", tmp_path / "right.csv", "--rules", FEBRL_RULES,
                   "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    done = run_cli("evaluate", tmp_path / "run", "--truth", tmp_path / "truth.csv",
                   "--truth-id", "record", "--truth-cluster", "person", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["mode"] == "link" and report["true_pairs_within_one_side"] == 0
    scores, _, _ = _direct(tmp_path / "run", tmp_path / "truth.csv", [1.0])
    assert report["scores"] == pytest.approx(scores.as_dict(), abs=1e-6)
    left, right = int(first.sum()), int((~first).sum())
    union = report["blocking"][-1]
    assert union["reduction_ratio"] == pytest.approx(1 - union["pairs"] / (left * right),
                                                     abs=1e-6)


def test_bad_truth_exits_2(febrl_run, tmp_path):
    run = febrl_run / "run"
    truth = pd.read_csv(febrl_run / "truth.csv", dtype=str)

    truth.assign(record=truth["record"] + "x").head(5).to_csv(tmp_path / "other.csv", index=False)
    pd.concat([truth, truth.head(2)]).to_csv(tmp_path / "twice.csv", index=False)
    # Five independent runs that only read: run side by side (see run_clis).
    wrong_column, foreign, twice, bad_thresholds, not_a_run = run_clis(
        ("evaluate", run, "--truth", febrl_run / "truth.csv",
         "--truth-id", "record", "--truth-cluster", "entity"),
        ("evaluate", run, "--truth", tmp_path / "other.csv",
         "--truth-id", "record", "--truth-cluster", "person"),
        ("evaluate", run, "--truth", tmp_path / "twice.csv",
         "--truth-id", "record", "--truth-cluster", "person"),
        ("evaluate", run, "--truth", febrl_run / "truth.csv", "--truth-id",
         "record", "--truth-cluster", "person", "--thresholds", "1,high"),
        ("evaluate", tmp_path, "--truth", febrl_run / "truth.csv",
         "--truth-id", "record", "--truth-cluster", "person"),
    )
    assert wrong_column.returncode == 2
    assert "`entity`" in wrong_column.stderr and "--truth-cluster" in wrong_column.stderr
    assert foreign.returncode == 2 and "5 id(s) of the truth are not records" in foreign.stderr
    assert twice.returncode == 2 and "repeats 2 id(s)" in twice.stderr
    assert bad_thresholds.returncode == 2 and "--thresholds" in bad_thresholds.stderr
    assert not_a_run.returncode == 2 and "not a run folder" in not_a_run.stderr
