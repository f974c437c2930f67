"""Issue 13, items 6 and 7: bad input exits 2 with the file, the key and the fix; a bug in
linkage exits 4; 1 is only `linkage check`'s gate. A folder of Parquet files is one table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tests.conftest import ROOT
from tests.hostile.conftest import assert_unchanged_outside, run_cli, run_clis, snapshot

CUSTOMERS = ROOT / "sample_data" / "customers.csv"
RULES = ROOT / "rules" / "customers.yaml"


def _rules_without_id(workdir: Path) -> Path:
    text = RULES.read_text(encoding="utf-8").replace("id_column: customer_id\n", "")
    (workdir / "rules.yaml").write_text(text, encoding="utf-8")
    return workdir / "rules.yaml"


def test_check_with_a_row_id_column_and_no_id_column_is_bad_input(workdir):
    frame = pd.read_csv(CUSTOMERS, dtype=str)
    frame.insert(0, "row_id", [str(i) for i in range(len(frame))])
    frame.to_csv(workdir / "table.csv", index=False)
    rules = _rules_without_id(workdir)
    before = snapshot(workdir)
    done = run_cli("check", workdir / "table.csv", "--rules", rules,
                   "--max-duplicate-rate", "0.5", cwd=workdir)
    assert done.returncode == 2, done.stderr
    assert "table.csv" in done.stderr and "`row_id`" in done.stderr
    assert "--id-column row_id" in done.stderr and "rename" in done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(workdir) == before


def test_an_unknown_encoding_is_bad_input(workdir):
    before = snapshot(workdir)
    calls = (["check", CUSTOMERS, "--rules", RULES, "--max-duplicate-rate", "0.5"],
             ["dedupe", CUSTOMERS, "--rules", RULES, "--out", workdir / "out"],
             ["suggest", CUSTOMERS])
    runs = run_clis(*[(*args, "--encoding", "utf8x") for args in calls], cwd=workdir)
    for done in runs:
        assert done.returncode == 2, done.stderr
        assert "`--encoding`" in done.stderr and "'utf8x'" in done.stderr
        assert "utf-8" in done.stderr and "Traceback" not in done.stderr
    assert snapshot(workdir) == before


def test_a_bug_in_linkage_exits_4_not_the_gates_1(workdir):
    """A command that fails inside linkage's code (a command added to the real group for the
    test: nothing in linkage fails on purpose)."""
    script = ("import sys\nfrom linkage.cli import main\n"
              "@main.command()\ndef crash():\n    {}['missing']\n"
              "sys.exit(main())\n")
    done = subprocess.run([sys.executable, "-c", script, "crash"], capture_output=True,
                          text=True, cwd=workdir, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 4, done.stderr
    assert "KeyError" in done.stderr and "this is a bug in linkage" in done.stderr


def test_check_help_states_every_exit_code():
    done = run_cli("check", "--help")
    text = " ".join(done.stdout.split())
    assert "0 when" in text and "1 when" in text and "2 on" in text and "4 " in text


def _parts(workdir: Path) -> Path:
    """The sample customers as a Spark-style folder: three part files and `_SUCCESS`."""
    frame = pd.read_csv(CUSTOMERS, dtype=str, keep_default_na=False, na_values=[""])
    folder = workdir / "customers.parquet"
    folder.mkdir()
    for number, start in enumerate(range(0, len(frame), 700)):
        frame.iloc[start:start + 700].to_parquet(folder / f"part-{number}.parquet", index=False)
    (folder / "_SUCCESS").write_bytes(b"")
    return folder


def test_a_folder_of_parquet_files_is_one_table(workdir):
    folder = _parts(workdir)
    whole_out = workdir.parent / "whole"  # the CSV's run, beside `workdir`, at the same time
    before = snapshot(workdir)
    whole, done = run_clis(("dedupe", CUSTOMERS, "--rules", RULES, "--out", whole_out),
                           ("dedupe", folder, "--rules", RULES, "--out", workdir / "out"),
                           cwd=workdir)
    assert whole.returncode == 0, whole.stderr
    assert done.returncode == 0, done.stderr
    ours = pd.read_parquet(workdir / "out" / "clusters.parquet")
    theirs = pd.read_parquet(whole_out / "clusters.parquet")
    assert len(ours) == 2004
    pd.testing.assert_frame_equal(ours, theirs)
    summary = json.loads((workdir / "out" / "summary.json").read_text())
    checksum = summary["inputs"][0]["checksum"]
    assert checksum.startswith("sha256:")
    assert_unchanged_outside(before, snapshot(workdir), "out")

    chunked, gate = run_clis(
        ("dedupe", folder, "--rules", RULES, "--out", workdir / "chunked", "--chunk-rows", "500"),
        ("check", folder, "--rules", RULES, "--max-duplicate-rate", "0.5", "--json"),
        cwd=workdir)
    assert chunked.returncode == 0, chunked.stderr
    assert (workdir / "chunked" / "clusters.parquet").read_bytes() == \
        (workdir / "out" / "clusters.parquet").read_bytes()

    assert gate.returncode == 0, gate.stderr
    assert json.loads(gate.stdout)["input_checksum"] == checksum

    # An --out inside the folder would be read as more of the table by the next run.
    inside = run_cli("dedupe", folder, "--rules", RULES, "--out", folder / "run", cwd=workdir)
    assert inside.returncode == 2, inside.stderr
    assert f"{folder / 'run'}: is inside the input folder {folder}" in inside.stderr
    assert "choose another `--out`" in inside.stderr.lower()
    assert not (folder / "run").exists()

    # The checksum covers the files' bytes: a changed part changes it.
    part = folder / "part-2.parquet"
    pd.read_parquet(part).iloc[:-1].to_parquet(part, index=False)
    gate = run_cli("check", folder, "--rules", RULES, "--max-duplicate-rate", "0.5", "--json",
                   cwd=workdir)
    assert json.loads(gate.stdout)["input_checksum"] != checksum


def test_a_parameter_out_of_range_is_bad_input_not_a_bug(workdir):
    """The text stages' parameters (LSH bands, shingle sizes, ...) are checked with a
    `ParameterError`, a `RulesError`: exit 2 with the message, never "internal error"."""
    done = run_cli("lsh-params", "--threshold", "0.8", "--bands", "0", cwd=workdir)
    assert done.returncode == 2, done.stderr
    assert "`bands` must be a positive integer" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_bands_that_name_no_number_are_a_usage_error_in_every_verb(workdir):
    """`--bands` is read by one parser (linkage.cli.common.parse_bands): empty or not numbers,
    every verb that takes it exits 2 saying so, before reading anything (`sample --bands ""`
    used to fail inside linkage, exit 4)."""
    labels = workdir / "labels.csv"
    labels.write_text("id_l,id_r,label\n", encoding="utf-8")
    calls = [("sample", workdir / "run", "--out", workdir / "todo.csv"),
             ("calibrate", workdir / "run", labels),
             ("drift", workdir / "run", labels),
             ("review", workdir / "run", "--no-open"),
             ("report", workdir / "run")]
    runs = run_clis(*[(*c, "--bands", bands) for c in calls for bands in ("", "0.6,x")],
                    cwd=workdir)
    for done, bands in zip(runs, ["", "0.6,x"] * len(calls), strict=True):
        assert done.returncode == 2, done.stderr
        expected = "needs at least one number" if bands == "" else "takes numbers separated"
        assert expected in done.stderr and "Traceback" not in done.stderr


_LIMITED = """
import resource, sys
import pandas, pyarrow.parquet  # loaded before the limit, as a real run has them
from linkage.cli import main

