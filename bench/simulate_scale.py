"""Extrapolate candidate pairs, time, memory and Spark shuffle to 10M-1B records.

    python bench/simulate_scale.py                       # seconds: a 200k sample + fitted costs
    python bench/simulate_scale.py --rules bench/persons_fs.yaml --sizes 1e6 1e7
    python bench/simulate_scale.py --measure             # rerun the runs the costs come from

Pairs: a sample of the benchmark generator (`linkage.synth.persons`) is normalized and blocked
by linkage itself; per blocking key, and for the union of all keys, its candidate pairs split
into pairs of the same person (which grow like the table: duplicates are copies) and pairs of
different people that collide on the key (which grow like the number of record pairs, n^2 / 2,
since the generator's pools of names and dates do not grow). Extrapolation then needs no
assumption about the distributions beyond what the sample shows.

Costs: each stage's seconds and the peak RSS are fitted, by least squares, as
a + b * records + c * candidate pairs over measured `linkage dedupe` runs (MEASURED below, or
the runs of `--measure`, kept in bench/data/scale_measurements.json). Memory per record is the
slope b; the Spark figures are volumes in bytes (records and pairs shuffled by the blocking
joins and the comparison joins), not times. docs/SCALING.md explains the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

STAGES = ("read", "normalize", "block", "compare", "score", "cluster", "keep", "write")
MEASUREMENTS = HERE / "data" / "scale_measurements.json"
# Runs behind the default cost fit, when bench/data/scale_measurements.json (written by
# `--measure`) is absent: `python bench/simulate_scale.py --measure` on the 2-core development
# machine (x86_64, Python 3.11.7, load average about 1.5 from other work), chunks and row
# groups of 100,000.
# rules, records, candidate pairs, matched pairs, peak RSS MiB; then seconds per stage (STAGES)
_MEASURED_ROWS = [
    ("persons_scale.yaml", 100000, 29466, 27903, 331.0,
     0.100, 0.528, 0.178, 0.037, 0.276, 0.004, 0.356, 0.120),
    ("persons_scale.yaml", 300000, 97021, 84025, 438.5,
     0.739, 1.174, 0.285, 0.077, 0.257, 0.016, 0.911, 0.176),
    ("persons_scale.yaml", 1000000, 429291, 279966, 747.7,
     1.253, 4.398, 1.458, 0.441, 0.217, 0.064, 3.211, 0.379),
    ("persons_fs.yaml", 100000, 57514, 27903, 344.2,
     0.059, 0.317, 0.080, 0.049, 0.208, 0.003, 0.275, 0.107),
    ("persons_fs.yaml", 300000, 343148, 84025, 453.0,
     0.158, 1.305, 0.322, 0.256, 0.204, 0.011, 1.117, 0.198),
    ("persons_fs.yaml", 1000000, 3233996, 279966, 873.6,
     0.397, 4.051, 1.906, 2.122, 0.463, 0.106, 5.207, 0.606),
]
MEASURED = [
    {"rules": r[0], "records": r[1], "chunk_rows": 100_000, "candidate_pairs": r[2],
     "matched_pairs": r[3], "peak_rss_mib": r[4], "seconds": dict(zip(STAGES, r[5:], strict=True))}
    for r in _MEASURED_ROWS
]


# --------------------------------------------------------------------------- pairs


def sample_pairs(rules_path: Path, rows: int, seed: int) -> dict:
    """Per blocking key and for the union: same-person and different-person candidate pairs
    in a generated sample of `rows` records."""
    import pandas as pd

    from linkage.blocking import BlockingInput, KeyBlocker, block, blocker_names
    from linkage.pipeline import normalize_columns
    from linkage.settings import Rules
    from linkage.synth import persons

    records, truth = persons(rows, seed=seed)
    entity = truth["entity_id"].to_numpy()
    rules = Rules.from_yaml(rules_path)
    ids = records[rules.id_column] if rules.id_column else pd.Series(np.arange(rows))
    work, _ = normalize_columns(rules, records, ids)
    data = BlockingInput.encoded(work)
    keys = {}
    for name, blocker in zip(blocker_names(rules.blocking), rules.blocking, strict=True):
        if not isinstance(blocker, KeyBlocker):
            continue
        for parts in blocker._parts:
            codes = data.key_codes(parts)
            ok = codes >= 0
            label = f"{name}: [" + ", ".join(map(str, parts)) + "]"
            keys[label] = {"pairs": _pairs_in_groups(codes[ok]),
                           "same": _pairs_in_groups(codes[ok] * (entity.max() + 1)
                                                    + entity[ok])}
    pairs = block(rules.blocking, data, max_pairs=10**12, max_block_size=rules.max_block_size)
    same = int((entity[pairs.left] == entity[pairs.right]).sum())
    sizes = np.bincount(entity)
    return {"rows": rows, "keys": keys,
            "union": {"pairs": len(pairs), "same": same},
            "true_pairs": int((sizes * (sizes - 1) // 2).sum()),
            "row_bytes": _row_bytes(work, rules)}


def _pairs_in_groups(codes: np.ndarray) -> int:
    counts = np.unique(codes, return_counts=True)[1].astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def _row_bytes(work: dict, rules) -> float:
    """Average bytes of one record's compared values (UTF-8), as a Spark row would carry."""
    total = 0.0
    for column in {c.column for c in rules.comparisons}:
        encoded = work[column]
        lengths = np.array([len(u.encode()) for u in encoded.all_uniques()], dtype=np.float64)
        present = encoded.codes >= 0
        total += lengths[encoded.codes[present]].sum() / max(len(encoded.codes), 1) + 4
    return total


