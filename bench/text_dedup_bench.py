"""Near-duplicate text at scale: linkage (local and Spark) against datatrove and text-dedup on
one seeded corpus with planted near-duplicates (bench/text_corpus.py), in one run.

    make bench-text                      # the other tools' environments, then this at 100k
    nice -n 10 .venv/bin/python bench/text_dedup_bench.py --docs 100000
    nice -n 10 .venv/bin/python bench/text_dedup_bench.py --docs 1000000

Tools, each a subprocess whose whole process tree is sampled for memory:

* `linkage`: `linkage dedupe CORPUS --rules bench/text_dedup.yaml` (url, exact, MinHash-LSH at
  Jaccard 0.8 verified exactly, semantic on the 1% `qa` records, jaccard comparison, rule sum,
  cluster cap, keep first).
* `linkage-spark-distributed`: the same rules (bench/text_dedup.yaml; runs before 2026-12-06
  used bench/text_dedup_distributed.yaml, without the `max_cluster_size` guard, which the
  route refused then) on Spark's distributed route
  (`LINKAGE_SPARK_DRIVER_ROWS=0`: inputs read and outputs written by Spark, no record or pair
  on the driver; docs/SPARK.md).
* `linkage-spark`: the same with `--engine spark --spark-master local[2]`; an engine that
  refuses the rules is recorded as "refused" with its message.
* `datatrove`: its four MinHash stages with `LocalPipelineExecutor` (bench/text_dedup_datatrove.py),
  2 tasks / 2 workers, word 3-grams, 14 buckets x 9 hashes (the bands and rows linkage derives
  for 0.8 from 128 permutations), 64-bit hashes, its English (spaCy) word tokenizer. No
  verification of candidates: every bucket collision is a duplicate.
* `text-dedup`: `python -m text_dedup.minhash_spark` (0.4.0) on `local[2]`, word 3-grams,
  126 permutations, b=14, r=9, threshold 0.8.

datatrove and text-dedup live in environments of their own under bench/ (`make bench-text`:
bench/.venv-textdedup for datatrove 0.10.1 + spaCy + pyarrow, bench/.venv-textdedup-spark
for text-dedup 0.4.0); the linkage environment is not touched.

Scoring: a tool's clusters (datatrove: its `minhash_cluster_id`) give its duplicate pairs (every
pair of one cluster). Against the planted truth at Jaccard 0.8: true pairs are the `exact`,
`near_high` and `near_low` plants; found `url` plants (Jaccard below 0.8, the same page by
URL) are left out of both precision and recall at the threshold and reported apart; every other
pair found is a false positive (found `far` plants are counted apart; a sample of the other
false positives gets its reference Jaccard, to tell base documents that happen to be near
copies from tool errors). Writes bench/RESULTS_text_dedup.md from bench/RESULTS_text_dedup.json,
which keeps every size measured (a run replaces its own size).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from text_corpus import BANDS, SHARES, THRESHOLD, TRUE_KINDS, jaccard, make_corpus  # noqa: E402

DATA = HERE / "data"
VENV_DT = HERE / ".venv-textdedup"
VENV_TD = HERE / ".venv-textdedup-spark"
RULES = HERE / "text_dedup.yaml"
RECIPE = 2  # raise when bench/text_corpus.py makes other documents: the cache is by recipe
RULES_MINHASH = HERE / "text_dedup_minhash.yaml"
TOOLS = ("physical", "linkage", "linkage-minhash", "linkage-spark", "linkage-spark-distributed",
         "datatrove", "text-dedup")


# -- the corpus ------------------------------------------------------------------------------

def corpus_files(n: int, seed: int) -> dict[str, Path]:
    stem = DATA / f"text_dedup_v{RECIPE}_{n}_s{seed}"
    return {"corpus": stem.with_suffix(".parquet"), "truth": Path(f"{stem}_truth.parquet"),
            "parts": Path(f"{stem}_parts")}


def ensure_corpus(n: int, seed: int) -> tuple[dict[str, Path], float | None]:
    """Build and cache the corpus (one Parquet file, the same rows split in two files for the
    tools that read a folder with one task per file, and the truth). Seconds to build, or None
    when it was cached."""
    files = corpus_files(n, seed)
    if files["corpus"].exists() and files["truth"].exists() and files["parts"].exists():
        return files, None
    t0 = time.perf_counter()
    docs, truth = make_corpus(n, seed)
    DATA.mkdir(exist_ok=True)
    docs.to_parquet(files["corpus"], index=False)
    truth.to_parquet(files["truth"], index=False)
    files["parts"].mkdir(exist_ok=True)
    half = len(docs) // 2
    docs.iloc[:half].to_parquet(files["parts"] / "part-0.parquet", index=False)
    docs.iloc[half:].to_parquet(files["parts"] / "part-1.parquet", index=False)
    return files, time.perf_counter() - t0


# -- running a tool --------------------------------------------------------------------------

def _sample_tree(pid: int, peak: dict, stop: threading.Event) -> None:
    """Every 0.2 s until `stop`: the resident memory of `pid` and its descendants, summed over
    all, over Python and over Java processes; `peak` keeps the largest of each."""
    import psutil

    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    while not stop.is_set():
        sums = {"total": 0, "python": 0, "java": 0}
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        for p in procs:
            try:
                rss = p.memory_info().rss
                name = p.name()
            except psutil.Error:
                continue
            sums["total"] += rss
            if name.startswith("python"):
                sums["python"] += rss
            elif name == "java":
                sums["java"] += rss
        for k, v in sums.items():
            peak[k] = max(peak[k], v)
        stop.wait(0.2)


def run_measured(cmd: list[str], env: dict | None = None, cwd: Path = ROOT,
                 timeout: float | None = None) -> dict:
    """Run `cmd`, sampling the resident memory of its whole process tree every 0.2 s: the peak
    of the sum, and of the sums over Python and Java processes alone."""
    with tempfile.TemporaryFile("w+") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        peak = {"total": 0, "python": 0, "java": 0}
        stop = threading.Event()
        thread = threading.Thread(target=_sample_tree, args=(proc.pid, peak, stop), daemon=True)
        thread.start()
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)  # the tool's whole process group (a JVM, workers)
            proc.wait()
            rc = f"timed out after {timeout:.0f} s"
        wall = time.perf_counter() - t0
        stop.set()
        thread.join()
        log.seek(0)
        out = log.read()
    return {"rc": rc, "wall_s": wall, "peak_mib": peak["total"] / 2**20,
            "peak_python_mib": peak["python"] / 2**20, "peak_java_mib": peak["java"] / 2**20,
            "log_tail": out[-3000:], "cmd": " ".join(shlex.quote(c) for c in cmd),
            "log_errors": [line.strip()[:400] for line in out.splitlines()
                           if ("Error" in line or "Exception" in line)
                           and not line.lstrip().startswith("at ")][:12]}


def _short(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def physical_cmd(files: dict, out: Path) -> list[str]:
    code = ("import pyarrow.parquet as pq, sys; "
            "pq.write_table(pq.read_table(sys.argv[1]), sys.argv[2])")
    return [sys.executable, "-c", code, str(files["corpus"]), str(out / "copy.parquet")]


def linkage_cmd(files: dict, out: Path, spark: bool, rules: Path = RULES) -> list[str]:
    cmd = [sys.executable, "-m", "linkage", "dedupe", _short(files["corpus"]), "--rules",
           _short(rules), "--out", str(out)]
    return [*cmd, "--engine", "spark", "--spark-master", "local[2]"] if spark else cmd


def datatrove_cmd(files: dict, out: Path) -> list[str]:
    return [str(VENV_DT / "bin" / "python"), _short(HERE / "text_dedup_datatrove.py"),
            _short(files["parts"]), str(out), "--n-grams", "3", "--buckets", "14", "--rows", "9",
            "--tasks", "2", "--workers", "2"]


def textdedup_cmd(files: dict, out: Path) -> list[str]:
    return [str(VENV_TD / "bin" / "python"), "-m", "text_dedup.minhash_spark", "--input",
            _short(files["parts"]), "--output", str(out / "output"), "--threshold",
            str(THRESHOLD), "--ngram_size", "3", "--min_length", "3", "--num_perm", "126",
            "--b", "14", "--r", "9", "--column", "text", "--checkpoint_dir",
            str(out / "checkpoints"), "--debug"]


# -- what each tool found --------------------------------------------------------------------

def clusters_of(tool: str, out: Path, ids: pd.Index) -> np.ndarray | None:
    """A cluster label per document (in `ids` order; a document alone gets its own label)."""
    n = len(ids)
    labels = np.arange(n, dtype=np.int64)
    if tool.startswith("linkage"):
        c = pd.read_parquet(out / "clusters.parquet", columns=["doc_id", "cluster_id"])
        labels[ids.get_indexer(c["doc_id"])] = c["cluster_id"].to_numpy() + n
        return labels
    if tool == "datatrove":
        frames = []
        for folder in ("output", "removed"):
            if (out / folder).exists():
                t = pd.read_parquet(out / folder, columns=["id", "metadata"])
                frames.append(pd.DataFrame({
                    "id": t["id"], "c": [m.get("minhash_cluster_id", -1) for m in t["metadata"]]}))
        t = pd.concat(frames, ignore_index=True)
        t = t[t["c"] >= 0]
        labels[ids.get_indexer(t["id"])] = t["c"].to_numpy() + n
        return labels
    return None


def kept_of(out: Path) -> set[str] | None:
    """text-dedup writes only the documents it keeps."""
    folder = out / "output"
    if not folder.exists():
        return None
    return set(pd.read_parquet(folder, columns=["doc_id"])["doc_id"])


def score(labels: np.ndarray, ids: pd.Index, truth: pd.DataFrame, docs: pd.Series,
          rng: np.random.Generator, sample: int = 300) -> dict:
    a = ids.get_indexer(truth["doc_a"])
    b = ids.get_indexer(truth["doc_b"])
    same = labels[a] == labels[b]
    kinds = truth["kind"].to_numpy()
    _, sizes = np.unique(labels, return_counts=True)
    found = int((sizes * (sizes - 1) // 2).sum())
    is_true = np.isin(kinds, TRUE_KINDS)
    tp = int((same & is_true).sum())
    url_found = int((same & (kinds == "url")).sum())
    far_found = int((same & (kinds == "far")).sum())
    fp = found - tp - url_found
    counted = found - url_found
    by_kind = {k: float(same[kinds == k].mean()) for k in SHARES}
    # a sample of the unplanted pairs found: reference Jaccard
    planted = set(zip(a[same].tolist(), b[same].tolist(), strict=True))
    planted |= {(y, x) for x, y in planted}
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    others = []
    for group in np.split(order, cuts):
        if 1 < len(group) <= 50:
            for i in range(len(group)):
                for j in range(i + 1, len(group)):
                    if (group[i], group[j]) not in planted:
                        others.append((group[i], group[j]))
    picked = rng.choice(len(others), size=min(sample, len(others)), replace=False) \
        if others else []
    js = [jaccard(docs.iloc[others[k][0]], docs.iloc[others[k][1]]) for k in picked]
    return {
        "pairs_found": found, "tp": tp, "fp": fp, "url_found": url_found,
        "far_found": far_found, "true_pairs": int(is_true.sum()),
        "precision": tp / counted if counted else 1.0, "recall": tp / int(is_true.sum()),
        "recall_by_kind": by_kind, "unplanted": len(others),
        "unplanted_sampled": len(js),
        "unplanted_sample_at_threshold": int(sum(j >= THRESHOLD for j in js)),
        "largest_cluster": int(sizes.max()),
        "removed": int(len(labels) - len(sizes)),
    }


def score_kept(kept: set[str], ids: pd.Index, truth: pd.DataFrame) -> dict:
    """Removed-document scoring for a tool that writes only what it keeps: a removed document
    is right when it belongs to a true pair (or a url pair, left out); a true pair is found
    when one of its two documents is removed."""
    removed = {d for d in ids if d not in kept}
    kinds = truth["kind"].to_numpy()
    hit = np.array([(x in removed) != (y in removed) or (x in removed and y in removed)
                    for x, y in zip(truth["doc_a"], truth["doc_b"], strict=True)])
    is_true = np.isin(kinds, TRUE_KINDS)
    members = set(truth.loc[is_true, "doc_a"]) | set(truth.loc[is_true, "doc_b"])
    url_members = set(truth.loc[kinds == "url", "doc_a"]) | set(truth.loc[kinds == "url", "doc_b"])
    right = len(removed & members)
    counted = len(removed - (url_members - members))
    return {"removed": len(removed), "precision_removed": right / counted if counted else 1.0,
            "recall": float(hit[is_true].mean()),
            "recall_by_kind": {k: float(hit[kinds == k].mean()) for k in SHARES}}


# -- the run ---------------------------------------------------------------------------------

def run_tool(tool: str, files: dict, work: Path, timeout: float) -> dict:
    out = work / tool
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if tool == "physical":
        return run_measured(physical_cmd(files, out), env, timeout=timeout)
    if tool.startswith("linkage"):
        shutil.rmtree(out)
        rules = {"linkage-minhash": RULES_MINHASH}.get(tool, RULES)
        if tool == "linkage-spark-distributed":
            env["LINKAGE_SPARK_DRIVER_ROWS"] = "0"
        return run_measured(linkage_cmd(files, out, tool.startswith("linkage-spark"), rules),
                            env, timeout=timeout)
    if tool == "datatrove":
        if not (VENV_DT / "bin" / "python").exists():
            return {"rc": "not installed (make bench-text)", "cmd": ""}
        return run_measured(datatrove_cmd(files, out), {**os.environ}, timeout=timeout)
    if tool == "text-dedup":
        if not (VENV_TD / "bin" / "python").exists():
            return {"rc": "not installed (make bench-text)", "cmd": ""}
        env = {**os.environ, "PYSPARK_PYTHON": str(VENV_TD / "bin" / "python"),
               "PYSPARK_SUBMIT_ARGS": "--master local[2] --driver-memory 4g pyspark-shell"}
        return run_measured(textdedup_cmd(files, out), env, timeout=timeout)
    raise ValueError(tool)


def failure(tool: str, r: dict) -> str:
    tail = r.get("log_tail", "")
    lines = [x.strip() for x in tail.splitlines() if x.strip()]
    if tool.startswith("linkage-spark") and r["rc"] == 2:
        msg = next((x for x in lines if "spark" in x.lower() and ("not" in x or "refus" in x)),
                   lines[-1] if lines else "")
        return f"refused: {msg}"
    errs = [x for x in lines if "Error" in x or "Exception" in x]
    first = [x for x in r.get("log_errors", []) if "java." in x or "Spark" in x][:1]
    cause = f" (first JVM error: {first[0][:300]})" if first and first[0] not in errs[-1:] else ""
    return f"failed (exit {r['rc']}): {(errs or lines or [''])[-1][:300]}{cause}"


def load_now() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per tool")
    parser.add_argument("--work", type=Path, default=None,
                        help="outputs folder (default: a temporary one, removed after)")
    parser.add_argument("--results", type=Path, default=HERE / "RESULTS_text_dedup.md")
    args = parser.parse_args(argv)
    store = args.results.with_suffix(".json")
    record = {"docs": args.docs, "seed": args.seed, "recipe": RECIPE, "load_start": load_now(),
              "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "command": "nice -n 10 .venv/bin/python bench/text_dedup_bench.py "
                         + " ".join(argv if argv is not None else sys.argv[1:])}
    files, built = ensure_corpus(args.docs, args.seed)
    record["corpus_build_s"] = built
    docs = pd.read_parquet(files["corpus"], columns=["doc_id", "text"])
    truth = pd.read_parquet(files["truth"])
    ids = pd.Index(docs["doc_id"])
    words = docs["text"].str.split().str.len()
    record["corpus"] = {"mb": files["corpus"].stat().st_size / 1e6,
                        "words_mean": float(words.mean()), "words_median": float(words.median()),
                        "planted": truth["kind"].value_counts().to_dict(),
                        "jaccard": {k: [float(g.min()), float(g.max())]
                                    for k, g in truth.groupby("kind")["jaccard"]}}
    work_tmp = None
    work = args.work
    if work is None:
        work_tmp = tempfile.mkdtemp(prefix="text_dedup_", dir=DATA)
        work = Path(work_tmp)
    rng = np.random.default_rng(0)
    results = {}
    for tool in args.tools.split(","):
        print(f"[{time.strftime('%H:%M:%S')}] {tool} ...", flush=True)
        r = run_tool(tool, files, work, args.timeout)
        r["load_after"] = load_now()
        if r.get("cmd"):
            r["cmd"] = r["cmd"].replace(str(work), "OUT")
        if r["rc"] == 0 and tool != "physical":
            labels = clusters_of(tool, work / tool, ids)
            if labels is not None:
                r["score"] = score(labels, ids, truth, docs["text"], rng)
            else:
                kept = kept_of(work / tool)
                r["score"] = score_kept(kept, ids, truth) if kept is not None else None
        elif r["rc"] != 0:
            r["failure"] = failure(tool, r)
        if tool == "datatrove" and (work / tool / "stage_seconds.json").exists():
            r["stages_s"] = json.loads((work / tool / "stage_seconds.json").read_text())
        if tool.startswith("linkage") and (work / tool / "timings.json").exists():
            r["stages_s"] = json.loads((work / tool / "timings.json").read_text())["seconds"]
        print(f"    {r.get('wall_s', 0):.1f} s, rc {r['rc']}, "
              f"{r.get('failure', '') or r.get('score', '')}", flush=True)
        results[tool] = r
    record["tools"] = results
    record["load_end"] = load_now()
    if work_tmp:
        shutil.rmtree(work_tmp, ignore_errors=True)
    stored = json.loads(store.read_text()) if store.exists() else {}
    before = stored.get(str(args.docs))
    if before and all(before.get(k) == record[k] for k in ("seed", "recipe")) \
            and set(results) < set(TOOLS):
        # a run of some tools only: the other tools' figures of the earlier run stay, each
        # row with its own command, start and loads
        for r in before["tools"].values():
            r.setdefault("run", {k: before[k] for k in ("command", "started", "load_start",
                                                        "load_end")})
        for r in results.values():
            r["run"] = {k: record[k] for k in ("command", "started", "load_start", "load_end")}
        record = {**before, "tools": {**before["tools"], **results}}
    stored[str(args.docs)] = record
    store.write_text(json.dumps(stored, indent=1) + "\n")
    args.results.write_text(render(stored))
    print(f"wrote {args.results}")


# -- the results file ------------------------------------------------------------------------

TOOL_NAMES = {
    "physical": "physical reference: read the corpus Parquet, write it back (pyarrow)",
    "linkage": "linkage, local engine, the text pipeline (bench/text_dedup.yaml)",
    "linkage-minhash": "linkage, local engine, MinHash stage alone (bench/text_dedup_minhash.yaml)",
    "linkage-spark": "linkage, `--engine spark --spark-master local[2]`",
    "linkage-spark-distributed": "linkage, `--engine spark --spark-master local[2]`, the "
                                 "distributed route (bench/text_dedup.yaml)",
    "datatrove": "datatrove 0.10.1 MinHash, LocalPipelineExecutor (2 tasks, 2 workers)",
    "text-dedup": "text-dedup 0.4.0 `minhash_spark`, local[2]",
}


STAGES = ("read", "prepare", "normalize", "url", "exact", "semantic", "block", "compare",
          "score", "guard", "cluster", "keep", "summary", "report", "write")


def _pct(x: float) -> str:
    """Two decimals, rounded down: 99.999% shows as 99.99%, only 1 as 100%."""
    return f"{math.floor(x * 10_000) / 100:.2f}%"


def render(stored: dict) -> str:
    lines = [
        "# Near-duplicate text: linkage against datatrove and text-dedup",
        "",
        "Written by `bench/text_dedup_bench.py` (its docstring says how each tool runs and how "
        "it is scored); the corpus recipe is `bench/text_corpus.py`'s docstring, summed up "
        "below. Machine: 2 cores (AMD EPYC) shared with four other helpers' jobs while these "
        "ran - the load averages are next to every figure; wall times on a shared machine "
        "spread by tens of percent. Python " + platform.python_version() + ".",
        "",
        "## Corpus",
        "",
        "Seeded (`make_corpus(n, seed)`), cached under bench/data/. Base documents: random "
        "sentences of the ~41k real texts of `bench/minhash_bench.py real_docs()` (product "
        "titles and descriptions of the benchmark data sets, Python stdlib docstrings), joined "
        "to a log-normal length (median 60 words, 25-400), each base distinct, each with its own "
        "URL. Planted copies, each of a different base, as shares of all documents: "
        + ", ".join(f"`{k}` {100 * v:g}% (reference Jaccard {BANDS[k][0]:.2f}-{BANDS[k][1]:.2f})"
                    for k, v in SHARES.items())
        + ". `url` copies have the base's URL written another way and edited text: a page "
        "crawled twice. Edits: word substitutions, deletions, insertions, half with a new footer "
        "sentence. Reference Jaccard: word 3-gram sets of the lowercased alphanumeric words. "
        f"True pairs at threshold {THRESHOLD}: {', '.join(TRUE_KINDS)}; the bands leave 0.75-0.82 "
        "empty so that tokenizer differences between the tools do not move a pair across 0.8.",
        "",
    ]
    lines += [
        "## Settings, made as equal as the tools allow",
        "",
        "| | linkage | datatrove 0.10.1 | text-dedup 0.4.0 |",
        "| --- | --- | --- | --- |",
        "| shingles | word 3-grams; words: runs of letters and digits of the NFKC-lowercased "
        "text | word 3-grams of its English (spaCy) word tokens after `simplify_text` "
        "(lowercase, punctuation removed, diacritics removed, every number written as 0) "
        "| word 3-grams of the lowercased text split at every non-word character |",
        "| hashes | 128 permutations of 32-bit shingle hashes (affine mod 2^32), 126 used | "
        "126 (14 x 9) of 64-bit xxhash | 126 permutations of 32-bit xxhash mod a 32-bit prime |",
        "| LSH | 14 bands x 9 rows (derived from 0.8) | 14 buckets x 9 hashes | b = 14, r = 9 |",
        "| candidates | verified: exact Jaccard of the shingle sets >= 0.8, then the jaccard "
        "comparison and rule-sum score | every bucket collision is a duplicate | every bucket "
        "collision is a duplicate |",
        "| groups | connected components; url and exact stages before, semantic on the `qa` "
        "records; clusters over 20 go to review | union-find | GraphFrames connected "
        "components |",
        "| parallelism | one process | 2 tasks, 2 worker processes | Spark `local[2]`, "
        "driver memory 4 GiB |",
        "| short texts | fewer than 4 words: left to the exact stage | none here (documents "
        "have 25+ words) | fewer than 3 tokens dropped |",
        "",
        "`linkage-minhash` is linkage with the MinHash stage alone (no url, exact, semantic, "
        "guards): the same work as the other two. Peak memory is the largest sum of the "
        "resident sets of the tool's process tree, sampled every 0.2 s.",
        "",
    ]
    for size in sorted(stored, key=int):
        rec = stored[size]
        n = int(size)
        c = rec["corpus"]
        lines += [
            f"## {n:,} documents",
            "",
            *([] if rec.get("recipe", 1) == RECIPE else [
                f"Corpus recipe v{rec.get('recipe', 1)}, older than the one above: bases had no "
                "minimum number of sentences (and sentences up to 60 words), so a base could be "
                "one long sentence and two bases sharing it near copies that no plant made; "
                "they show as false pairs of every tool (see the sample's reference Jaccard "
                "below).", ""]),
            f"Command: `{rec['command']}` (started {rec['started']}). Load average (1, 5, 15 "
            f"min) {', '.join(map(str, rec['load_start']))} at the start, "
            f"{', '.join(map(str, rec['load_end']))} at the end." + (
                f" {rec['note']}" if rec.get("note") else ""),
            "",
            f"Corpus: {c['mb']:.1f} MB of Parquet, words per document mean {c['words_mean']:.1f}, "
            f"median {c['words_median']:.0f}; planted pairs "
            + ", ".join(f"{k} {v:,} (Jaccard {c['jaccard'][k][0]:.3f}-{c['jaccard'][k][1]:.3f})"
                        for k, v in sorted(c["planted"].items()))
            + (f"; built in {rec['corpus_build_s']:.0f} s." if rec.get("corpus_build_s")
               else "; read from the cache."),
            "",
            "| tool | wall s | documents/s | peak RSS MiB (tree; Python / Java) | pairs found | "
            "precision at 0.8 | recall at 0.8 | exact | near 0.90-0.98 | near 0.82-0.90 | "
            "url pairs found | far pairs found (false) | load after |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
            "| ---: |",
        ]
        notes = []
        tools = sorted(rec["tools"].items(),
                       key=lambda kv: TOOLS.index(kv[0]) if kv[0] in TOOLS else len(TOOLS))
        for tool, r in tools:
            name = TOOL_NAMES.get(tool, tool)
            load = ", ".join(map(str, r.get("load_after", [])))
            if r["rc"] != 0:
                lines.append(f"| {name} | {r.get('wall_s', 0):.1f} | - | "
                             f"{r.get('peak_mib', 0):,.0f} | {r.get('failure', r['rc'])} "
                             f"| | | | | | | | {load} |")
                continue
            mem = (f"{r['peak_mib']:,.0f} ({r['peak_python_mib']:,.0f} / "
                   f"{r['peak_java_mib']:,.0f})")
            s = r.get("score")
            if not s:
                lines.append(f"| {name} | {r['wall_s']:.1f} | {n / r['wall_s']:,.0f} | {mem} "
                             f"| | | | | | | | | {load} |")
                continue
            k = s["recall_by_kind"]
            if "pairs_found" in s:
                lines.append(
                    f"| {name} | {r['wall_s']:.1f} | {n / r['wall_s']:,.0f} | {mem} | "
                    f"{s['pairs_found']:,} | {_pct(s['precision'])} | {_pct(s['recall'])} | "
                    f"{_pct(k['exact'])} | {_pct(k['near_high'])} | {_pct(k['near_low'])} | "
                    f"{s['url_found']:,} of {c['planted'].get('url', 0):,} | "
                    f"{s['far_found']:,} of {c['planted'].get('far', 0):,} | {load} |")
                notes.append(
                    f"* {name}: {s['fp']:,} false pairs ({s['far_found']:,} planted `far` "
                    f"rewrites, {s['unplanted']:,} pairs in clusters of up to 50 that no plant "
                    f"made; of {s['unplanted_sampled']} of those sampled, "
                    f"{s['unplanted_sample_at_threshold']} have reference Jaccard >= 0.8, i.e. "
                    f"are base documents that happen to be near copies); "
                    f"{s['removed']:,} documents removed; largest cluster "
                    f"{s['largest_cluster']:,}.")
            else:
                lines.append(
                    f"| {name} | {r['wall_s']:.1f} | {n / r['wall_s']:,.0f} | {mem} | - | "
                    f"{_pct(s['precision_removed'])} (removed documents) | {_pct(s['recall'])} "
                    f"| {_pct(k['exact'])} | {_pct(k['near_high'])} | {_pct(k['near_low'])} | "
                    f"{_pct(k['url'])} | {_pct(k['far'])} | {load} |")
            if r.get("stages_s"):
                st = r["stages_s"]
                parts = (", ".join(f"{key} {st[key]:.1f}" for key in sorted(
                    st, key=lambda k: STAGES.index(k) if k in STAGES else len(STAGES)))
                         if isinstance(st, dict) else
                         ", ".join(f"stage {i + 1} {v:.1f}" for i, v in enumerate(st)))
                notes.append(f"* {name}, seconds by stage: {parts}.")
        reruns = [(tool, r["run"]) for tool, r in tools
                  if r.get("run") and r["run"]["started"] != rec["started"]]
        for tool, run in reruns:
            notes.append(f"* {TOOL_NAMES.get(tool, tool)} was measured in a later run: "
                         f"`{run['command']}` (started {run['started']}, load "
                         f"{', '.join(map(str, run['load_start']))} at its start).")
        lines += ["", *notes, "", "Commands (outputs under a temporary folder `OUT`):", ""]
        for tool, r in tools:
            if r.get("cmd"):
                cmd = r["cmd"].replace(sys.executable, ".venv/bin/python").replace(f"{ROOT}/", "")
                lines.append(f"* {tool}: `{cmd}`")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