def data_size():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024

resource.setrlimit(resource.RLIMIT_DATA, (data_size() + (100 << 20), resource.RLIM_INFINITY))
sys.exit(main())
"""


def test_a_table_larger_than_the_memory_left_is_a_clear_error_not_a_bug(workdir):
    """A process that may grow by 100 MB reading a 250 MB table (persons with a long text
    column): the run cannot hold it. That is the machine's limit, not a bug in linkage: exit
    2 with what to do (parts, narrower keys, Spark), no traceback, nothing written."""
    import numpy as np

    from linkage.synth import persons

    records, _ = persons(10_000, seed=11, dup_rate=0.2)
    noise = np.random.default_rng(3).integers(0, 2**63, size=(len(records), 1_600),
                                              dtype=np.int64)
    records["notes"] = [row.tobytes().hex() for row in noise]  # 25.6 kB of text a record
    records.to_parquet(workdir / "wide.parquet", index=False)
    del records, noise
    before = snapshot(workdir)
    done = subprocess.run(
        [sys.executable, "-c", _LIMITED, "dedupe", "wide.parquet", "--rules",
         str(ROOT / "bench" / "persons_scale.yaml"), "--out", "out", "--no-progress"],
        capture_output=True, text=True, cwd=workdir, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stderr[-3000:]
    assert "ran out of memory" in done.stderr and "--chunk-rows" in done.stderr
    assert "error: wide.parquet: this machine ran out of memory" in done.stderr  # names it
    assert "--engine spark" in done.stderr and "Traceback" not in done.stderr
    assert snapshot(workdir) == before
