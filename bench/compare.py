"""Benchmark linkage, Splink (DuckDB) and recordlinkage side by side, on the same data, in one run.

    python bench/compare.py --rows 100000 1000000                 # + FEBRL3, all three tools
    python bench/compare.py --rows 100000 1000000 10000000 --timeout 3600   # the full table

For each synthetic person table (bench/generate_persons.py, cached under bench/data/) and for
FEBRL dataset3, each tool runs as one child process under _measure.py (wall time and peak RSS
of that process): the real `linkage dedupe` CLI; bench/splink_run.py in bench/.venv-splink;
bench/recordlinkage_run.py in bench/.venv-recordlinkage. Each peer's environment is created by
this script on first use, with pinned versions. Clusters are scored pairwise against the truth
(the generator's entity ids; FEBRL's rec-N-...), and bench/RESULTS.md is written with the
command, the machine, the table, the ratios to linkage and the seconds per stage. A tool that
fails or passes `--timeout` is written down as such.

Rules: bench/persons_fs.yaml up to 1M records and bench/persons_scale.yaml above (its
[first_name, surname] key also needs the birth year: alone it grows with the square of the
table); Splink gets the same blocking (bench/splink_settings.py / splink_settings_scale.py),
recordlinkage the same keys and comparisons, read from the linkage rules. FEBRL3:
bench/febrl_fs.yaml (rules/febrl.yaml scored by unsupervised
Fellegi-Sunter), bench/splink_settings_febrl.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import venv
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _versions import packages_line  # noqa: E402
from run_bench import ensure_data, machine_line, pairwise_f1, rules_label  # noqa: E402

TOOLS = ("linkage", "splink", "recordlinkage")
SCALE_ABOVE = 1_000_000  # above this many records, the scalable rules
FEBRL3 = ROOT.parent / "shared" / "datasets" / "febrl" / "dataset3.csv"

# Each peer in its own environment, pinned so that reruns are repeatable.
PEERS = {
    "splink": {"venv": HERE / ".venv-splink",
               "pins": ["splink==4.0.17", "duckdb==2.0.1", "sqlglot==30.31.0"],
               "versions": ("splink", "duckdb", "sqlglot")},
    "recordlinkage": {"venv": HERE / ".venv-recordlinkage",
                      "pins": ["recordlinkage==0.16", "pandas==2.3.3", "pyarrow==26.0.1"],
                      "versions": ("recordlinkage", "pandas", "pyarrow")},
}


@dataclass
class Dataset:
    name: str
    rows: int
    data: Path
    truth: pd.DataFrame
    rules: Path
    splink_settings: Path
    results: list = field(default_factory=list)


# --------------------------------------------------------------------------- environments


def peer_python(tool: str) -> Path:
    return PEERS[tool]["venv"] / "bin" / "python"


def installed_versions(tool: str) -> dict[str, str] | None:
    python = peer_python(tool)
    if not python.exists():
        return None
    names = PEERS[tool]["versions"]
    probe = ("import importlib.metadata as m, json;"
             f"print(json.dumps({{p: m.version(p) for p in {names!r}}}))")
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True,
                          check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def ensure_venv(tool: str) -> dict[str, str]:
    """Create the peer's environment and install its pinned packages, unless already done."""
    pins = PEERS[tool]["pins"]
    wanted = {p.split("==")[0]: p.split("==")[1] for p in pins}
    versions = installed_versions(tool)
    if versions is None or any(versions.get(k) != v for k, v in wanted.items()):
        if not peer_python(tool).exists():
            print(f"creating {PEERS[tool]['venv']}", flush=True)
            venv.create(PEERS[tool]["venv"], with_pip=True)
        subprocess.run([str(peer_python(tool)), "-m", "pip", "install", "--quiet", *pins],
                       check=True)
        versions = installed_versions(tool)
        if versions is None or any(versions.get(k) != v for k, v in wanted.items()):
            raise SystemExit(f"{PEERS[tool]['venv']}: wanted {wanted}, found {versions}")
    return versions


# --------------------------------------------------------------------------- data


def persons(rows: int, seed: int, rules: Path | None) -> Dataset:
    data, truth = ensure_data(rows, seed)
    scale = rows > SCALE_ABOVE
    return Dataset(
        name="persons", rows=rows, data=data, truth=pd.read_parquet(truth),
        rules=rules or HERE / ("persons_scale.yaml" if scale else "persons_fs.yaml"),
        splink_settings=HERE / ("splink_settings_scale.py" if scale else "splink_settings.py"),
    )


