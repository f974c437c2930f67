"""Would a threshold chosen from the model's own posteriors beat the rules' fixed one?

For each case of bench/generalization.py (its data sets, named variant, and its generator's
traps): the run without rules, as a user runs it; then the same suggested rules with the
threshold (6 bits for records; text tables' rules say 0) lowered, never raised, to the lowest
weight, not below `--floor` bits (9:1 odds by default), at which the model's expected share
of non-matches among the pairs at or above it (the mean of 1 - match_probability, a Bayesian
false discovery rate) is at most each `--alpha`. Pairwise F1 from the truth, which is used
only to score. An experiment, not a feature: see bench/experiments/THRESHOLDS.md for what it
showed.

    python bench/experiments/threshold_sweep.py --only split_dates households \
        --sizes 100000 1000000 --alpha 0.002 0.005 0.01
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

import generalization as g  # noqa: E402


def fdr_threshold(run: Path, alpha: float, floor: float, ceiling: float) -> float | None:
    """The lowest threshold >= floor (and <= ceiling, the rules' own: the sweep only lowers)
    whose pairs' mean posterior of a non-match is at most alpha, half-way to the next lower
    weight; None where no such threshold exists."""
    pairs = pd.read_parquet(run / "pairs.parquet", columns=["match_weight", "match_probability"])
    order = np.argsort(-pairs["match_weight"].to_numpy(), kind="stable")
    w = pairs["match_weight"].to_numpy()[order]
    p = pairs["match_probability"].to_numpy()[order]
    fdr = np.cumsum(1.0 - p) / np.arange(1, len(w) + 1)
    ok = np.flatnonzero((fdr <= alpha) & (w >= floor))
    if len(ok) == 0:
        return None
    i = ok[-1]
    below = w[i + 1] if i + 1 < len(w) else w[i] - 1.0
    return float(min(ceiling, (w[i] + below) / 2.0 if w[i] > below else w[i]))


def main(argv: list[str] | None = None) -> int:
    names = [*g.DATASETS, *g.TRAPS]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=names, default=names, metavar="NAME")
    parser.add_argument("--sizes", nargs="+", type=int, default=[100_000])
    parser.add_argument("--alpha", nargs="+", type=float, default=[0.002, 0.005, 0.01])
    parser.add_argument("--floor", type=float, default=3.17, help="bits (9:1 odds: 3.17)")
    args = parser.parse_args(argv)
    cases = [c for c in g.dataset_cases(args.only) if c.variant == "named"]
    for case in [*cases, *g.trap_cases(args.only, args.sizes)]:
        with tempfile.TemporaryDirectory(prefix="threshold-sweep-") as tmp:
            work = Path(tmp)
            base = [case.mode, *g._inputs(case, work), "--no-progress"]
            run0 = work / "run0"
            rc, last, seconds = g._run([*base, "--out", str(run0)], 3600)
            if not (run0 / "summary.json").exists():
                print(f"{case.name}: exit {rc}: {last}", flush=True)
                continue
            p, r, f = g._score(case, run0)
            rules = yaml.safe_load((run0 / "rules.yaml").read_text(encoding="utf-8"))
            own = float(rules["scoring"]["threshold"])  # 6 for records, 0 for text tables
            print(f"{case.name}: the rules' threshold {own:g}: F1 {f:.4f} (P {p:.4f}, R {r:.4f}; "
                  f"{seconds:.0f} s)", flush=True)
            seen: dict[float, str] = {}
            for alpha in args.alpha:
                found = fdr_threshold(run0, alpha, args.floor, own)
                if found is None or found >= own:
                    print(f"    alpha {alpha}: threshold unchanged", flush=True)
                    continue
                found = round(found, 3)
                if found not in seen:
                    rules["scoring"]["threshold"] = found
                    path = work / "rules.yaml"
                    path.write_text(yaml.safe_dump(rules, sort_keys=False), encoding="utf-8")
                    out = work / "run"
                    g._run([*base, "--rules", str(path), "--out", str(out)], 3600)
                    p, r, f = g._score(case, out)
                    seen[found] = f"F1 {f:.4f} (P {p:.4f}, R {r:.4f})"
                    shutil.rmtree(out)
                print(f"    alpha {alpha}: threshold {found}: {seen[found]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
