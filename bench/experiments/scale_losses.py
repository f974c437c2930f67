"""Where a stress table loses F1 as it grows: blocking, the scorer, or the threshold.

    python bench/experiments/scale_losses.py --trap split_dates --sizes 10000 100000 1000000

For each size: builds `linkage.synth.traps(N, seed=42, trap=TRAP)` (a dedupe trap), runs
`linkage dedupe TABLE --out DIR` without rules in a subprocess (as a user does), and scores it
against the truth (used only to score, never passed to the run):

- F1 end to end: the run's own clusters, pairwise.
- F1 at threshold 0: the connected components of the candidate pairs whose match weight is at
  least 0 (even odds), plus exact copies (records equal on every column but the id, which the
  run's exact stage joins before blocking), pairwise. The run's threshold is its rules' own.
- F1 of a per-pattern oracle: the same components, a pair linked where the truth makes most
  candidate pairs of its level pattern matches: the best any scorer that reads these levels
  can do with this blocking.
- Reachable recall: the share of true pairs that true candidate pairs and exact copies join
  (what a perfect scorer could cluster): below 1, blocking lost them.
- Pair F1 among the candidates, the model at its threshold, at 0, and the oracle.

bench/experiments/GLOBAL_EM.md (stop 41) reports split_dates with it. In-sample: the generator
is this project's own.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))

from generalization import pairwise  # noqa: E402

from linkage.synth import TRAPS, traps  # noqa: E402

SEED = 42


def _components(n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(left)), (left, right)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def measure(trap: str, size: int, work: Path) -> dict:
    mode, frames, truth = traps(size, seed=SEED, trap=trap)
    if mode != "dedupe":
        raise SystemExit(f"{trap} is a link trap: this script measures dedupe traps")
    table = frames[0]
    path = work / f"{trap}_{size}.parquet"
    table.to_parquet(path, index=False)
    out = work / f"run_{trap}_{size}"
    done = subprocess.run([sys.executable, "-m", "linkage", "dedupe", str(path), "--out",
                           str(out), "--no-progress"], capture_output=True, text=True,
                          cwd=ROOT)
    if done.returncode not in (0, 1, 3):
        raise SystemExit(f"linkage dedupe exited {done.returncode}: {done.stderr[-600:]}")
    id_name = table.columns[0]
    entity = pd.Series(truth.iloc[:, 1].to_numpy(), index=truth.iloc[:, 0].astype(str))
    ids = table[id_name].astype(str)
    ent = entity[ids].to_numpy()
    n = len(table)
    row = pd.Series(np.arange(n), index=ids)

    clusters = pd.read_parquet(out / "clusters.parquet")
    run_cluster = pd.Series(clusters["cluster_id"].to_numpy(),
                            index=clusters.iloc[:, 0].astype(str))[ids].to_numpy()
    pairs = pd.read_parquet(out / "pairs.parquet")
    left = row[pairs["id_l"].astype(str)].to_numpy()
    right = row[pairs["id_r"].astype(str)].to_numpy()
    true = ent[left] == ent[right]
    levels = [c for c in pairs.columns if c.endswith("_level")]
    share = pd.Series(true).groupby([pairs[c] for c in levels]).transform("mean").to_numpy()
    linked = pairs["is_match"].to_numpy(dtype=bool)
    at_zero = pairs["match_weight"].to_numpy() >= 0
    oracle = share > 0.5

    others = [c for c in table.columns if c != id_name]
    values = table[others].fillna("").astype(str)
    copies = pd.Series(np.arange(n)).groupby([values[c] for c in others]).transform(
        "first").to_numpy()

    def end_to_end(keep: np.ndarray) -> float:
        comp = _components(n, np.concatenate([left[keep], np.arange(n)]),
                           np.concatenate([right[keep], copies]))
        return pairwise(comp, ent)[2]

    def pair_f1(keep: np.ndarray) -> float:
        hit = int((keep & true).sum())
        return 2 * hit / max(int(keep.sum()) + int(true.sum()), 1)

    reach = _components(n, np.concatenate([left[true], np.arange(n)]),
                        np.concatenate([right[true], copies]))
    sizes = pd.Series(ent).value_counts().to_numpy()
    true_pairs = int((sizes * (sizes - 1) // 2).sum())
    joined = pd.DataFrame({"c": reach, "e": ent}).groupby(["c", "e"]).size().to_numpy()
    return {
        "size": size, "candidates": len(pairs),
        "f1_run": pairwise(run_cluster, ent)[2],
        "f1_at_0": end_to_end(at_zero), "f1_oracle": end_to_end(oracle),
        "reachable": int((joined * (joined - 1) // 2).sum()) / max(true_pairs, 1),
        "pairs_run": pair_f1(linked), "pairs_at_0": pair_f1(at_zero),
        "pairs_oracle": pair_f1(oracle),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trap", default="split_dates",
                        choices=[t for t, mode in TRAPS.items() if mode == "dedupe"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000, 1_000_000])
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="scale-losses-") as tmp:
        for size in args.sizes:
            rows.append(measure(args.trap, size, Path(tmp)))
            print(rows[-1], flush=True)
    head = ["size", "candidates", "f1_run", "f1_at_0", "f1_oracle", "reachable", "pairs_run",
            "pairs_at_0", "pairs_oracle"]
    print("| " + " | ".join(head) + " |")
    print("| " + " | ".join("---:" for _ in head) + " |")
    for r in rows:
        print("| " + " | ".join(f"{r[h]:,}" if isinstance(r[h], int) else f"{r[h]:.4f}"
                                for h in head) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
