"""A run killed after a stage resumes from its checkpoint and writes the same output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.conftest import ROOT, run_cli


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "timings.json"}


def test_killed_run_resumes_with_identical_output(tmp_path, datasets):
    source = datasets / "febrl" / "dataset3.csv"
    clean = run_cli("dedupe", source, "--out", tmp_path / "clean")  # suggested rules + FS
    assert clean.returncode == 0, clean.stderr

    out = tmp_path / "run"
    checkpoint = tmp_path / "run.checkpoint"
    child = subprocess.Popen(
        [sys.executable, "-m", "linkage", "dedupe", str(source), "--out", str(out), "--resume"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not (checkpoint / "block.npz").exists():
        assert child.poll() is None, "the run ended before its first checkpoint"
        assert time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.005)
    os.killpg(child.pid, signal.SIGKILL)  # killed mid-run, as an operator or the OOM killer would
    child.wait()
    assert not out.exists()  # nothing half-written in --out

    resumed = run_cli("dedupe", source, "--out", out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    timings = json.loads((out / "timings.json").read_text())["seconds"]
    assert timings["block"] == 0.0  # the blocking stage came from the checkpoint
    assert _files(out) == _files(tmp_path / "clean")
    assert not checkpoint.exists()  # removed once the run succeeded


def test_a_checkpoint_of_other_rules_is_not_used(tmp_path, datasets):
    source = datasets / "febrl" / "dataset1.csv"
    first = run_cli("dedupe", source, "--rules", ROOT / "rules" / "febrl.yaml", "--out",
                    tmp_path / "a")
    assert first.returncode == 0
    # A stale checkpoint from another run (suggested rules) sits where this run looks.
    import linkage as lk

    lk.dedupe(source, lk.Rules.from_yaml(ROOT / "rules" / "febrl.yaml"), progress=False,
              checkpoint=tmp_path / "b.checkpoint")
    stale = json.loads((tmp_path / "b.checkpoint" / "block.json").read_text())
    stale["fingerprint"] = "another run"
    (tmp_path / "b.checkpoint" / "block.json").write_text(json.dumps(stale))
    done = run_cli("dedupe", source, "--rules", ROOT / "rules" / "febrl.yaml", "--out",
                   tmp_path / "b", "--resume")
    assert done.returncode == 0, done.stderr
    timings = json.loads((tmp_path / "b" / "timings.json").read_text())["seconds"]
    assert timings["block"] > 0.0  # recomputed, not taken from the stale checkpoint
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_a_chunked_run_killed_after_comparing_resumes_from_the_spilled_pairs(tmp_path):
    # A run in chunks keeps its spilled comparisons and their totals (`compare_chunks`) in
    # the checkpoint: killed after that, it starts again at scoring and writes the same files.
    from linkage.synth import persons

    records, _ = persons(40_000, seed=7)
    source = tmp_path / "persons.parquet"
    records.to_parquet(source, index=False)
    rules = ROOT / "bench" / "persons_fs.yaml"  # Fellegi-Sunter: EM from the saved patterns
    env = {**os.environ, "LINKAGE_CHUNK_ROWS": "5000"}
    args = [sys.executable, "-m", "linkage", "dedupe", str(source), "--rules", str(rules),
            "--no-progress"]
    clean = subprocess.run([*args, "--out", str(tmp_path / "clean")], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
    assert clean.returncode == 0, clean.stderr

    out, checkpoint = tmp_path / "run", tmp_path / "run.checkpoint"
    child = subprocess.Popen([*args, "--out", str(out), "--resume"], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.monotonic() + 120
    while not (checkpoint / "compare_chunks.npz").exists():
        assert child.poll() is None, "the run ended before its compare checkpoint"
        assert time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.002)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    assert not out.exists()
    assert (checkpoint / "compare_chunks.levels.bin").stat().st_size > 0

    resumed = subprocess.run([*args, "--out", str(out), "--resume"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    timings = json.loads((out / "timings.json").read_text())["seconds"]
    assert timings["block"] == 0.0 and timings["compare"] == 0.0  # both from the checkpoint
    assert _files(out) == _files(tmp_path / "clean")
    assert not checkpoint.exists()