def febrl3() -> Dataset:
    """FEBRL dataset3 as Parquet (text columns, as `linkage` reads the CSV); the truth from its
    ids (rec-N-org / rec-N-dup-k: same N, same person), kept apart."""
    data = HERE / "data" / "febrl3.parquet"
    frame = pd.read_csv(FEBRL3, dtype=str, keep_default_na=False, na_values=[""],
                        skipinitialspace=True)
    frame.columns = [c.strip() for c in frame.columns]
    if not data.exists():
        data.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(data, index=False)
    truth = pd.DataFrame({"rec_id": frame["rec_id"],
                          "entity_id": frame["rec_id"].str.split("-").str[1].astype(int)})
    return Dataset(name="febrl3", rows=len(frame), data=data, truth=truth,
                   rules=HERE / "febrl_fs.yaml",
                   splink_settings=HERE / "splink_settings_febrl.py")


# --------------------------------------------------------------------------- tools

CLEANED = {"name", "text", "company", "email", "postcode", "phone"}
STRING_METHODS = {"jaro_winkler": "jarowinkler", "levenshtein": "levenshtein",
                  "damerau_levenshtein": "damerau_levenshtein", "token_sort": "levenshtein"}


def recordlinkage_spec(rules_path: Path) -> dict:
    """What recordlinkage_run.py needs, read from linkage rules: the same blocking keys and
    comparisons (string similarity as one agreement at 0.85, everything else exact)."""
    rules = yaml.safe_load(rules_path.read_text(encoding="utf-8"))
    spec = {"id": rules.get("id_column") or "rec_id",
            "clean": sorted({n["column"] for n in rules.get("normalize", [])
                             if n["type"] in CLEANED}),
            "blocks": [], "sorted": [], "compare": []}
    for blocker in rules["blocking"]:
        if blocker.get("type", "keys") == "keys":
            spec["blocks"] += [[k] if isinstance(k, str) else list(k) for k in blocker["keys"]]
        elif blocker["type"] == "sorted_neighbourhood":
            key = blocker["sort_key"]
            # linkage pairs each record with the next window - 1; recordlinkage's (odd)
            # window reaches (window - 1) / 2 either side: the same pairs at 2 * window - 1.
            spec["sorted"].append({"key": [key] if isinstance(key, str) else list(key),
                                   "window": 2 * blocker.get("window", 5) - 1})
    for comparison in rules["comparisons"]:
        if comparison["type"] in STRING_METHODS:
            spec["compare"].append({"type": "string", "column": comparison["column"],
                                    "method": STRING_METHODS[comparison["type"]],
                                    "threshold": 0.85})
        else:
            spec["compare"].append({"type": "exact", "column": comparison["column"]})
    return spec