def extrapolate(sample: dict, n: float) -> dict:
    """Expected candidate pairs at `n` records: same-person pairs grow with n, pairs of
    different people with n(n-1)/2."""
    m = sample["rows"]
    grow, square = n / m, (n * (n - 1)) / (m * (m - 1))

    def at(found: dict) -> float:
        return found["same"] * grow + (found["pairs"] - found["same"]) * square

    return {"keys": {k: at(v) for k, v in sample["keys"].items()},
            "union": at(sample["union"]), "true_pairs": sample["true_pairs"] * grow}


# --------------------------------------------------------------------------- costs


def load_measured() -> list[dict]:
    if MEASUREMENTS.exists():
        return json.loads(MEASUREMENTS.read_text(encoding="utf-8"))
    return list(MEASURED)


def fit(runs: list[dict], value) -> np.ndarray:
    """Least squares of value(run) on [1, records, candidate pairs], slopes kept >= 0."""
    x = np.array([[1.0, r["records"], r["candidate_pairs"]] for r in runs])
    y = np.array([value(r) for r in runs], dtype=np.float64)
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    if coef[2] < 0:  # pairs explain nothing here: refit on records alone
        coef = np.append(np.linalg.lstsq(x[:, :2], y, rcond=None)[0], 0.0)
    if coef[1] < 0:
        coef = np.array([coef[0], 0.0, np.linalg.lstsq(x[:, [0, 2]], y, rcond=None)[0][1]])
    return coef


# The Parquet writers hold one row group before writing it: with the default 1,048,576-row
# groups that is up to a million rows of one output at a time, a constant of big runs that
# the measured runs (100,000-row groups, so that their slopes are the per-record costs) leave
# out. Measured: 1M records in chunks of 100,000, default row groups against 100,000-row ones.
ROW_GROUP_BUFFER_MIB = 400


def measure(rows_list: list[int], rules: list[Path], seed: int) -> list[dict]:
    """Run `linkage dedupe` in chunks of 100,000 (as big runs go), with 100,000-row groups,
    and keep the figures."""
    from run_bench import ensure_data

    runs = []
    for rules_path in rules:
        for rows in rows_list:
            data, _ = ensure_data(rows, seed)
            out = HERE / "data" / f"scale_{rules_path.stem}_{rows}"
            done = subprocess.run(
                [sys.executable, str(HERE / "_measure.py"), sys.executable, "-m", "linkage",
                 "dedupe", str(data), "--rules", str(rules_path), "--out", str(out),
                 "--no-progress"], capture_output=True, text=True, cwd=ROOT, check=True,
                env={**os.environ, "LINKAGE_CHUNK_ROWS": "100000",
                     "LINKAGE_ROW_GROUP_ROWS": "100000"})
            measured = json.loads(done.stdout.strip().splitlines()[-1])
            summary = json.loads((out / "summary.json").read_text())
            runs.append({
                "rules": rules_path.name, "records": rows, "chunk_rows": 100_000,
                "candidate_pairs": summary["stages"]["block"]["candidate_pairs"],
                "matched_pairs": _matched(summary),
                "peak_rss_mib": round(measured["peak_rss_mib"], 1),
                "wall_s": round(measured["wall_s"], 2),
                "seconds": json.loads((out / "timings.json").read_text())["seconds"]})
            print(json.dumps(runs[-1]), flush=True)
    MEASUREMENTS.parent.mkdir(parents=True, exist_ok=True)
    MEASUREMENTS.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    return runs


# --------------------------------------------------------------------------- report


