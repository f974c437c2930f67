"""One Spark run of `linkage dedupe` at scale, beside the local engine's run of the same rules:
time, peak memory of the Python driver and of the JVM, and the pairwise F1 of the Spark
clusters against the local engine's (and of each against the truth, when given).

    nice -n 10 .venv/bin/python bench/spark_scale.py bench/data/persons_1m.parquet \\
        --rules rules.yaml --out /tmp/scale --truth bench/data/persons_1m_truth.parquet

The memory is sampled every 0.2 s from /proc (VmRSS of the CLI's Python process, and of the
java process it starts), so a peak shorter than that can be missed. Linux only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            out += [int(c) for c in (task / "children").read_text().split()]
    return out


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += _children(p)
    return found


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return ""


def run(command: list[str], env: dict) -> dict:
    """Run `command`, sampling the memory of it (Python) and of its java descendants."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    python_peak = java_peak = workers_peak = 0
    while process.poll() is None:
        python_peak = max(python_peak, _rss(process.pid))
        java = workers = 0
        for pid in _tree(process.pid)[1:]:
            name = _command(pid)
            if "java" in name.split(" ")[0]:
                java += _rss(pid)
            elif "python" in name.split(" ")[0]:
                workers += _rss(pid)
        java_peak, workers_peak = max(java_peak, java), max(workers_peak, workers)
        time.sleep(0.2)
    output = process.stdout.read()
    return {"seconds": round(time.perf_counter() - start, 1), "exit": process.returncode,
            "python_driver_peak_rss_mib": round(python_peak / 2**20),
            "jvm_peak_rss_mib": round(java_peak / 2**20),
            "python_workers_peak_rss_mib": round(workers_peak / 2**20),
            "output_tail": output[-3000:]}


def pairs_in_clusters(clusters: pd.DataFrame, id_name: str) -> set:
    """Every unordered pair of ids that share a cluster."""
    frame = clusters[[id_name, "cluster_id"]]
    several = frame[frame.groupby("cluster_id")["cluster_id"].transform("size") > 1]
    merged = several.merge(several, on="cluster_id")
    merged = merged[merged[f"{id_name}_x"] < merged[f"{id_name}_y"]]
    return set(zip(merged[f"{id_name}_x"], merged[f"{id_name}_y"], strict=True))


def f1(found: set, truth: set) -> dict:
    hit = len(found & truth)
    precision = hit / len(found) if found else 1.0
    recall = hit / len(truth) if truth else 1.0
    score = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 6), "recall": round(recall, 6), "f1": round(score, 6)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("--rules", required=True)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--truth", default=None)
    parser.add_argument("--skip-local", action="store_true")
    args = parser.parse_args(argv)
    env = {**os.environ}
    load = os.getloadavg()
    results = {"input": args.input, "rules": args.rules, "load_before": [round(x, 2) for x in load]}
    base = [sys.executable, "-m", "linkage", "dedupe", args.input, "--rules", args.rules,
            "--no-progress"]
    spark_out, local_out = args.out / "spark", args.out / "local"
    results["spark"] = run([*base, "--out", str(spark_out), "--engine", "spark",
                            "--spark-master", args.master], env)
    results["load_after_spark"] = [round(x, 2) for x in os.getloadavg()]
    if not args.skip_local:
        results["local"] = run([*base, "--out", str(local_out)], env)
    summary = json.loads((spark_out / "summary.json").read_text()) \
        if (spark_out / "summary.json").exists() else {}
    id_name = summary.get("id_column", "rec_id")
    if results["spark"]["exit"] == 0 and not args.skip_local and results["local"]["exit"] == 0:
        spark_pairs = pairs_in_clusters(pd.read_parquet(spark_out / "clusters.parquet"), id_name)
        local_pairs = pairs_in_clusters(pd.read_parquet(local_out / "clusters.parquet"), id_name)
        results["spark_vs_local"] = f1(spark_pairs, local_pairs)
        if args.truth:
            truth = pd.read_parquet(args.truth)
            column = "entity_id" if "entity_id" in truth.columns else truth.columns[1]
            truth = truth.rename(columns={column: "cluster_id"})
            true_pairs = pairs_in_clusters(truth, id_name)
            results["spark_vs_truth"] = f1(spark_pairs, true_pairs)
            results["local_vs_truth"] = f1(local_pairs, true_pairs)
        results["spark_summary"] = {k: summary.get(k) for k in ("actions", "spark")}
        results["candidate_pairs"] = summary["stages"]["block"]["candidate_pairs"]
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
