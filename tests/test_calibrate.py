"""Calibration: sample per band, label, and precision per band matches a hand count."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from linkage.errors import InputError
from linkage.measure.calibrate import calibrate, sample_pairs, wilson
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, datasets):
    folder = tmp_path_factory.mktemp("cal")
    source = pd.read_csv(datasets / "febrl" / "dataset1.csv", dtype=str, skipinitialspace=True)
    entity = source["rec_id"].str.extract(r"rec-(\d+)-")[0]
    source["rec_id"] = [f"x{i:04d}" for i in range(len(source))]  # hide the truth
    source.to_csv(folder / "in.csv", index=False)
    done = run_cli("dedupe", folder / "in.csv", "--out", folder / "run")  # FS, suggested
    assert done.returncode == 0, done.stderr
    return folder / "run", dict(zip(source["rec_id"], entity, strict=True))


def test_sample_label_calibrate_end_to_end(run_dir, tmp_path):
    run, entity = run_dir
    done = run_cli("sample", run, "--bands", "0.0,0.5,0.99", "--per-band", "30",
                   "--out", tmp_path / "todo.csv")
    assert done.returncode == 0, done.stderr
    todo = pd.read_csv(tmp_path / "todo.csv", dtype=str, keep_default_na=False)
    assert {"band", "id_l", "id_r", "given_name_l", "given_name_r", "label"} <= set(todo.columns)
    assert todo.groupby("band").size().max() <= 30
    # A reviewer labels them (here from the hidden truth); one pair is left unsure.
    todo["label"] = [str(int(entity[a] == entity[b])) for a, b in zip(todo["id_l"],
                                                                      todo["id_r"], strict=True)]
    todo.loc[0, "label"] = ""
    todo.to_csv(tmp_path / "labels.csv", index=False)
    done = run_cli("calibrate", run, tmp_path / "labels.csv", "--bands", "0.0,0.5,0.99",
                   "--target", "0.9", "--write-rules", tmp_path / "calibrated.yaml")
    assert done.returncode == 0, done.stderr
    assert "precision" in done.stdout and "recommended threshold" in done.stdout
    assert (tmp_path / "calibrated.yaml").exists()


def test_precision_per_band_matches_a_hand_count():
    labels = pd.DataFrame({
        "match_probability": [0.95, 0.97, 0.99, 0.999, 0.7, 0.75, 0.8, 0.1, 0.2],
        "label": ["1", "1", "1", "0", "1", "0", "", "0", "0"],
    })
    table, recommended = calibrate(labels, [0.0, 0.6, 0.9], target=0.7)
    by_band = table.set_index("band_from")
    assert by_band.loc[0.9, "labelled"] == 4 and by_band.loc[0.9, "precision"] == 0.75
    assert by_band.loc[0.6, "labelled"] == 2 and by_band.loc[0.6, "precision"] == 0.5  # "" unsure
    assert by_band.loc[0.0, "precision"] == 0.0
    assert recommended == 0.9  # 0.6 fails 0.7, so only the top band qualifies
    low, high = wilson(3, 4)
    assert by_band.loc[0.9, "ci_low"] == pytest.approx(low) and low < 0.75 < high


def test_rule_sum_runs_must_sample_by_weight(tmp_path):
    from tests.conftest import ROOT

    done = run_cli("dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                   ROOT / "rules" / "customers.yaml", "--out", tmp_path / "run")
    assert done.returncode == 0
    from tests.conftest import run_clis

    bad, good = run_clis(("sample", tmp_path / "run", "--out", tmp_path / "bad.csv"),
                         ("sample", tmp_path / "run", "--on", "weight", "--bands", "0,4,8",
                          "--per-band", "5", "--out", tmp_path / "x.csv"))
    assert bad.returncode == 2 and "--on weight" in bad.stderr
    assert not (tmp_path / "bad.csv").exists()
    assert good.returncode == 0, good.stderr


def test_probability_bands_on_rule_sum_labels_say_to_use_weight():
    labels = pd.DataFrame({"label": ["1", "0", "1"], "match_weight": [5.0, 1.0, 7.0],
                           "match_probability": [None, None, None]})
    with pytest.raises(InputError, match="--on weight"):
        calibrate(labels, [0.6, 0.8])
    table, _ = calibrate(labels, [0, 4], on="weight")
    assert table["labelled"].tolist() == [1, 2]


def test_an_input_not_found_from_here_says_where_to_work_from(run_dir, tmp_path, monkeypatch):
    moved = tmp_path / "run"
    shutil.copytree(run_dir[0], moved)
    summary = json.loads((moved / "summary.json").read_text(encoding="utf-8"))
    summary["inputs"][0]["name"] = "relative/in.csv"
    (moved / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="folder the run was started in"):
        sample_pairs(moved, [0.5, 0.9], 5)


def test_a_link_whose_right_table_names_its_columns_otherwise_is_sampled(tmp_path,
                                                                           monkeypatch):
    """rules/link.yaml renames the right table's id and fields (`rename_right`): the pairs to
    label show both records under the left's names, the right's own columns beside them."""
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)  # the run records its inputs as given: relative to the root
    done = run_cli("link", "sample_data/link_left.csv", "sample_data/link_right.csv",
                   "--rules", "rules/link.yaml", "--out", tmp_path / "link")
    assert done.returncode == 0, done.stderr
    todo = sample_pairs(tmp_path / "link", [0.5, 0.9], 5)
    assert len(todo) > 0 and todo["id_r"].str.startswith("R").all()
    assert {"first_name_l", "first_name_r", "surname_r", "mobile_r", "email_l"} <= set(todo)
    assert todo["surname_r"].notna().all() and not {"family_name_r", "id_r_r"} & set(todo)