def human(x: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= size:
            return f"{x / size:.1f}{unit}"
    return f"{x:.0f}"


def report(sample: dict, runs: list[dict], sizes: list[float], rules: Path) -> str:
    lines = [f"Pairs per blocking key ({rules.name}; sample of {sample['rows']:,} generated "
             "records, extrapolated):", ""]
    head = "| key | " + " | ".join(human(n) for n in sizes) + " |"
    lines += [head, "|---" * (len(sizes) + 1) + "|"]
    table = {n: extrapolate(sample, n) for n in sizes}
    for key in sample["keys"]:
        lines.append(f"| {key} | " + " | ".join(human(table[n]["keys"][key]) for n in sizes)
                     + " |")
    lines.append("| **candidate pairs (union)** | "
                 + " | ".join(human(table[n]["union"]) for n in sizes) + " |")
    lines.append("| true duplicate pairs | "
                 + " | ".join(human(table[n]["true_pairs"]) for n in sizes) + " |")
    if not runs:
        return "\n".join([*lines, "", "(no measured runs: `--measure` first)"])
    costs = {stage: fit(runs, lambda r, s=stage: r["seconds"].get(s, 0.0)) for stage in STAGES}
    memory = fit(runs, lambda r: r["peak_rss_mib"])
    lines += ["", f"Cost model, fitted on {len(runs)} measured runs "
              "(a + b * records + c * candidate pairs):", "",
              "| stage | a (s) | b (us / record) | c (us / pair) |", "|---|---:|---:|---:|"]
    for stage, (a, b, c) in costs.items():
        lines.append(f"| {stage} | {a:.2f} | {b * 1e6:.2f} | {c * 1e6:.2f} |")
    lines.append(f"| peak RSS | {memory[0]:.0f} MiB | {memory[1] * 2**20:.0f} B / record "
                 f"| {memory[2] * 2**20:.0f} B / pair |")
    lines += ["", "Extrapolated, one machine like the measured one (local engine, in chunks; "
              f"peak RSS with {ROW_GROUP_BUFFER_MIB} MiB added for the default row groups):",
              "", "| records | candidate pairs | time (min) | peak RSS (GiB) "
              "| clustering (s) |", "|---:|---:|---:|---:|---:|"]
    # Connected components cost per node and edge: records plus matched pairs.
    cluster_rate = float(np.median([r["seconds"].get("cluster", 0.0)
                                    / (r["records"] + r["matched_pairs"]) for r in runs]))
    for n in sizes:
        pairs = table[n]["union"]
        seconds = sum(a + b * n + c * pairs for a, b, c in costs.values())
        rss = (memory[0] + memory[1] * n + memory[2] * pairs + ROW_GROUP_BUFFER_MIB) / 1024
        clustering = cluster_rate * (n + 1.05 * table[n]["true_pairs"])
        lines.append(f"| {human(n)} | {human(pairs)} | {seconds / 60:.1f} | {rss:.1f} "
                     f"| {clustering:.1f} |")
    row = sample["row_bytes"]
    lines += ["", f"Spark shuffle (volumes; {row:.0f} bytes of compared values per record, "
              "16 per pair id, 8 per key code):", "",
              "| records | blocking joins | pairs to both records | clustering (per round) |",
              "|---:|---:|---:|---:|"]
    keys = len(sample["keys"])
    for n in sizes:
        pairs = table[n]["union"]
        matched = table[n]["true_pairs"] * 1.05
        lines.append(f"| {human(n)} | {human(n * keys * 24)}B | {human(pairs * (16 + 2 * row))}B "
                     f"| {human(matched * 16)}B |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=Path, default=HERE / "persons_scale.yaml")
    parser.add_argument("--sample", type=int, default=200_000, help="generated sample rows")
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7, 1e8, 1e9])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--measure", action="store_true",
                        help="rerun the measured runs (100k, 300k and 1M records, both person "
                             "rules files) before fitting")
    args = parser.parse_args(argv)
    runs = (measure([100_000, 300_000, 1_000_000],
                    [HERE / "persons_scale.yaml", HERE / "persons_fs.yaml"], args.seed)
            if args.measure else load_measured())
    sample = sample_pairs(args.rules, args.sample, args.seed)
    print(report(sample, runs, [float(n) for n in args.sizes], args.rules))
    print(f"\n(sample: {sample['rows']:,} records, {sample['union']['pairs']:,} candidate "
          f"pairs, {sample['union']['same']:,} of them the same person)")


def _matched(summary: dict) -> int:
    """Matched pairs, stage matches (exact, copies) included; older summaries lack the key."""
    score = summary["stages"]["score"]
    return score.get("matched_pairs", score["pairs_at_or_above_threshold"])


if __name__ == "__main__":
    main()
