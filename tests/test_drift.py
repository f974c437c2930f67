"""`linkage drift`: labels earned on one run, checked against a rerun with other rules."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.conftest import ROOT
from tests.hostile.conftest import assert_unchanged_outside, run_cli, run_clis, snapshot

BANDS = "-4,0,4,6,8"


def _rerun_rules(text: str) -> str:
    """The sample rules, changed as a team might between quarters: a higher threshold, one
    blocker fewer, and weights that trust a shared phone more than they should."""
    changes = {
        "threshold: 4.0": "threshold: 6.0",
        '      - [postcode, "first(name, 1)"]\n': "",
        '      - ["last(phone, 4)", "first(name, 1)"]\n': "",
        "  - name: place\n    keys:\n": "",
        '">=0.85": 1.0, else: -3.0}': '">=0.85": 1.0, else: 0.0}',
        "within_31_days: 0.5, else: -4.0}": "within_31_days: 0.5, else: 0.0}",
        "phone: {exact: 2.5, else: -0.5}": "phone: {exact: 4.5, else: -0.5}",
    }
    for old, new in changes.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("drift")
    rules = (ROOT / "rules" / "customers.yaml").read_text(encoding="utf-8")
    (folder / "old.yaml").write_text(rules, encoding="utf-8")
    (folder / "new.yaml").write_text(_rerun_rules(rules), encoding="utf-8")
    for done in run_clis(*[("dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                            folder / f"{name}.yaml", "--out", folder / name)
                           for name in ("old", "new")]):
        assert done.returncode == 0, done.stderr
    done = run_cli("sample", folder / "old", "--on", "weight", "--bands", BANDS,
                   "--per-band", "40", "--out", folder / "todo.csv")
    assert done.returncode == 0, done.stderr
    # A reviewer labels the pairs of the old run (here from the generator's truth).
    truth = pd.read_csv(ROOT / "sample_data" / "customers_truth.csv", dtype=str)
    person = dict(zip(truth["customer_id"], truth["person_id"], strict=True))
    labels = pd.read_csv(folder / "todo.csv", dtype=str, keep_default_na=False)
    labels["label"] = [str(int(person[a] == person[b]))
                       for a, b in zip(labels["id_l"], labels["id_r"], strict=True)]
    labels.loc[0, "label"] = "unsure"  # not counted anywhere
    labels.to_csv(folder / "labels.csv", index=False)
    return folder


def _drift(runs, *args):
    before = snapshot(runs)
    done = run_cli("drift", *args)
    assert_unchanged_outside(before, snapshot(runs), out="(drift writes nothing)")
    return done


def test_drift_reports_precision_per_band_then_and_now_flips_and_lost_pairs(runs):
    done = _drift(runs, runs / "new", runs / "labels.csv", "--baseline", runs / "old", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    labels = pd.read_csv(runs / "labels.csv", dtype=str, keep_default_na=False)
    labels = labels[labels["label"].isin(["0", "1"])]
    assert report["labelled_pairs"] == len(labels) == 199 and report["on"] == "weight"
    # Precision then, band by band, is the hand count of the labels as sampled.
    then = labels.groupby("band", sort=False)["label"].apply(lambda s: (s == "1").mean())
    bands = {row["band"]: row for row in report["bands"]}
    for band, precision in then.items():
        assert bands[band]["precision_then"] == pytest.approx(precision)
        assert bands[band]["ci_low_then"] <= precision <= bands[band]["ci_high_then"]
    # Now: each labelled pair's score in the new run's pairs, hand-banded.
    new = pd.read_parquet(runs / "new" / "pairs.parquet").set_index(["id_l", "id_r"])
    old = pd.read_parquet(runs / "old" / "pairs.parquet").set_index(["id_l", "id_r"])
    keys = list(zip(labels["id_l"], labels["id_r"], strict=True))
    present = [k for k in keys if k in new.index]
    lost = {k for k in keys if k not in new.index}
    assert {(p["id_l"], p["id_r"]) for p in report["no_longer_scored"]} == lost and lost
    top = [k for k in present if new.loc[k, "match_weight"] >= 8]
    assert bands["[8, inf)"]["labelled_now"] == len(top)
    each = {(p["id_l"], p["id_r"]): p for p in report["pairs"]}
    assert len(each) == len(labels)
    for key in present[:20]:
        assert each[key]["score_now"] == pytest.approx(new.loc[key, "match_weight"])
        assert each[key]["score_then"] == pytest.approx(old.loc[key, "match_weight"])
        assert each[key]["band_then"] == labels.set_index(["id_l", "id_r"]).loc[key, "band"]
    flips = {k for k in present if bool(new.loc[k, "is_match"]) != bool(old.loc[k, "is_match"])}
    assert {(p["id_l"], p["id_r"]) for p in report["flipped"]} == flips and flips
    # These rules trust a shared phone: precision in the bands above 4 fell, and it says so.
    assert bands["[4, 6)"]["change"] < -0.1
    assert report["verdict"].startswith("DRIFT: precision in band")


def test_drift_as_text_names_the_worst_band_and_the_flipped_pairs(runs):
    done = _drift(runs, runs / "new", runs / "labels.csv", "--baseline", runs / "old")
    assert done.returncode == 0, done.stderr
    assert "then -> now (95% Wilson interval)" in done.stdout
    assert "pairs flipped their decision" in done.stdout and "no longer scored" in done.stdout
    assert "pairs still scored changed band" in done.stdout
    assert "DRIFT: precision in band" in done.stdout


def test_max_drop_makes_drift_a_gate(runs):
    fell = _drift(runs, runs / "new", runs / "labels.csv", "--max-drop", "0.05")
    assert fell.returncode == 1, fell.stderr
    assert "FAIL (--max-drop 0.05): precision in band" in fell.stdout
    # Without --baseline the labels' own scores and decisions (as sampled) are "then".
    assert "pass --baseline OLD_RUN" not in fell.stdout
    same = _drift(runs, runs / "old", runs / "labels.csv", "--baseline", runs / "old",
                  "--max-drop", "0", "--json")
    assert same.returncode == 0, same.stderr
    report = json.loads(same.stdout)
    assert report["passed"] and not report["flipped"] and not report["no_longer_scored"]
    assert report["verdict"].startswith("PASS")


def test_the_labels_alone_give_the_same_flips_as_the_baseline(runs, tmp_path):
    alone = _drift(runs, runs / "new", runs / "labels.csv", "--json")
    baseline = _drift(runs, runs / "new", runs / "labels.csv", "--baseline", runs / "old",
                      "--json")
    assert alone.returncode == baseline.returncode == 0, alone.stderr
    assert json.loads(alone.stdout) == json.loads(baseline.stdout)
    # Labels without decisions (sampled by an older version) say where flips come from.
    labels = pd.read_csv(runs / "labels.csv", dtype=str, keep_default_na=False)
    labels.drop(columns="is_match").to_csv(tmp_path / "old_labels.csv", index=False)
    done = _drift(runs, runs / "new", tmp_path / "old_labels.csv")
    assert done.returncode == 0, done.stderr
    assert "0 pairs flipped" in done.stdout and "pass --baseline OLD_RUN" in done.stdout


def test_labels_from_another_run_name_the_file_and_the_fix(runs, tmp_path):
    other = pd.read_csv(runs / "labels.csv", dtype=str, keep_default_na=False)
    other["id_r"] = "C-999999"
    other.to_csv(tmp_path / "other.csv", index=False)
    done = _drift(runs, runs / "new", tmp_path / "other.csv", "--baseline", runs / "old")
    assert done.returncode == 2
    assert "other.csv" in done.stderr and "--baseline" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("change", "words"), [
    ({"max_drop": "2"}, ["--max-drop", "0.05"]),
    ({"drop_column": "match_weight"}, ["`match_weight`", "linkage sample"]),
    ({"labels": ""}, ["no pair is labelled", "linkage review"]),
])
def test_bad_drift_input_exits_2_with_the_fix(runs, tmp_path, change, words):
    labels = pd.read_csv(runs / "labels.csv", dtype=str, keep_default_na=False)
    if "drop_column" in change:
        labels = labels.drop(columns=change["drop_column"])
    if "labels" in change:
        labels["label"] = change["labels"]
    labels.to_csv(tmp_path / "labels.csv", index=False)
    done = _drift(runs, runs / "new", tmp_path / "labels.csv",
                  "--max-drop", change.get("max_drop", "0.1"))
    assert done.returncode == 2, done.stdout
    for word in words:
        assert word in done.stderr
    assert "Traceback" not in done.stderr


def test_the_gate_keeps_its_code_when_the_reader_closes_the_pipe(runs):
    """`linkage drift ... --max-drop 0.05 | head -1` in a pipeline: exit 1 is the gate's."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "linkage", "drift", str(runs / "new"),
                               str(runs / "labels.csv"), "--max-drop", "0.05"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    finally:
        os.close(write_end)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "bug" not in done.stderr
