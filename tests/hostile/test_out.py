"""Issue 13, items 1, 4, 8 and 9: what a run may do to its `--out` folder and beside it.

`--out` is replaced only when it is empty or a previous linkage run (its `.linkage` marker says
so); a second run into it while one is writing refuses; OSErrors on the output are the
machine's (exit 2, naming the path and the fix); a killed run's staging and spill folders are
cleaned by the next run.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT
from tests.hostile.conftest import assert_unchanged_outside, run_cli, snapshot

CUSTOMERS = ROOT / "sample_data" / "customers.csv"
RULES = ROOT / "rules" / "customers.yaml"


def _dedupe(work: Path, out: str, *extra: str, source: Path = CUSTOMERS):
    return run_cli("dedupe", source, "--rules", RULES, "--out", work / out, *extra, cwd=work)


@pytest.fixture(scope="module")
def customers_run(tmp_path_factory) -> Path:
    """One finished run of the sample customers, made once for the module: the cases that
    need a previous run folder (as input, or to be replaced) get a copy of it."""
    work = tmp_path_factory.mktemp("customers_run")
    done = _dedupe(work, "run")
    assert done.returncode == 0, done.stderr
    return work / "run"


def _previous_run(customers_run: Path, work: Path, name: str) -> None:
    """`work/name` as the previous run left it (a byte-for-byte copy, `.linkage` included)."""
    shutil.copytree(customers_run, work / name)


def _start(work: Path, *args, env: dict | None = None, **kwargs) -> subprocess.Popen:
    """The real CLI in the background (to run beside another, or to kill)."""
    return subprocess.Popen(
        [sys.executable, "-m", "linkage", *map(str, args)], cwd=work, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", **(env or {})},
        **kwargs)


def _wait_for(pattern: str, folder: Path, process: subprocess.Popen) -> Path | None:
    """The first path matching `pattern` in `folder` once it appears (None if the process
    ended first)."""
    while process.poll() is None:
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
        time.sleep(0.002)
    return None


def _synthetic(path: Path, rows: int) -> Path:
    """A table of `rows` records with many near-duplicates, big enough that writing a run of
    it takes a noticeable time."""
    rng = np.random.default_rng(0)
    names = np.array([f"name{i:05d}" for i in range(rows // 4)])
    frame = pd.DataFrame({
        "id": [f"R{i:07d}" for i in range(rows)],
        "name": names[rng.integers(0, len(names), rows)],
        "city": np.array(["seoul", "busan", "incheon", "daegu"])[rng.integers(0, 4, rows)],
    })
    frame.to_csv(path, index=False)
    return path


SYNTHETIC_RULES = """\
id_column: id
blocking:
  - name: name
    keys: [[name]]
comparisons:
  - {type: exact, column: city}
scoring:
  type: rule_sum
  threshold: 1.0
  weights:
    city: {exact: 2.0, else: -1.0}