def measured_child(command: list[str], log: Path, timeout: float,
                   env: dict | None = None) -> dict:
    """One command under _measure.py; on timeout its whole process group is killed."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as sink:
        child = subprocess.Popen([sys.executable, str(HERE / "_measure.py"), *command],
                                 stdout=subprocess.PIPE, stderr=sink, text=True,
                                 start_new_session=True, cwd=ROOT,
                                 env={**os.environ, **(env or {})})
        try:
            stdout, _ = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return {"error": f"stopped after the {timeout:.0f} s timeout"}
    measured = json.loads(stdout.strip().splitlines()[-1])
    if measured["returncode"] != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
        return {"error": f"exit {measured['returncode']}: {' '.join(tail)[:200]}"}
    return measured


def run_linkage(ds: Dataset, out: Path, timeout: float) -> dict:
    measured = measured_child(
        [sys.executable, "-m", "linkage", "dedupe", str(ds.data), "--rules", str(ds.rules),
         "--out", str(out), "--no-progress"], out.with_suffix(".log"), timeout)
    if "error" in measured:
        return measured
    summary = json.loads((out / "summary.json").read_text())
    measured.update(
        candidate_pairs=summary["stages"]["block"]["candidate_pairs"],
        matched_pairs=_matched(summary),
        seconds=json.loads((out / "timings.json").read_text())["seconds"],
        clusters=out / "clusters.parquet",
        physical=physical_reference(ds, out, timeout))
    return measured


def physical_reference(ds: Dataset, out: Path, timeout: float) -> dict | None:
    """The time to read the input and write linkage's output tables alone
    (`bench/physical_io.py`): how close the run is to the I/O any tool must do."""
    scratch = out.with_name(out.name + "_physical")
    done = subprocess.run(
        [sys.executable, str(HERE / "physical_io.py"), "--data", str(ds.data), "--outputs",
         str(out), "--out", str(scratch)], capture_output=True, text=True, cwd=ROOT,
        timeout=timeout, check=False)
    if done.returncode != 0:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


SPLINK_MEMORY_LIMIT = "18GB"  # DuckDB spills above it rather than outgrow a 24 GB machine
RECORDLINKAGE_MAX_ROWS = 2_000_000  # its pandas index held 2.6 GB at 1M records: ~26 GB at 10M


def run_splink(ds: Dataset, out: Path, timeout: float) -> dict:
    measured = measured_child(
        [str(peer_python("splink")), str(HERE / "splink_run.py"), "--data", str(ds.data),
         "--out-clusters", str(out / "clusters.parquet"), "--settings",
         str(ds.splink_settings), "--memory-limit", SPLINK_MEMORY_LIMIT],
        out.with_suffix(".log"), timeout)
    if "error" in measured:
        return measured
    facts = json.loads((out / "timings.json").read_text())
    measured.update(candidate_pairs=None, matched_pairs=facts["predicted_pairs"],
                    seconds=facts["seconds"], clusters=out / "clusters.parquet")
    return measured


def run_recordlinkage(ds: Dataset, out: Path, timeout: float) -> dict:
    if ds.rows > RECORDLINKAGE_MAX_ROWS:
        return {"error": f"not run above {RECORDLINKAGE_MAX_ROWS:,} records: its pandas index "
                         "and features held 2.6 GB at 1M records (measured), so about 26 GB "
                         "here, more than a 24 GB machine has"}
    out.mkdir(parents=True, exist_ok=True)
    spec = out / "spec.json"
    spec.write_text(json.dumps(recordlinkage_spec(ds.rules), indent=2), encoding="utf-8")
    measured = measured_child(
        [str(peer_python("recordlinkage")), str(HERE / "recordlinkage_run.py"), "--data",
         str(ds.data), "--spec", str(spec), "--out-clusters", str(out / "clusters.parquet")],
        out.with_suffix(".log"), timeout)
    if "error" in measured:
        return measured
    facts = json.loads((out / "timings.json").read_text())
    measured.update(candidate_pairs=facts["candidate_pairs"],
                    matched_pairs=facts["predicted_pairs"], seconds=facts["seconds"],
                    clusters=out / "clusters.parquet")
    return measured


RUNNERS = {"linkage": run_linkage, "splink": run_splink, "recordlinkage": run_recordlinkage}


def scored(ds: Dataset, tool: str, measured: dict) -> dict:
    row = {"data": ds.name, "rows": ds.rows, "tool": tool}
    if "error" in measured:
        return {**row, "error": measured["error"]}
    clusters = pd.read_parquet(measured["clusters"], columns=["rec_id", "cluster_id"])
    clusters["rec_id"] = clusters["rec_id"].astype(str)
    precision, recall, f1 = pairwise_f1(clusters, ds.truth.astype({"rec_id": str}))
    return {**row, "wall_s": round(measured["wall_s"], 1),
            "peak_rss_mib": round(measured["peak_rss_mib"]),
            "candidate_pairs": measured["candidate_pairs"],
            "matched_pairs": measured["matched_pairs"],
            "precision": round(precision, 6), "recall": round(recall, 6), "f1": round(f1, 6),
            "stage_seconds": measured["seconds"], "physical": measured.get("physical")}


# --------------------------------------------------------------------------- results


def command_line(args: argparse.Namespace) -> str:
    parts = ["python bench/compare.py", "--rows", *map(str, args.rows)]
    if not args.febrl:
        parts.append("--no-febrl")
    if list(args.tools) != list(TOOLS):
        parts += ["--tools", *args.tools]
    if args.rules is not None:
        parts += ["--rules", rules_label(args.rules)]
    if args.timeout != 3600:
        parts += ["--timeout", f"{args.timeout:g}"]
    if args.results.resolve() != (HERE / "RESULTS.md"):
        parts += ["--results", rules_label(args.results)]
    return " ".join(parts)


def memory_line() -> str:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            kib = int(next(line for line in handle if line.startswith("MemTotal")).split()[1])
        return f"{kib / 2**20:.1f} GiB memory{_huge_pages()}"
    except (OSError, StopIteration, ValueError):
        return "memory unknown"


def _huge_pages() -> str:
    """The kernel's transparent huge page settings, which decide whether a page fault may stall
    in compaction (bench/RESULTS_10M.md, stop 33): " (transparent huge pages: enabled X,
    defrag Y)", or "" where the kernel does not say."""
    chosen = {}
    for knob in ("enabled", "defrag"):
        try:
            text = Path(f"/sys/kernel/mm/transparent_hugepage/{knob}").read_text(
                encoding="ascii")
        except OSError:
            return ""
        words = [w[1:-1] for w in text.split() if w.startswith("[") and w.endswith("]")]
        chosen[knob] = words[0] if words else text.strip()
    return (f" (transparent huge pages: enabled {chosen['enabled']}, defrag "
            f"{chosen['defrag']})")


