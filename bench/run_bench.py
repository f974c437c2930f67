"""Benchmark `linkage dedupe` alone on synthetic person tables with known truth.

    python bench/run_bench.py --rows 100000 1000000
    python bench/run_bench.py --rows 100000 1000000 --rules bench/persons_fs.yaml \
        --results bench/RESULTS_fs.md

For each size: generate the table (cached under bench/data/), run the real CLI in a child
process, and report wall time, peak RSS, candidate pairs per second and pairwise F1 against
the generator's truth. Results are printed and written to bench/RESULTS_linkage.md with the
command. bench/compare.py runs linkage with its peers (Splink, recordlinkage) and writes
bench/RESULTS.md; its helpers (data, F1, machine) live here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from _versions import packages_line  # noqa: E402


def ensure_data(rows: int, seed: int) -> tuple[Path, Path]:
    data = HERE / "data" / f"persons_{rows}_{seed}.parquet"
    truth = data.with_name(data.stem + "_truth.parquet")
    if not data.exists() or not truth.exists():
        subprocess.run(
            [sys.executable, str(HERE / "generate_persons.py"), "--rows", str(rows),
             "--seed", str(seed), "--out", str(data)],
            check=True,
        )
    return data, truth


def pairwise_f1(clusters: pd.DataFrame, truth: pd.DataFrame) -> tuple[float, float, float]:
    """Pairwise precision, recall and F1 of predicted clusters against true entities."""
    frame = clusters[["rec_id", "cluster_id"]].merge(truth, on="rec_id")

    def pair_count(keys: list[str]) -> int:
        sizes = frame.groupby(keys, sort=False).size().to_numpy()
        return int((sizes * (sizes - 1) // 2).sum())

    predicted = pair_count(["cluster_id"])
    actual = pair_count(["entity_id"])
    both = pair_count(["cluster_id", "entity_id"])
    precision = both / predicted if predicted else 0.0
    recall = both / actual if actual else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


DEFAULT_RULES = HERE / "persons.yaml"


def rules_label(rules: Path) -> str:
    """The rules file as written in results: relative to the repository when inside it."""
    rules = rules.resolve()
    return str(rules.relative_to(ROOT)) if rules.is_relative_to(ROOT) else str(rules)


def rules_scorer(rules: Path) -> str:
    """The scorer type named in a rules file (for the results' text)."""
    import yaml

    return str(yaml.safe_load(rules.read_text(encoding="utf-8"))["scoring"]["type"])


def run_linkage(data: Path, out: Path, rules: Path = DEFAULT_RULES) -> dict:
    command = [sys.executable, str(HERE / "_measure.py"), sys.executable, "-m", "linkage",
               "dedupe", str(data), "--rules", str(rules), "--out", str(out),
               "--no-progress"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"linkage failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--rules", type=Path, default=DEFAULT_RULES,
                        help="linkage rules file (default: bench/persons.yaml)")
    parser.add_argument("--results", type=Path, default=HERE / "RESULTS_linkage.md")
    args = parser.parse_args(argv)

    rows_out = []
    for rows in args.rows:
        data, truth_path = ensure_data(rows, args.seed)
        out = HERE / "data" / f"out_{rows}"
        measured = run_linkage(data, out, args.rules)
        summary = json.loads((out / "summary.json").read_text())
        pairs = summary["stages"]["block"]["candidate_pairs"]
        clusters = pd.read_parquet(out / "clusters.parquet", columns=["rec_id", "cluster_id"])
        precision, recall, f1 = pairwise_f1(clusters, pd.read_parquet(truth_path))
        row = {
            "rows": rows,
            "wall_s": round(measured["wall_s"], 1),
            "peak_rss_mib": round(measured["peak_rss_mib"]),
            "candidate_pairs": pairs,
            "pairs_per_s": round(pairs / measured["wall_s"]),
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(f1, 4),
            "stage_seconds": json.loads((out / "timings.json").read_text())["seconds"],
        }
        print(json.dumps(row), flush=True)
        rows_out.append(row)
    write_results(args, rows_out)


def machine_line() -> str:
    """The machine the figures were measured on, for every results file."""
    return (f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, {platform.system()}.")


def write_results(args: argparse.Namespace, rows: list[dict]) -> None:
    command = "python bench/run_bench.py --rows " + " ".join(map(str, args.rows))
    if args.rules.resolve() != DEFAULT_RULES:
        command += f" --rules {rules_label(args.rules)}"
    if args.results.resolve() != (HERE / "RESULTS_linkage.md"):
        command += f" --results {rules_label(args.results)}"
    lines = [
        "# Benchmark results",
        "",
        f"Command: `{command}` (or `make bench`), seed {args.seed}.",
        machine_line(),
        packages_line(),
        "Data: `bench/generate_persons.py` (synthetic persons with typos, missing fields and "
        f"swapped dates; truth kept apart). Rules: `{rules_label(args.rules)}` "
        f"({rules_scorer(args.rules)} scorer).",
        "Wall time and peak RSS are of the whole `linkage dedupe` process (read, normalize, "
        "block, compare, score, cluster, write).",
        "",
        "| rows | wall (s) | peak RSS (MiB) | candidate pairs | pairs/s "
        "| precision | recall | F1 |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['rows']:,} | {r['wall_s']} | {r['peak_rss_mib']:,} | {r['candidate_pairs']:,}"
            f" | {r['pairs_per_s']:,} | {r['precision']} | {r['recall']} | {r['f1']} |"
        )
    lines += ["", "Seconds per stage:", ""]
    for r in rows:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stage_seconds"].items())
        lines.append(f"- {r['rows']:,} rows: {stages}")
    args.results.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