"""


# -- item 1: the `--out` rule ---------------------------------------------------------------

def test_out_holding_the_input_is_refused_and_kept(workdir):
    data = workdir / "d"
    data.mkdir()
    shutil.copy(CUSTOMERS, data / "customers.csv")
    (data / "notes.txt").write_text("mine\n")
    before = snapshot(workdir)
    done = run_cli("dedupe", data / "customers.csv", "--rules", RULES, "--out", data,
                   cwd=workdir)
    assert done.returncode == 2, done.stderr
    assert str(data) in done.stderr and "--out" in done.stderr
    assert "choose another" in done.stderr.lower()
    assert "Traceback" not in done.stderr
    assert snapshot(workdir) == before  # nothing at all changed, `d` included


def test_out_inside_a_run_folder_that_holds_the_input_is_refused(workdir, customers_run):
    _previous_run(customers_run, workdir, "run")
    before = snapshot(workdir)
    done = run_cli("dedupe", workdir / "run" / "deduplicated.parquet", "--rules", RULES,
                   "--out", workdir / "run", cwd=workdir)
    assert done.returncode == 2, done.stderr
    assert "deduplicated.parquet" in done.stderr and "--out" in done.stderr
    assert snapshot(workdir) == before


def test_out_that_is_a_folder_of_other_files_is_refused(workdir):
    (workdir / "mine").mkdir()
    (workdir / "mine" / "thesis.tex").write_text("years of work\n")
    before = snapshot(workdir)
    done = _dedupe(workdir, "mine")
    assert done.returncode == 2, done.stderr
    assert str(workdir / "mine") in done.stderr
    assert ".linkage" in done.stderr and "choose another" in done.stderr.lower()
    assert snapshot(workdir) == before


@pytest.mark.parametrize("verb", ["forget", "update", "decontaminate"])
def test_every_verb_that_writes_a_folder_keeps_the_rule(workdir, customers_run, verb):
    _previous_run(customers_run, workdir, "run")
    (workdir / "mine").mkdir()
    (workdir / "mine" / "keep.txt").write_text("keep\n")
    args = {
        "forget": ["forget", workdir / "run", "C-000001"],
        "update": ["update", workdir / "run", CUSTOMERS],
        "decontaminate": ["decontaminate", CUSTOMERS, "--eval", CUSTOMERS,
                          "--text-column", "address", "--train-id", "customer_id",
                          "--eval-id", "customer_id"],
    }[verb]
    before = snapshot(workdir)
    done = run_cli(*args, "--out", workdir / "mine", cwd=workdir)
    assert done.returncode == 2, done.stderr
    assert str(workdir / "mine") in done.stderr and "choose another" in done.stderr.lower()
    assert snapshot(workdir) == before


def test_a_run_folder_is_marked_and_replaced_by_the_next_run(workdir):
    (workdir / "empty").mkdir()
    before = snapshot(workdir)
    assert _dedupe(workdir, "empty").returncode == 0
    assert (workdir / "empty" / ".linkage").is_file()
    first = snapshot(workdir / "empty")
    again = _dedupe(workdir, "empty")
    assert again.returncode == 0, again.stderr
    second = snapshot(workdir / "empty")
    del first["timings.json"], second["timings.json"]  # seconds, never the same
    assert second == first  # the same bytes, marker included
    assert_unchanged_outside(before, snapshot(workdir), "empty")
    # As readable as any folder the user makes (the umask's), not the staging folder's 0700.
    mask = os.umask(0)
    os.umask(mask)
    assert (workdir / "empty").stat().st_mode & 0o777 == 0o777 & ~mask


# -- item 4: concurrent runs into one `--out` -----------------------------------------------

def test_concurrent_runs_into_one_out_refuse_rather_than_lose(workdir):
    before = snapshot(workdir)
    runs = [_start(workdir, "dedupe", CUSTOMERS, "--rules", RULES, "--out", workdir / "out")
            for _ in range(6)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in runs]
    wrote = [r for r in results if r[0] == 0]
    refused = [r for r in results if r[0] != 0]
    assert wrote and refused, results  # six runs started together overlap
    for code, _, err in refused:
        assert code == 2, err
        assert "another linkage run (pid" in err and "choose another `--out`" in err
    for _, out, _ in wrote:
        assert "wrote" in out
    assert (workdir / "out" / "summary.json").is_file()
    assert_unchanged_outside(before, snapshot(workdir), "out")
    assert sorted(p.name for p in workdir.iterdir()) == ["out"]  # no lock, no staging left


def test_a_run_refuses_while_another_writes_the_same_out(workdir):
    source = _synthetic(workdir / "big.csv", 200_000)
    (workdir / "rules.yaml").write_text(SYNTHETIC_RULES)
    before = snapshot(workdir)
    first = _start(workdir, "dedupe", source, "--rules", workdir / "rules.yaml",
                   "--out", workdir / "out")
    assert _wait_for(".out.lock", workdir, first) is not None
    second = _dedupe(workdir, "out")
    assert first.wait(timeout=300) == 0, first.communicate()[1]
    assert second.returncode == 2, second.stderr
    assert f"another linkage run (pid {first.pid}) is writing {workdir / 'out'}" in second.stderr
    assert "wait for it or choose another `--out`" in second.stderr
    assert_unchanged_outside(before, snapshot(workdir), "out")


# -- item 9: what a killed run leaves behind --------------------------------------------------

def test_a_killed_run_leaves_nothing_the_next_run_does_not_clean(workdir):
    source = _synthetic(workdir / "big.csv", 200_000)
    (workdir / "rules.yaml").write_text(SYNTHETIC_RULES)
    spills = workdir / "tmp"
    spills.mkdir()
    before = snapshot(workdir)
    args = ("dedupe", source, "--rules", workdir / "rules.yaml", "--out", workdir / "out",
            "--chunk-rows", "20000")
    killed = _start(workdir, *args, env={"TMPDIR": str(spills)})
    assert _wait_for("linkage-pairs-*", spills, killed) is not None
    staging = _wait_for(".out.tmp-*", workdir, killed)
    assert staging is not None, "the run ended before it began writing"
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert list(spills.glob("linkage-pairs-*")) and staging.exists()  # what issue 13 saw
    done = _start(workdir, *args, env={"TMPDIR": str(spills)})
    assert done.wait(timeout=300) == 0, done.communicate()[1]
    assert list(spills.iterdir()) == []
    assert_unchanged_outside(before, snapshot(workdir), "out")
    assert sorted(p.name for p in workdir.iterdir()) == ["big.csv", "out", "rules.yaml", "tmp"]


# -- item 8: the machine's faults on the output -------------------------------------------------

@contextlib.contextmanager
def _mounted_tmpfs(folder: Path, options: str):
    """A small tmpfs at `folder` (root only): a real read-only or full file system."""
    folder.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
            capture_output=True).returncode != 0:
        pytest.skip("needs root and mount to make a real read-only or full file system")
    try:
        yield folder
    finally:
        # A run forked by the warm CLI server reports its exit code a moment before its
        # process is gone; until then the file system is busy.
        for _ in range(50):
            if subprocess.run(["umount", str(folder)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:  # still busy after 5 s: detach it, so a slow exit does not fail the test
            subprocess.run(["umount", "--lazy", str(folder)], check=True)


def test_a_read_only_out_parent_is_the_machine_not_a_bug(workdir, customers_run):
    _previous_run(customers_run, workdir, "run")
    parent = workdir / "ro"
    if os.geteuid() == 0:
        context = _mounted_tmpfs(parent, "ro,size=1m")
    else:
        parent.mkdir()
        parent.chmod(0o555)
        context = contextlib.nullcontext(parent)
    with context:
        before = snapshot(workdir)
        done = _dedupe(workdir, "ro/out")
        assert done.returncode == 2, done.stderr
        assert str(parent) in done.stderr and "--out" in done.stderr
        assert "bug" not in done.stderr and "Traceback" not in done.stderr
        assert snapshot(workdir) == before
        # A file written outside any run folder (`sample --out FILE`) is named as well.
        done = run_cli("sample", workdir / "run", "--on", "weight", "--bands", "0,4", "--out",
                       parent / "todo.csv", cwd=workdir)
        assert done.returncode == 2, done.stderr
        assert f"{parent / 'todo.csv'}: " in done.stderr and "permissions" in done.stderr
        assert "bug" not in done.stderr and "Traceback" not in done.stderr
        assert snapshot(workdir) == before


def test_a_full_disk_is_the_machine_not_a_bug(workdir):
    """A real ENOSPC: a 256 KiB tmpfs, too small for the run's outputs."""
    with _mounted_tmpfs(workdir / "small", "size=256k"):
        before = snapshot(workdir)
        done = _dedupe(workdir, "small/out")
        assert done.returncode == 2, done.stderr
        assert f"no space left on device writing {workdir / 'small' / 'out'}" in done.stderr
        assert "free space or choose another `--out`" in done.stderr
        assert "bug" not in done.stderr and "Traceback" not in done.stderr
        assert snapshot(workdir) == before  # the staging folder is gone too


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))


