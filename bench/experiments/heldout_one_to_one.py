"""Held-out check of the one-to-one suggestion (stop 36): links cut from dedupe data sets.

Each link runs without rules (`linkage link A B --out DIR`), then with its suggested rules.yaml
with the opposite `one_to_one` choice forced; F1 over the links against the truth's cross
pairs. Usage: `python bench/experiments/heldout_one_to_one.py` (writes under /tmp/heldout).
The results are in bench/GENERALIZATION.md ("Stop 36").
"""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import accuracy  # noqa: E402

OUT = Path("/tmp/heldout")


def run(name: str, a: pd.DataFrame, b: pd.DataFrame, truth: set) -> None:
    OUT.mkdir(exist_ok=True)
    files = [OUT / f"{name}_a.csv", OUT / f"{name}_b.csv"]
    a.to_csv(files[0], index=False)
    b.to_csv(files[1], index=False)
    shown = {}
    for tag in ("suggested", "flipped"):
        out = OUT / f"{name}_{tag}"
        shutil.rmtree(out, ignore_errors=True)
        extra = []
        if tag == "flipped":
            text = (OUT / f"{name}_suggested" / "rules.yaml").read_text()
            if "one_to_one: false" in text:
                text = text.replace("one_to_one: false", "one_to_one: true").replace(
                    "one_to_one_threshold: rules", "one_to_one_threshold: record_prior")
            else:
                text = text.replace("one_to_one: true", "one_to_one: false").replace(
                    "one_to_one_threshold: record_prior", "one_to_one_threshold: rules")
            (OUT / f"{name}_flip.yaml").write_text(text)
            extra = ["--rules", str(OUT / f"{name}_flip.yaml")]
        done = subprocess.run([sys.executable, "-m", "linkage", "link", *map(str, files),
                               "--out", str(out), "--no-progress", *extra],
                              capture_output=True, text=True, cwd=ROOT)
        if done.returncode:
            print(name, tag, "exit", done.returncode, done.stderr[-500:])
            return
        links = pd.read_parquet(out / "links.parquet")
        got = set(zip(links["id_l"].astype(str), links["id_r"].astype(str), strict=True))
        tp = len(got & truth)
        p, r = tp / max(len(got), 1), tp / len(truth)
        choice = next(line for line in (out / "rules.yaml").read_text().splitlines()
                      if line.startswith("one_to_one:"))
        shown[tag] = f"{choice} F1 {2 * p * r / (p + r):.4f} (P {p:.3f} R {r:.3f})"
    print(name, len(a), len(b), "true pairs", len(truth), "|", shown["suggested"],
          "| the other choice:", shown["flipped"], flush=True)


def febrl3() -> None:
    frame = pd.read_csv(accuracy.DATA / "febrl" / "dataset3.csv", dtype=str,
                        skipinitialspace=True)
    frame.columns = [c.strip() for c in frame.columns]
    ids = frame.columns[0]
    rows = pd.DataFrame({"id": frame[ids], "e": frame[ids].str.extract(r"rec-(\d+)-")[0],
                         "org": frame[ids].str.contains("-org")})
    originals, copies = rows[rows["org"]], rows[~rows["org"]]
    pairs = originals.merge(copies, on="e")
    run("febrl3_all_duplicates", frame[rows["org"]], frame[~rows["org"]],
        set(zip(pairs["id_x"], pairs["id_y"], strict=True)))
    first = ~copies.duplicated("e")
    pairs = originals.merge(copies[first], on="e")
    run("febrl3_first_duplicate", frame[rows["org"]], frame[~rows["org"]][first.to_numpy()],
        set(zip(pairs["id_x"], pairs["id_y"], strict=True)))


def halves(name: str) -> None:
    _, (frame,), truth = getattr(accuracy, name)()
    tid, te = truth.columns[0], truth.columns[1]
    column = next(c for c in frame.columns
                  if set(frame[c].astype(str)) >= set(truth[tid].astype(str).head(50)))
    entity = dict(zip(truth[tid].astype(str), truth[te], strict=True))
    half = np.random.default_rng(0).random(len(frame)) < 0.5
    a, b = frame[half], frame[~half]
    ea = pd.DataFrame({"id": a[column].astype(str), "e": a[column].astype(str).map(entity)})
    eb = pd.DataFrame({"id": b[column].astype(str), "e": b[column].astype(str).map(entity)})
    pairs = ea.merge(eb, on="e")
    run(f"{name}_halves", a, b, set(zip(pairs["id_x"], pairs["id_y"], strict=True)))


if __name__ == "__main__":
    febrl3()
    halves("historical_50k")
    halves("fake_1000")
