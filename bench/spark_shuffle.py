"""What each stage of a distributed Spark run moves and holds, per input record, at several
sizes: the figures docs/SCALING.md extrapolates to 100M persons and 1B documents.

    python bench/spark_shuffle.py bench/data/persons_100k.parquet bench/data/persons_300k.parquet \
        --rules bench/persons_scale.yaml --work /tmp/shuffle

runs `linkage dedupe INPUT --engine spark` on each input on the distributed route
(LINKAGE_SPARK_DRIVER_ROWS=0) with Spark's event log on (a spark-defaults.conf in a
SPARK_CONF_DIR of its own: linkage's settings are otherwise its defaults), then reads the
event log. linkage names every Spark job by the stage that ran it (`linkage: block`, ...), so
each task's metrics add up under its linkage stage: shuffle bytes written and read, bytes read
from and written to files, bytes spilled, the largest peak execution memory of one task, and
task seconds. Prints one Markdown table per input and the bytes per record of each stage, and
writes them all as JSON (`--json`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]

METRICS = ("shuffle_write", "shuffle_read", "input", "output", "spilled_memory", "spilled_disk",
           "task_seconds")


def _conf_dir(work: Path, events: Path) -> Path:
    conf = work / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    events.mkdir(parents=True, exist_ok=True)
    (conf / "spark-defaults.conf").write_text(
        "spark.eventLog.enabled true\n"
        f"spark.eventLog.dir file://{events}\n"
        "spark.eventLog.compress false\n")
    return conf


def run(source: str, rules: str, work: Path, master: str) -> dict:
    """One distributed run of `source`, its wall time and its stages' metrics."""
    name = Path(source).stem
    events = work / f"events_{name}"
    out = work / f"out_{name}"
    env = {**os.environ, "LINKAGE_SPARK_DRIVER_ROWS": "0",
           "SPARK_CONF_DIR": str(_conf_dir(work / name, events)),
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = [sys.executable, "-m", "linkage", "dedupe", source, "--rules", rules, "--out",
               str(out), "--engine", "spark", "--spark-master", master, "--no-progress"]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    logs = sorted(events.iterdir(), key=lambda p: p.stat().st_mtime)
    summary = json.loads((out / "summary.json").read_text())
    return {"input": source, "records": pq.ParquetFile(source).metadata.num_rows,
            "input_bytes": Path(source).stat().st_size, "wall_s": round(wall, 1),
            "load": [round(load, 2), round(os.getloadavg()[0], 2)],
            "timings": json.loads((out / "timings.json").read_text())["seconds"],
            "candidate_pairs": summary["stages"]["block"]["candidate_pairs"],
            "stages": stage_metrics(logs[-1])}


def stage_metrics(log: Path) -> dict[str, dict[str, float]]:
    """The event log's task metrics added up by the linkage stage whose job ran them."""
    stage_of: dict[int, str] = {}
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    # Spark 4 writes a folder of rolled files (events_1_..., events_2_...); Spark 3 one file.
    files = (sorted(log.glob("events_*"), key=lambda p: int(p.name.split("_")[1]))
             if log.is_dir() else [log])
    for path in files:
        for line in path.open():
            event = json.loads(line)
            kind = event.get("Event")
            if kind == "SparkListenerJobStart":
                description = (event.get("Properties") or {}).get("spark.job.description") or ""
                stage = description.removeprefix("linkage: ") if description else "(unnamed)"
                for stage_id in event.get("Stage IDs", []):
                    stage_of.setdefault(stage_id, stage)
            elif kind == "SparkListenerTaskEnd":
                metrics = event.get("Task Metrics") or {}
                info = event.get("Task Info") or {}
                into = totals[stage_of.get(event["Stage ID"], "(unnamed)")]
                write = metrics.get("Shuffle Write Metrics") or {}
                read = metrics.get("Shuffle Read Metrics") or {}
                into["shuffle_write"] += write.get("Shuffle Bytes Written", 0)
                into["shuffle_read"] += (read.get("Remote Bytes Read", 0)
                                         + read.get("Local Bytes Read", 0))
                into["input"] += (metrics.get("Input Metrics") or {}).get("Bytes Read", 0)
                into["output"] += (metrics.get("Output Metrics") or {}).get("Bytes Written", 0)
                into["spilled_memory"] += metrics.get("Memory Bytes Spilled", 0)
                into["spilled_disk"] += metrics.get("Disk Bytes Spilled", 0)
                into["task_seconds"] += (info.get("Finish Time", 0)
                                         - info.get("Launch Time", 0)) / 1000
                into["peak_task_memory"] = max(into["peak_task_memory"],
                                               metrics.get("Peak Execution Memory", 0))
    return {stage: dict(values) for stage, values in totals.items()}


def _mib(value: float) -> str:
    return f"{value / 2**20:,.1f}"


def table(result: dict) -> str:
    n = result["records"]
    rows = [f"{result['input']}: {n:,} records, {result['candidate_pairs']:,} candidate pairs, "
            f"wall {result['wall_s']} s (load {result['load'][0]} at the start, "
            f"{result['load'][1]} at the end)", "",
            "| stage | seconds | task s | shuffle written (MiB) | shuffle read (MiB) | "
            "files read (MiB) | files written (MiB) | spilled to disk (MiB) | "
            "largest task's peak memory (MiB) | shuffle bytes / record |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for stage, m in result["stages"].items():
        rows.append(
            f"| {stage} | {result['timings'].get(stage, '')} | {m['task_seconds']:.1f} | "
            f"{_mib(m['shuffle_write'])} | {_mib(m['shuffle_read'])} | {_mib(m['input'])} | "
            f"{_mib(m['output'])} | {_mib(m['spilled_disk'])} | "
            f"{_mib(m['peak_task_memory'])} | {m['shuffle_write'] / n:,.0f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", help="Parquet inputs, smallest first")
    parser.add_argument("--rules", required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    results = [run(source, args.rules, args.work.resolve(), args.master)
               for source in args.inputs]
    for result in results:
        print(table(result), end="\n\n")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