def test_a_file_size_limit_is_the_machine_not_a_bug(workdir):
    """A real EFBIG: RLIMIT_FSIZE below the size of the run's files."""
    before = snapshot(workdir)
    done = _start(workdir, "dedupe", CUSTOMERS, "--rules", RULES, "--out", workdir / "out",
                  preexec_fn=_limit_file_size)
    _, err = done.communicate(timeout=300)
    assert done.returncode == 2, err
    assert f"file too large writing {workdir / 'out'}" in err
    assert "`ulimit -f`" in err and "choose another `--out`" in err
    assert "bug" not in err and "Traceback" not in err
    assert snapshot(workdir) == before


def test_stdout_on_a_full_disk_is_the_machine_not_a_bug(workdir):
    """A real ENOSPC on standard output (/dev/full)."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "linkage", "validate", RULES],
                              stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert "no space left on device writing standard output" in done.stderr
    assert "bug" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("args", "code"), [
    (["validate", RULES], 0),
    (["suggest", CUSTOMERS], 0),
    (["check", CUSTOMERS, "--rules", RULES, "--max-duplicate-rate", "0.5", "--json"], 0),
    (["check", CUSTOMERS, "--rules", RULES, "--max-duplicate-rate", "0.01", "--json"], 1),
])
def test_a_closed_pipe_ends_quietly(workdir, args, code):
    """`linkage validate F | head -1` with the reader gone before linkage writes."""
    before = snapshot(workdir)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "linkage", *map(str, args)],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=workdir,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(write_end)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and "bug" not in done.stderr
    assert "BrokenPipe" not in done.stderr and "Exception ignored" not in done.stderr
    assert snapshot(workdir) == before


def test_a_run_killed_between_its_renames_gets_the_previous_run_back(workdir, customers_run):
    """The state a kill between `out -> .out.old-PID-*/out` and `staging -> out` leaves (made
    by hand: the window is two renames wide). The next run puts the previous run back before
    anything else, so even a run that then fails on bad input loses nothing."""
    _previous_run(customers_run, workdir, "out")
    previous = snapshot(workdir / "out")
    retired = workdir / ".out.old-99999999-abc"  # above any pid_max: a process that is gone
    retired.mkdir()
    (workdir / "out").rename(retired / "out")
    (workdir / ".out.tmp-99999999-def").mkdir()
    done = run_cli("dedupe", CUSTOMERS, "--rules", RULES, "--out", workdir / "out",
                   "--id-column", "no_such_column", cwd=workdir)
    assert done.returncode == 2, done.stderr
    assert "no_such_column" in done.stderr
    assert snapshot(workdir / "out") == previous
    assert sorted(p.name for p in workdir.iterdir()) == ["out"]


def test_a_rerun_keeps_what_a_person_put_into_the_run_folder(customers_run, tmp_path):
    """A run replaces what runs wrote into `--out` (its marker lists it), nothing else: a note
    and a folder a person put beside the outputs go on into the new run folder, unchanged; a
    file of theirs under a name the run writes stops the run (exit 2) with nothing lost."""
    _previous_run(customers_run, tmp_path, "run")
    run = tmp_path / "run"
    (run / "notes.txt").write_text("checked by hand\n")
    (run / "mine").mkdir()
    (run / "mine" / "labels.csv").write_text("id_l,id_r,label\n")
    before = (run / "clusters.parquet").stat().st_ino
    done = _dedupe(tmp_path, "run")
    assert done.returncode == 0, done.stderr
    assert (run / "clusters.parquet").stat().st_ino != before  # the run's files were replaced
    assert (run / "notes.txt").read_text() == "checked by hand\n"
    assert (run / "mine" / "labels.csv").read_text() == "id_l,id_r,label\n"
    # a file of the person's under a name this run writes (the earlier run's marker does not
    # list it: say the person made it): refused, and nothing moves
    marker = json.loads((run / ".linkage").read_text())
    assert "summary.json" in marker["files"] and "notes.txt" not in marker["files"]
    marker["files"].remove("summary.json")
    (run / ".linkage").write_text(json.dumps(marker))
    kept = snapshot(run)
    done = _dedupe(tmp_path, "run")
    assert done.returncode == 2, done.stderr
    assert "summary.json" in done.stderr and "Move it out" in done.stderr
    assert snapshot(run) == kept


def test_a_run_killed_after_carrying_a_persons_files_gives_them_back(workdir, customers_run):
    """The state a kill after a rerun carried a person's note into its staging folder leaves
    (made by hand): the next run, even one that fails on bad input, puts the note back into
    the run folder before it removes the killed run's staging folder."""
    _previous_run(customers_run, workdir, "out")
    previous = snapshot(workdir / "out")
    staging = workdir / ".out.tmp-99999999-abc"  # above any pid_max: a process that is gone
    shutil.copytree(workdir / "out", staging)  # the killed run's outputs and marker
    (staging / "notes.txt").write_text("checked by hand\n")  # carried, not in its marker
    done = run_cli("dedupe", CUSTOMERS, "--rules", RULES, "--out", workdir / "out",
                   "--id-column", "no_such_column", cwd=workdir)
    assert done.returncode == 2, done.stderr
    assert (workdir / "out" / "notes.txt").read_text() == "checked by hand\n"
    (workdir / "out" / "notes.txt").unlink()
    assert snapshot(workdir / "out") == previous
    assert sorted(p.name for p in workdir.iterdir()) == ["out"]