def cell(value) -> str:
    if value is None:
        return "—"
    return f"{value:,}" if isinstance(value, int) else str(value)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "n/a"


def targets(rows: list[dict]) -> list[str]:
    """The issue's targets, checked against this run's figures."""
    found = {(r["data"], r["rows"], r["tool"]): r for r in rows if "error" not in r}
    lines = []
    mine, theirs = found.get(("persons", 1_000_000, "linkage")), found.get(
        ("persons", 1_000_000, "splink"))
    if mine and theirs:
        speed = theirs["wall_s"] / mine["wall_s"]
        lines.append(
            f"- 1M persons, linkage against Splink: {speed:.1f}x faster (target at least 3x), "
            f"F1 {mine['f1']} against {theirs['f1']} (target at least Splink's), peak RSS "
            f"{mine['peak_rss_mib'] / theirs['peak_rss_mib']:.2f} of Splink's (target at most "
            "0.5).")
    big = found.get(("persons", 10_000_000, "linkage"))
    if big:
        lines.append(
            f"- 10M persons, linkage end to end: {big['wall_s'] / 60:.1f} min (target at most "
            f"15 min on 2 cores), peak RSS {big['peak_rss_mib'] / 1024:.1f} GiB (target: fits "
            "in 24 GB).")
    return lines


