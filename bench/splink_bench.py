"""Benchmark `linkage dedupe` side by side with Splink (DuckDB backend) on the same person tables.

    python bench/splink_bench.py --rows 100000 1000000 [--rules bench/persons_fs.yaml]

For each size: generate the table (cached under bench/data/, as run_bench.py does), run the real
`linkage dedupe` CLI and then bench/splink_run.py in bench/.venv-splink, each as one child process
under _measure.py, and report wall time, peak RSS and pairwise F1 against the generator's truth
for both, with the ratios linkage/Splink. Results are printed and written to
bench/RESULTS_splink.md. Splink is never imported in the project venv: bench/.venv-splink is
created on first use with the pinned versions below.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import venv
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _versions import packages_line  # noqa: E402
from run_bench import (  # noqa: E402
    DEFAULT_RULES,
    ensure_data,
    machine_line,
    pairwise_f1,
    rules_label,
    rules_scorer,
    run_linkage,
)

SPLINK_VENV = HERE / ".venv-splink"
SPLINK_PYTHON = SPLINK_VENV / "bin" / "python"
# Splink 4 (the 4.x API of its tutorial); duckdb and sqlglot pinned too so reruns are repeatable.
SPLINK_PINS = ["splink==4.0.17", "duckdb==2.0.1", "sqlglot==30.31.0"]


def installed_versions() -> dict[str, str] | None:
    if not SPLINK_PYTHON.exists():
        return None
    probe = (
        "import importlib.metadata as m, json;"
        "print(json.dumps({p: m.version(p) for p in ('splink', 'duckdb', 'sqlglot')}))"
    )
    done = subprocess.run(
        [str(SPLINK_PYTHON), "-c", probe], capture_output=True, text=True, check=False
    )
    return json.loads(done.stdout) if done.returncode == 0 else None


def ensure_splink_venv() -> dict[str, str]:
    """Create bench/.venv-splink and install the pinned Splink there, unless already done."""
    wanted = dict(pin.split("==") for pin in SPLINK_PINS)
    versions = installed_versions()
    if versions != wanted:
        if not SPLINK_PYTHON.exists():
            print(f"creating {SPLINK_VENV}", flush=True)
            venv.create(SPLINK_VENV, with_pip=True)
        subprocess.run(
            [str(SPLINK_PYTHON), "-m", "pip", "install", "--quiet", *SPLINK_PINS], check=True
        )
        versions = installed_versions()
        if versions != wanted:
            raise SystemExit(f"{SPLINK_VENV}: wanted {wanted}, found {versions}")
    return versions


def run_splink(data: Path, out: Path, timeout: float) -> dict:
    """splink_run.py under _measure.py; on timeout the whole process group is killed."""
    out.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, str(HERE / "_measure.py"), str(SPLINK_PYTHON),
               str(HERE / "splink_run.py"), "--data", str(data),
               "--out-clusters", str(out / "clusters.parquet"),
               "--settings", str(HERE / "splink_settings.py")]
    log = out / "splink.log"
    with log.open("w", encoding="utf-8") as sink:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=sink, text=True,
                                 start_new_session=True)
        try:
            stdout, _ = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return {"error": f"timed out after {timeout:.0f} s (log: {log})"}
    if child.returncode != 0:
        return {"error": f"exit {child.returncode} (log: {log})"}
    measured = json.loads(stdout.strip().splitlines()[-1])
    measured.update(json.loads((out / "timings.json").read_text()))
    return measured


def scored(tool: str, rows: int, measured: dict, clusters_path: Path, truth: pd.DataFrame) -> dict:
    clusters = pd.read_parquet(clusters_path, columns=["rec_id", "cluster_id"])
    precision, recall, f1 = pairwise_f1(clusters, truth)
    return {
        "rows": rows,
        "tool": tool,
        "wall_s": round(measured["wall_s"], 1),
        "peak_rss_mib": round(measured["peak_rss_mib"]),
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--results", type=Path, default=HERE / "RESULTS_splink.md")
    parser.add_argument("--rules", type=Path, default=DEFAULT_RULES,
                        help="linkage rules file (default: bench/persons.yaml)")
    parser.add_argument("--splink-timeout", type=float, default=3600.0,
                        help="seconds one Splink run may take (default: 3600)")
    args = parser.parse_args(argv)

    versions = ensure_splink_venv()
    results = []
    for rows in args.rows:
        data, truth_path = ensure_data(rows, args.seed)
        truth = pd.read_parquet(truth_path)

        out = HERE / "data" / f"out_{rows}"
        linkage_row = scored("linkage", rows, run_linkage(data, out, args.rules),
                             out / "clusters.parquet", truth)
        linkage_row["pairs"] = json.loads((out / "summary.json").read_text())["stages"][
            "block"]["candidate_pairs"]
        linkage_row["stage_seconds"] = json.loads((out / "timings.json").read_text())["seconds"]
        print(json.dumps(linkage_row), flush=True)

        out = HERE / "data" / f"splink_{rows}"
        measured = run_splink(data, out, args.splink_timeout)
        if "error" in measured:
            splink_row = {"rows": rows, "tool": "splink", "error": measured["error"]}
        else:
            splink_row = scored("splink", rows, measured, out / "clusters.parquet", truth)
            splink_row["pairs"] = measured["predicted_pairs"]
            splink_row["stage_seconds"] = measured["seconds"]
        print(json.dumps(splink_row), flush=True)
        results.append((linkage_row, splink_row))
    write_results(args, versions, results)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "n/a"


def write_results(args: argparse.Namespace, versions: dict, results: list) -> None:
    command = "python bench/splink_bench.py --rows " + " ".join(map(str, args.rows))
    if args.rules.resolve() != DEFAULT_RULES:
        command += f" --rules {rules_label(args.rules)}"
    if args.results.resolve() != (HERE / "RESULTS_splink.md"):
        command += f" --results {rules_label(args.results)}"
    lines = [
        "## linkage vs Splink",
        "",
        f"Command: `{command}`, seed {args.seed}.",
        machine_line(),
        packages_line(),
        f"linkage rules: `{rules_label(args.rules)}` ({rules_scorer(args.rules)} scorer).",
        f"Splink {versions['splink']} (DuckDB {versions['duckdb']}, sqlglot "
        f"{versions['sqlglot']}) in `bench/.venv-splink`; model in `bench/splink_settings.py`: "
        "the Splink tutorial's person model (NameComparison for first_name and surname, "
        "DateOfBirthComparison, ExactMatch city with term frequencies, ExactMatch postcode, "
        "EmailComparison, ExactMatch phone), blocking on the same five keys as "
        "`bench/persons.yaml`, trained with estimate_probability_two_random_records_match "
        "(tutorial deterministic rules, recall 0.7), estimate_u_using_random_sampling "
        "(max_pairs 1e6, seed 42) and EM blocked on first_name+surname and on dob; predict at "
        "match probability 0.9, cluster at 0.95.",
        "Wall time and peak RSS are of one whole child process each (`linkage dedupe`; "
        "`bench/splink_run.py`: read, train, predict, cluster, write). F1 is pairwise against "
        "the generator's truth (`pairwise_f1` of run_bench.py). Pairs: linkage's candidate pairs; "
        "Splink's pairs predicted above 0.9.",
        "",
        "| rows | tool | wall (s) | peak RSS (MiB) | pairs | precision | recall | F1 |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for pair in results:
        for r in pair:
            if "error" in r:
                lines.append(f"| {r['rows']:,} | {r['tool']} | failed: {r['error']} "
                             "| | | | | |")
            else:
                lines.append(
                    f"| {r['rows']:,} | {r['tool']} | {r['wall_s']} | {r['peak_rss_mib']:,} "
                    f"| {r['pairs']:,} | {r['precision']} | {r['recall']} | {r['f1']} |"
                )
    lines += ["", "Ratios linkage / Splink (below 1: linkage faster or smaller):", "",
              "| rows | wall time | peak RSS |", "| ---: | ---: | ---: |"]
    for mine, theirs in results:
        if "error" not in theirs:
            lines.append(f"| {mine['rows']:,} | {ratio(mine['wall_s'], theirs['wall_s'])} "
                         f"| {ratio(mine['peak_rss_mib'], theirs['peak_rss_mib'])} |")
    lines += ["", "Seconds per stage:", ""]
    for pair in results:
        for r in pair:
            if "stage_seconds" in r:
                stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stage_seconds"].items())
                lines.append(f"- {r['rows']:,} rows, {r['tool']}: {stages}")
    text = "\n".join(lines) + "\n"
    args.results.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