def write_results(args: argparse.Namespace, versions: dict, datasets: list[Dataset]) -> str:
    rows = [r for ds in datasets for r in ds.results]
    peers = "; ".join(
        ", ".join(f"{k} {v}" for k, v in found.items())
        + f" in `{PEERS[tool]['venv'].relative_to(ROOT)}`"
        for tool, found in versions.items())
    lines = [
        "# Benchmark results: linkage, Splink and recordlinkage",
        "",
        f"Command: `{command_line(args)}`, seed {args.seed}.",
        machine_line().rstrip(".") + f", {memory_line()}; load average (1 min) "
        f"{args.load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end: other work "
        "on the machine slows every tool alike.",
        f"Peers: {peers or 'none'}.",
        packages_line(),
        "",
        "Each tool runs as one child process (`bench/_measure.py`: wall time and peak RSS of "
        "the whole process, from reading the input to writing the clusters; Splink's DuckDB "
        f"with memory_limit {SPLINK_MEMORY_LIMIT}, spilling to disk above it). F1 is pairwise "
        "over the clusters against the truth (the generator's entity ids; FEBRL's "
        "rec-N-...), which the tools never see. Candidate pairs: the pairs a tool compared "
        "(Splink does not report it: —). Matched pairs: linkage's pairs at or above its "
        "threshold, Splink's predicted at match probability 0.9, recordlinkage's ECM matches.",
        "",
        "Rules per table: "
        + "; ".join(f"{ds.name} {ds.rows:,}: linkage `{rules_label(ds.rules)}`, Splink "
                    f"`{rules_label(ds.splink_settings)}`" for ds in datasets) + ". "
        "recordlinkage 0.16 gets the linkage rules' blocking keys and comparisons "
        "(`bench/compare.py: recordlinkage_spec`): Block and SortedNeighbourhood indexes, "
        "string similarity as one agreement at 0.85, the rest exact, classified by its "
        "unsupervised ECMClassifier.",
        "",
        "| data | rows | tool | wall (s) | peak RSS (MiB) | candidate pairs | matched pairs "
        "| precision | recall | F1 |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['data']} | {r['rows']:,} | {r['tool']} | {r['error']} "
                         "| | | | | | |")
        else:
            lines.append(
                f"| {r['data']} | {r['rows']:,} | {r['tool']} | {r['wall_s']} "
                f"| {r['peak_rss_mib']:,} | {cell(r['candidate_pairs'])} "
                f"| {cell(r['matched_pairs'])} | {r['precision']} | {r['recall']} "
                f"| {r['f1']} |")
    lines += ["", "Ratios linkage / peer (below 1: linkage faster or smaller):", "",
              "| data | rows | peer | wall time | peak RSS |", "| --- | ---: | --- | ---: | ---: |"]
    for ds in datasets:
        found = {r["tool"]: r for r in ds.results if "error" not in r}
        mine = found.get("linkage")
        for tool in ("splink", "recordlinkage"):
            if mine and tool in found:
                lines.append(f"| {ds.name} | {ds.rows:,} | {tool} "
                             f"| {ratio(mine['wall_s'], found[tool]['wall_s'])} "
                             f"| {ratio(mine['peak_rss_mib'], found[tool]['peak_rss_mib'])} |")
    checked = targets(rows)
    if checked:
        lines += ["", "Targets:", "", *checked]
    physical = [r for r in rows if r.get("physical")]
    if physical:
        lines += ["", "Physical reference (`bench/physical_io.py`): the time to read the input "
                  "and write linkage's output tables alone, with the readers and writers "
                  "linkage uses and nothing in between:", ""]
        for r in physical:
            io_s = r["physical"]["read_s"] + r["physical"]["write_s"]
            lines.append(f"- {r['data']} {r['rows']:,}: read {r['physical']['read_s']:.2f} s, "
                         f"write {r['physical']['write_s']:.2f} s, together {io_s:.2f} s; "
                         f"linkage's whole run {r['wall_s']} s is {r['wall_s'] / io_s:.1f}x "
                         "that")
    lines += ["", "Seconds per stage:", ""]
    for r in rows:
        if "stage_seconds" in r:
            stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stage_seconds"].items())
            lines.append(f"- {r['data']} {r['rows']:,}, {r['tool']}: {stages}")
    text = "\n".join(lines) + "\n"
    args.results.write_text(text, encoding="utf-8")
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[100_000, 1_000_000],
                        help="synthetic person tables to run (default: 100000 1000000)")
    parser.add_argument("--no-febrl", dest="febrl", action="store_false",
                        help="leave out FEBRL dataset3")
    parser.add_argument("--tools", nargs="+", choices=TOOLS, default=list(TOOLS))
    parser.add_argument("--rules", type=Path, default=None,
                        help="linkage rules for every person table (default: persons_fs.yaml "
                             "up to 1M records, persons_scale.yaml above)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--timeout", type=float, default=3600.0,
                        help="seconds one tool may take on one table (default: 3600)")
    parser.add_argument("--results", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args(argv)
    args.load_before = os.getloadavg()[0]

    versions = {tool: ensure_venv(tool) for tool in args.tools if tool in PEERS}
    datasets = ([febrl3()] if args.febrl else []) + [
        persons(rows, args.seed, args.rules) for rows in args.rows]
    for ds in datasets:
        for tool in args.tools:
            out = HERE / "data" / f"{tool}_{ds.name}_{ds.rows}"
            row = scored(ds, tool, RUNNERS[tool](ds, out, args.timeout))
            print(json.dumps(row), flush=True)
            ds.results.append(row)
            write_results(args, versions, datasets)  # after each run: a kill keeps the rest
    print(write_results(args, versions, datasets))
    print(f"python {platform.python_version()}; wrote {args.results}")


def _matched(summary: dict) -> int:
    """Matched pairs, stage matches (exact, copies) included; older summaries lack the key."""
    score = summary["stages"]["score"]
    return score.get("matched_pairs", score["pairs_at_or_above_threshold"])


if __name__ == "__main__":
    main()
