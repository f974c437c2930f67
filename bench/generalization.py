"""Generalization: zero-configuration accuracy on tables the toolkit was not tuned on (issue 14).

    python bench/generalization.py              # writes bench/GENERALIZATION.md
    python bench/generalization.py --quick      # no 1M; labels on named data sets only
    python bench/generalization.py --only households FEBRL4 --sizes 100000
    python bench/generalization.py --jobs 2     # two cases at a time (default 1)

Every data set in ../shared/datasets (the loaders of bench/accuracy.py, plus cora, imdb_tmdb,
Walmart-Amazon, FEBRL 1 and 2 and Splink's transactions, the last three held out of all tuning
until stop 34 measured them), each as published and with neutral column names (c1, c2, ...) in
shuffled order, and the stress tables of `linkage.synth.traps` (one trap each, and one with all
of them) at 10k, 100k and 1M rows. Each runs as a user runs it: `linkage dedupe|link FILE... --out
DIR`, no rules, in a subprocess with a time limit. Then twice more with labels answered by an
oracle from the truth: `linkage sample RUN --active --n 10 --out todo.csv`, fill `label`, rerun
with `--labels todo.csv`; then 15 more sampled from that run, 25 labels in all. The truth is
used only to answer labels and to score; ids that carry it are made opaque by the loaders.

The reference for the label rows ("the best F1 that any of our scorers reaches with all the
labels", the issue's target for 25 labels) is `reference_runs`: the candidate pairs of the run
without labels (its pairs.parquet; a seeded uniform sample of REFERENCE_PAIRS of them where
there are more) all labelled from the truth, then (a) the same command with `--labels` holding
them (semi-supervised Fellegi-Sunter, or the logistic supervised scorer where the pipeline picks
it; in a dedupe with the run's rules.yaml and `join_labelled: false`, so that the clusters are the
scorer's: labels that join their clusters would make every labelled candidate pair right) and
(b) the run's own suggested rules (its rules.yaml) with the scorer replaced by
`supervised` (gradient boosting, threshold by cross-validation) trained on those labels. The best
F1 of (a) and (b) is the reference.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402  (bench/accuracy.py: the loaders and the opaque ids)
from _versions import packages_line  # noqa: E402

from linkage.synth import TRAPS, traps  # noqa: E402

DATA = accuracy.DATA


# ------------------------------------------------------------------------------------------
# Data sets not in accuracy.py (same contract: mode, frames, truth)
# ------------------------------------------------------------------------------------------


def _jedai(folder: str, *names: str) -> list[pd.DataFrame]:
    return [pd.read_csv(DATA / "jedai" / folder / n, sep="|", dtype=str) for n in names]


def cora():
    (df,) = _jedai("cora", "cora.csv")
    df = df.loc[:, ~df.columns.str.startswith("Unnamed")]  # the trailing separator
    gt = pd.read_csv(DATA / "jedai" / "cora" / "gt.csv", sep="|", header=None, dtype=str)
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    row = {v: i for i, v in enumerate(df["Entity Id"])}
    a, b = gt[0].map(row).to_numpy(), gt[1].map(row).to_numpy()
    graph = coo_matrix((np.ones(a.size), (a, b)), shape=(len(df), len(df)))
    entity = connected_components(graph, directed=False)[1]
    return "dedupe", [df], pd.DataFrame({"id": df["Entity Id"], "e": entity})


def _jedai_link(folder: str, left: str, right: str):
    a, b = _jedai(folder, left, right)
    (gt,) = _jedai(folder, "gt.csv")
    return "link", [a, b], set(zip(gt["D1"], gt["D2"], strict=True))


def febrl1():
    return accuracy.febrl_dedupe("dataset1.csv", "1")


def febrl2():
    return accuracy.febrl_dedupe("dataset2.csv", "2")


def transactions():
    """Splink's transactions: a payment and its record at the other end (memo reworded,
    date a few days later, the same amount), one-to-one. `unique_id` equals `ground_truth`
    on both sides, so both are replaced: the ids by opaque ones, the truth kept aside."""
    frames, truth_ids = [], []
    for side in ("origin", "destination"):
        df = pd.read_parquet(DATA / "splink" / f"transactions_{side}.parquet")
        df["unique_id"] = accuracy._opaque(df["ground_truth"], side)
        truth_ids.append(df[["unique_id", "ground_truth"]])
        frames.append(df.drop(columns=["ground_truth"]))
    m = truth_ids[0].merge(truth_ids[1], on="ground_truth")
    return "link", frames, set(zip(m["unique_id_x"], m["unique_id_y"], strict=True))


def imdb_tmdb():
    return _jedai_link("imdb_tmdb", "imdb.csv", "tmdb.csv")


def walmart_amazon():
    return _jedai_link("walmart_amazon", "walmart.csv", "amazon.csv")


# name: (loader, the F1 target with suggested rules, or None)
DATASETS: dict[str, tuple[Callable, float | None]] = {
    "FEBRL3": (accuracy.febrl3, 0.99),
    "FEBRL4": (accuracy.febrl4, 0.99),
    "fake_1000": (accuracy.fake_1000, 0.93),
    "historical_50k": (accuracy.historical_50k, 0.90),
    "DBLP-ACM": (accuracy.dblp_acm, 0.97),
    "Abt-Buy": (accuracy.abt_buy, 0.70),
    "Amazon-Google": (accuracy.amazon_google, 0.55),
    "cora": (cora, 0.90),
    "imdb_tmdb": (imdb_tmdb, 0.85),
    "Walmart-Amazon": (walmart_amazon, 0.70),
    # Held out (added at stop 34, measured before anything was tuned on them): the issue names
    # no F1 target; their rows are for information, the 25-label row held as every other.
    "FEBRL1": (febrl1, None),
    "FEBRL2": (febrl2, None),
    "transactions": (transactions, None),
}
NEUTRAL_TARGET = {"historical_50k": 0.85}  # the issue's; others: within 0.05 of the named run
# Stress tables: our targets in the spirit (tests/test_generalization.py asserts the
# same); every trap at 1M must also be within 0.01 of its 100k.
TRAP_TARGET = {
    "persons": 0.95,
    "split_dates": 0.90,
    "households": 0.90,
    "link_columns": 0.85,
    "sparse": 0.90,
    "numeric_codes": 0.90,
    "foreign_phones": 0.90,
    "all": 0.85,
    "payments": 0.85,
}
SEED = 42
REFERENCE_PAIRS = 5_000  # labelled candidate pairs for the reference ("all the labels")
WITHIN = 0.02  # the target for 25 labels: within this of the reference
SCALE_WITHIN = 0.01  # the target for the generator at 10k, 100k and 1M: within this
LINKAGE = [sys.executable, "-m", "linkage"]


# ------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    variant: str
    mode: str
    frames: list[pd.DataFrame]
    truth: object  # dedupe: entity per row (np.ndarray); link: set of (row_l, row_r)
    target: float | None
    rows: dict = field(default_factory=dict)


def _rows_truth(mode: str, frames: list[pd.DataFrame], truth) -> object:
    """The truth by row position, so that scoring does not depend on which id the run picks."""
    if mode == "dedupe":
        ids = truth.iloc[:, 0].astype(str)
        entity = pd.Series(truth.iloc[:, 1].to_numpy(), index=ids)
        id_col = next(c for c in frames[0].columns if frames[0][c].astype(str).isin(ids).all())
        return entity.loc[frames[0][id_col].astype(str)].to_numpy()
    if isinstance(truth, pd.DataFrame):
        truth = set(zip(truth.iloc[:, 0].astype(str), truth.iloc[:, 1].astype(str), strict=True))
    left_ids = {str(v) for v, _ in truth}
    right_ids = {str(v) for _, v in truth}

    def position(frame, ids):
        col = next(c for c in frame.columns if frame[c].astype(str).isin(ids).sum() == len(ids))
        return {v: i for i, v in enumerate(frame[col].astype(str))}

    pl, pr = position(frames[0], left_ids), position(frames[1], right_ids)
    return {(pl[a], pr[b]) for a, b in truth}


def _neutral(frames: list[pd.DataFrame], seed: int) -> list[pd.DataFrame]:
    """Columns renamed c1, c2, ... (per table, in the original order) and then shuffled."""
    rng = np.random.default_rng(seed)
    out = []
    for frame in frames:
        renamed = frame.set_axis([f"c{i + 1}" for i in range(frame.shape[1])], axis=1)
        out.append(renamed[list(rng.permutation(renamed.columns))])
    return out


def dataset_cases(names: list[str]) -> list[Case]:
    cases = []
    for name, (load, target) in DATASETS.items():
        if name not in names:
            continue
        mode, frames, truth = load()
        rows = _rows_truth(mode, frames, truth)
        cases.append(Case(name, "named", mode, frames, rows, target))
        cases.append(Case(name, "neutral, shuffled", mode, _neutral(frames, SEED), rows,
                          NEUTRAL_TARGET.get(name)))
    return cases


def trap_cases(names: list[str], sizes: list[int]):
    """Built one at a time (a 1M table is not held longer than its run)."""
    for trap in TRAPS:
        if trap not in names:
            continue
        for size in sizes:
            mode, frames, truth = traps(size, seed=SEED, trap=trap)
            yield Case(f"{trap} ({size // 1000:,}k)", "generator", mode, frames,
                       _rows_truth(mode, frames, truth), TRAP_TARGET[trap])


# ------------------------------------------------------------------------------------------
# Running as a user does, and scoring
# ------------------------------------------------------------------------------------------


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(args: list[str], timeout: float) -> tuple[int, str, float]:
    start = time.perf_counter()
    try:
        proc = subprocess.run(LINKAGE + args, capture_output=True, text=True, timeout=timeout,
                              env=_env(), cwd=ROOT)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout:.0f} s", time.perf_counter() - start
    lines = [x.strip() for x in (proc.stderr + "\n" + proc.stdout).splitlines() if x.strip()]
    errors = [x for x in lines if "error" in x.lower()]
    last = (errors or lines or [""])[-1]
    raised = [x for x in lines if re.match(r"^[\w.]+(Error|Exception)\b", x)]
    if raised and raised[-1] != last:  # a traceback: its exception says what went wrong
        last = f"{raised[-1]} ({last})"
    return proc.returncode, last, time.perf_counter() - start


def _has_option(command: list[str], option: str) -> bool:
    proc = subprocess.run(LINKAGE + command + ["--help"], capture_output=True, text=True,
                          env=_env(), cwd=ROOT)
    return option in proc.stdout


def _position_maps(out: Path, frames: list[pd.DataFrame]) -> list[dict[str, int]]:
    """Run id (as text) -> row position, per input table, from the id column the run used."""
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    id_column = summary.get("id_column")
    names = id_column if isinstance(id_column, list) else [id_column] * len(frames)
    names = [*names[:1], *(_right_name(out, n) for n in names[1:])]
    maps = []
    for frame, name in zip(frames, names, strict=False):
        if isinstance(name, str) and name in frame.columns:
            maps.append({str(v): i for i, v in enumerate(frame[name])})
        else:  # row numbers became the ids (`row_id`, from 0)
            maps.append({str(i): i for i in range(len(frame))})
    return maps


def _right_name(out: Path, name):
    """The right table's own name of a column the run's rules renamed (`rename_right`)."""
    import yaml

    rules = yaml.safe_load((out / "rules.yaml").read_text(encoding="utf-8")) or {}
    renamed = {v: k for k, v in (rules.get("rename_right") or {}).items()}
    return renamed.get(name, name)


def _score(case: Case, out: Path) -> tuple[float, float, float]:
    maps = _position_maps(out, case.frames)
    if case.mode == "link":
        links = pd.read_parquet(out / "links.parquet", columns=["id_l", "id_r"])
        left = links["id_l"].astype(str).map(maps[0]).to_numpy()
        right = links["id_r"].astype(str).map(maps[1]).to_numpy()
        predicted = set(zip(left.tolist(), right.tolist(), strict=True))
        tp = len(predicted & case.truth)
        p = tp / len(predicted) if predicted else 0.0
        r = tp / len(case.truth) if case.truth else 0.0
    else:
        clusters = pd.read_parquet(out / "clusters.parquet")
        rows = clusters.iloc[:, 0].astype(str).map(maps[0]).to_numpy()
        p, r, _ = pairwise(clusters["cluster_id"].to_numpy(), case.truth[rows])
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def pairwise(cluster: np.ndarray, entity: np.ndarray) -> tuple[float, float, float]:
    """Pairwise precision, recall and F1 of a cluster per record against its true entity."""
    frame = pd.DataFrame({"c": cluster, "e": entity})

    def pairs(keys):
        sizes = frame.groupby(keys).size().to_numpy()
        return int((sizes * (sizes - 1) // 2).sum())

    both, predicted, actual = pairs(["c", "e"]), pairs(["c"]), pairs(["e"])
    p = both / predicted if predicted else 0.0
    r = both / actual if actual else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def _diagnostics(out: Path) -> str:
    path = out / "summary.json"
    if not path.exists():
        return "n/a"
    found = json.loads(path.read_text(encoding="utf-8")).get("diagnostics")
    if found is None:
        return "n/a (no `diagnostics`)"
    if isinstance(found, dict):
        found = [{"code": k, **(v if isinstance(v, dict) else {"value": v})}
                 for k, v in found.items()]
    names = []
    for item in found:
        if isinstance(item, dict):
            if item.get("raised") is False or item.get("ok") is True:
                continue
            names.append(str(item.get("code") or item.get("name") or item.get("kind") or item))
        else:
            names.append(str(item))
    return ", ".join(names) if names else "none"


def _prior(out: Path) -> float | None:
    for name in ("model.json", "summary.json"):
        path = out / name
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            prior = data.get("prior")
            if prior is None and isinstance(data.get("model"), dict):
                prior = data["model"].get("prior")
            if isinstance(prior, int | float):
                return float(prior)
    return None


def _oracle(case: Case, todo: Path, maps: list[dict[str, int]]) -> pd.DataFrame:
    """Fill `label` of a `linkage sample` file from the truth: the person answering."""
    frame = pd.read_csv(todo, dtype=str, keep_default_na=False)
    left = frame["id_l"].map(maps[0]).to_numpy()
    right = frame["id_r"].map(maps[-1]).to_numpy()
    if case.mode == "dedupe":
        same = case.truth[left] == case.truth[right]
    else:
        same = np.array([(a, b) in case.truth for a, b in zip(left, right, strict=True)])
    frame["label"] = same.astype(int).astype(str)
    return frame


def _inputs(case: Case, work: Path) -> list[str]:
    files = []
    for k, frame in enumerate(case.frames):
        path = work / f"input{k + 1}.parquet"
        frame.to_parquet(path, index=False)
        files.append(str(path))
    return files


def _truth_labels(case: Case, pairs: pd.DataFrame, maps: list[dict[str, int]]) -> pd.DataFrame:
    """`pairs` (id_l, id_r as the run wrote them) with `label` from the truth."""
    frame = pd.DataFrame({"id_l": pairs["id_l"].astype(str), "id_r": pairs["id_r"].astype(str)})
    left = frame["id_l"].map(maps[0]).to_numpy()
    right = frame["id_r"].map(maps[-1]).to_numpy()
    if case.mode == "dedupe":
        same = case.truth[left] == case.truth[right]
    else:
        same = np.array([(a, b) in case.truth for a, b in zip(left, right, strict=True)])
    frame["label"] = same.astype(int)
    return frame


def _scorer(out: Path) -> str:
    """Which scorer made the run: the pipeline's choice with labels, else model.json's type."""
    try:
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        labels = summary.get("labels")
        if isinstance(labels, dict) and labels.get("mode"):
            return str(labels["mode"])
        model = json.loads((out / "model.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if "cv" in model and "params" in model:
        return "supervised (" + str(model["params"].get("model", "gradient_boosting")) + ")"
    return str(model.get("type") or model.get("scorer") or "fellegi_sunter")


def run_case(case: Case, rounds: list[int], timeout: float, labels_ok: bool,
             reference: bool) -> list[dict]:
    results = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="generalization-") as tmp:
        work = Path(tmp)
        files = _inputs(case, work)
        base = [case.mode, *files, "--no-progress"]

        def one(labels, out: Path, extra: list[str], kind: str = "") -> dict:
            row = {"name": case.name, "variant": case.variant, "labels": labels,
                   "target": case.target, "kind": kind}
            rc, last, seconds = _run([*base, "--out", str(out), *extra], timeout)
            row.update(rc=rc, seconds=seconds)
            if rc not in (0, 1, 3) or not (out / "summary.json").exists():
                row["error"] = f"exit {rc}: {last}"
                return row
            try:
                row["p"], row["r"], row["f1"] = _score(case, out)
            except Exception as err:  # a failed case is reported, not fatal
                row["error"] = f"scoring failed: {type(err).__name__}: {err}"
            row["prior"], row["diagnostics"] = _prior(out), _diagnostics(out)
            row["scorer"] = _scorer(out)
            return row

        runs = {0: work / "run0"}
        results.append({**one(0, runs[0], []), "round": 0})
        print(_line(results[-1]), flush=True)
        labelled = None
        previous = 0
        for n_labels in rounds:
            row = {"name": case.name, "variant": case.variant, "labels": n_labels,
                   "target": case.target, "kind": ""}
            source = runs[previous]
            if not labels_ok:
                row["error"] = "n/a (not available: `sample --active`, `--labels`)"
            elif not (source / "summary.json").exists():
                row["error"] = "n/a (no run to sample from)"
            else:
                todo = work / f"todo{n_labels}.csv"
                rc, last, _ = _run(["sample", str(source), "--active", "--n",
                                    str(n_labels - previous), "--out", str(todo)], timeout)
                if rc != 0 or not todo.exists():
                    row["error"] = f"sample exit {rc}: {last}"
                else:
                    answered = _oracle(case, todo, _position_maps(source, case.frames))
                    labelled = (answered if labelled is None
                                else pd.concat([labelled, answered], ignore_index=True))
                    labelled = labelled.drop_duplicates(["id_l", "id_r"])
                    label_file = work / f"labels{n_labels}.csv"
                    labelled.to_csv(label_file, index=False)
                    runs[n_labels] = work / f"run{n_labels}"
                    row = one(len(labelled), runs[n_labels], ["--labels", str(label_file)])
                    previous = n_labels
            row["round"] = n_labels
            results.append(row)
            print(_line(results[-1]), flush=True)
        if reference:
            results.extend(reference_runs(case, runs[0], work, one))
    for row in results:
        row["case_seconds"] = time.perf_counter() - started
    return results


def reference_runs(case: Case, run0: Path, work: Path, one) -> list[dict]:
    """The runs with all the labels (see the module's docstring): the reference rows."""
    pairs_file = run0 / "pairs.parquet"
    head = {"name": case.name, "variant": case.variant, "target": case.target,
            "kind": "reference"}
    if not pairs_file.exists():
        return [{**head, "labels": "all", "round": "all",
                 "error": "n/a (the run without labels failed)"}]
    pairs = pd.read_parquet(pairs_file, columns=["id_l", "id_r"])
    if len(pairs) > REFERENCE_PAIRS:
        pairs = pairs.sample(REFERENCE_PAIRS, random_state=SEED).sort_index()
    labelled = _truth_labels(case, pairs, _position_maps(run0, case.frames))
    label_file = work / "labels_all.csv"
    labelled.to_csv(label_file, index=False)
    n = len(labelled)
    n_match = int(labelled["label"].sum())
    if n_match < 2 or n - n_match < 2:
        return [{**head, "labels": f"all {n}", "round": "all",
                 "error": f"n/a ({n_match} of the {n} candidate pairs are matches)"}]
    import yaml

    rules = yaml.safe_load((run0 / "rules.yaml").read_text(encoding="utf-8"))
    same = ["--labels", str(label_file)]
    if case.mode == "dedupe":  # the scorers' clusters, not the labels' own joins
        scorers_only = work / "rules_scorers.yaml"
        scorers_only.write_text(yaml.safe_dump({**rules, "join_labelled": False},
                                               sort_keys=False), encoding="utf-8")
        same += ["--rules", str(scorers_only)]
    rows = [{**one(f"all {n}", work / "run_all", same, "reference"), "round": "all"}]
    print(_line(rows[-1]), flush=True)
    rules["scoring"] = {"type": "supervised", "labels": str(label_file)}
    rules.pop("one_to_one_threshold", None)  # a record-prior move is for a fitted prior only
    rules_file = work / "rules_supervised.yaml"
    rules_file.write_text(yaml.safe_dump(rules, sort_keys=False), encoding="utf-8")
    rows.append({**one(f"all {n}", work / "run_supervised", ["--rules", str(rules_file)],
                       "reference"), "round": "all"})
    print(_line(rows[-1]), flush=True)
    return rows


# ------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------


def _fmt(x, spec=".4f") -> str:
    return "" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, spec)


def _best(results: list[dict]) -> dict[tuple[str, str], float]:
    """(name, variant) -> the best F1 of its reference runs (all the labels)."""
    best: dict[tuple[str, str], float] = {}
    for r in results:
        if r.get("round") == "all" and "f1" in r:
            key = (r["name"], r["variant"])
            best[key] = max(best.get(key, 0.0), r["f1"])
    return best


def _other_sizes(name: str, named: dict) -> list[tuple[str, float]]:
    """(size label, F1 without labels) of the same stress table at each smaller size that ran:
    the issue holds the generator's tables at 10k, 100k and 1M to within SCALE_WITHIN of one
    another, so each is held to every smaller one (each pair is checked once, on the larger)."""
    found = re.fullmatch(r"(.+) \(([\d,]+)k\)", name)
    if not found:
        return []
    trap, size = found.group(1), int(found.group(2).replace(",", ""))
    out = []
    for (other, rnd), f1 in named.items():
        match = re.fullmatch(r"(.+) \(([\d,]+)k\)", other)
        if rnd != 0 or not match or match.group(1) != trap:
            continue
        smaller = int(match.group(2).replace(",", ""))
        if smaller < size:
            out.append((smaller, f"{match.group(2)}k", f1))
    return [(label, f1) for _, label, f1 in sorted(out)]


def _target(row: dict, named: dict, best: dict, last_round) -> tuple[str, str]:
    """(target text, met / not met) for one row; `named` holds F1 of the named runs by
    (name, round), `best` the reference by (name, variant).

    The run without labels is held to the issue's F1 target (and a neutral variant to within
    0.05 of the named one, a stress table to within SCALE_WITHIN of the same table at each
    smaller size); the last label round to within WITHIN of the best F1 with all the labels;
    other rows are for information."""
    key = (row["name"], row["variant"])
    if row.get("round") == last_round and last_round != 0:
        if key not in best:
            return "", ""
        if "error" in row:
            return f"within {WITHIN} of best ({best[key]:.4f})", "not met"
        return (f"within {WITHIN} of best ({best[key]:.4f})",
                "met" if row["f1"] >= best[key] - WITHIN else "not met")
    if row.get("round") != 0:
        return "", ""
    if "error" in row:
        return (f"≥ {row['target']:.2f}" if row["target"] else "", "not met" if row["target"]
                else "")
    f1 = row["f1"]
    checks = []
    if row["target"] is not None:
        checks.append((f"≥ {row['target']:.2f}", f1 >= row["target"]))
    if row["variant"].startswith("neutral") and (row["name"], 0) in named:
        ref = named[(row["name"], 0)]
        checks.append((f"within 0.05 of named ({ref:.4f})", f1 >= ref - 0.05))
    for label, ref in _other_sizes(row["name"], named):
        checks.append((f"within {SCALE_WITHIN} of {label} ({ref:.4f})",
                       abs(f1 - ref) <= SCALE_WITHIN + 1e-12))
    if not checks:
        return "", ""
    return "; ".join(c for c, _ in checks), "met" if all(ok for _, ok in checks) else "not met"


def _short(text: str, limit: int = 160) -> str:
    text = text.replace("|", "/")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line(row: dict) -> str:
    head = f"{row['name']} | {row['variant']} | {row['labels']}"
    if "error" in row:
        return f"{head} | {row['error']}"
    return (f"{head} | {row.get('scorer', '')} | F1 {row['f1']:.4f} P {row['p']:.4f} "
            f"R {row['r']:.4f} | prior {_fmt(row['prior'])} | {row['diagnostics']} | "
            f"{row['seconds']:.1f} s")


def _cell(row: dict | None) -> str:
    if row is None:
        return ""
    if "error" in row:
        return "failed" if not row["error"].startswith("n/a") else "n/a"
    return f"{row['f1']:.4f}"


def write_report(results: list[dict], path: Path, command: str, started: str,
                 load: tuple[float, float, float], rounds: list[int], *,
                 total: float | None = None, partial: bool = False) -> None:
    named = {(r["name"], r["round"]): r["f1"] for r in results
             if "f1" in r and not r["variant"].startswith("neutral")}
    best = _best(results)
    last_round = rounds[-1] if rounds else 0
    met = [_target(r, named, best, last_round)[1] for r in results]
    status = ("**Partial**: the run is still going (or was stopped); the rows below are the "
              "cases finished so far." if partial else
              f"Total time: {total / 60:.1f} min." if total is not None else "")
    lines = [
        "# Generalization: zero-configuration accuracy (issue 14)",
        "",
        f"Command: `{command}`. Started {started}; machine: {os.cpu_count()} cores, load "
        f"average at the start {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1, 5, 15 min), "
        f"so seconds are indicative only. {status}",
        "",
        packages_line(),
        "",
        "Each case runs as a user runs it: `linkage dedupe|link FILE... --out DIR` without "
        "rules (suggested rules), in a subprocess. `labels` 10 and 25: an oracle answers the "
        "pairs of `linkage sample RUN --active --n N --out todo.csv` from the truth and the "
        "table is run again with `--labels` (10, then 15 more sampled from the 10-label run, "
        "both files together; `labels` is the number of distinct labelled pairs). "
        "Pairwise precision, recall and F1 end to end (blocking included): for dedupe over the "
        "pairs implied by the clusters, for link over links.parquet. `prior` is from model.json; "
        "`diagnostics` from summary.json; `scorer` is the scorer the run used (with labels: "
        "summary.json `labels.mode`). `neutral, "
        "shuffled`: columns renamed c1, c2, ... and put in a seeded random order; in a link each "
        "table is renamed by its own column order, so where the tables' columns differ "
        "(imdb_tmdb) one name holds different fields on the two sides. Truth is used only to "
        "score and to answer labels; a failed run shows its exit code and last error line.",
        "",
        "**Best with all the labels** (rows `all N`, the reference for the issue's target "
        "'with 25 oracle labels, within 0.02 of the best F1 that any of our scorers reaches "
        "with all the labels'): the candidate pairs of the run without labels (its "
        f"pairs.parquet; a seeded uniform sample of {REFERENCE_PAIRS:,} of them where there "
        "are more; N is how many) are all labelled from the truth; then two runs: (a) the same "
        "command with `--labels` holding them (the pipeline's own choice: semi-supervised "
        "Fellegi-Sunter, or the logistic supervised scorer where its cross-validation is "
        "clearly better; in a dedupe with its rules.yaml and `join_labelled: false`, so that "
        "the clusters are the scorer's, not the labels' own joins, which with every candidate "
        "pair labelled would be the truth), and (b) the run's suggested rules (its "
        "rules.yaml) with the scorer "
        "replaced by `supervised` (gradient boosting, threshold by 5-fold cross-validation) "
        "trained on the same labels. The reference is the better F1 of (a) and (b); the "
        "25-label row is held to it. Both see only the candidate pairs blocking proposed, so "
        "the reference is bounded by the suggested blocking's recall, as the label rows are. "
        "Where the reference is below the F1 "
        "without labels, our scorers do worse with every label than with none: the labels "
        "harm there, and meeting the 25-label target says little.",
        "",
        "The stress tables (`generator`) come from this project's own generator "
        "(`linkage.synth.traps`, seed 42), one trap each: they are in-sample for anything tuned "
        "on them. Their targets are ours, in the issue's spirit (tests/test_generalization.py "
        "asserts them on small tables); the issue's own targets are on the public data sets. "
        "Targets: the run without labels is held to the F1 target (a neutral variant also to "
        "within 0.05 of the named one, a stress table to within 0.01 of the same table at each "
        "smaller size: the issue's 10k, 100k and 1M within 0.01); the 25-label "
        "row to within 0.02 of the best with all the labels; other rows are for information.",
        "",
        f"Targets met: {met.count('met')} of {met.count('met') + met.count('not met')}.",
        "",
        "## Summary",
        "",
    ]
    head = ["data set", "variant", "F1, no labels", "target met",
            *(f"F1, {n} labels" for n in rounds), "best with all labels",
            *([f"{last_round} labels within {WITHIN}"] if rounds else []), "case seconds"]
    align = ["---", "---", "---:", "---", *("---:" for _ in rounds), "---:",
             *(["---"] if rounds else []), "---:"]
    lines += ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    cases = list(dict.fromkeys((r["name"], r["variant"]) for r in results))
    for key in cases:
        rows = [r for r in results if (r["name"], r["variant"]) == key]
        by_round = {r["round"]: r for r in rows if r.get("round") != "all"}
        last = by_round.get(last_round) if rounds else None
        ok = _target(last, named, best, last_round)[1] if last is not None else ""
        ref = f"{best[key]:.4f}" if key in best else (
            "n/a" if any(r.get("round") == "all" for r in rows) else "")
        first = by_round.get(0)
        first_ok = _target(first, named, best, last_round)[1] if first is not None else ""
        cells = [key[0], key[1], _cell(first), first_ok,
                 *(_cell(by_round.get(n)) for n in rounds), ref, *([ok] if rounds else []),
                 f"{rows[0].get('case_seconds', 0):.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Every run",
        "",
        "| data set | variant | labels | scorer | F1 | precision | recall | prior | diagnostics | "
        "seconds | target | met |",
        "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: | --- | --- |",
    ]
    for row, ok in zip(results, met, strict=True):
        target, _ = _target(row, named, best, last_round)
        if "error" in row:
            lines.append(f"| {row['name']} | {row['variant']} | {row['labels']} | | "
                         f"{_short(row['error'])} | | | | | "
                         f"{_fmt(row.get('seconds'), '.1f')} | {target} | {ok} |")
            continue
        lines.append(
            f"| {row['name']} | {row['variant']} | {row['labels']} | {row.get('scorer', '')} | "
            f"{row['f1']:.4f} | {row['p']:.4f} | {row['r']:.4f} | {_fmt(row['prior'])} | "
            f"{row['diagnostics'].replace('|', '/')} | {row['seconds']:.1f} | {target} | {ok} |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _groups(args, sizes: list[int]) -> list[Callable[[], Iterator[Case]]]:
    """One loader per data set (its named and neutral cases) and per stress table; each builds
    its cases when it runs, so that a 1M table is held only while it runs."""
    groups: list[Callable[[], Iterator[Case]]] = []
    for name in DATASETS:
        if name in args.only:
            groups.append(lambda name=name: iter(dataset_cases([name])))
    for trap in TRAPS:
        if trap in args.only:
            for size in sizes:
                groups.append(lambda trap=trap, size=size: trap_cases([trap], [size]))
    return groups


def main(argv: list[str] | None = None) -> int:
    names = [*DATASETS, *TRAPS]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="the 10k and 100k stress tables only (no 1M); label rounds and the "
                             "reference with all labels on the named public data sets only "
                             "(neutral variants and stress tables run without labels)")
    parser.add_argument("--no-labels", action="store_true",
                        help="no label rounds and no reference runs: suggested rules alone")
    parser.add_argument("--only", nargs="+", choices=names, default=names, metavar="NAME",
                        help=f"data sets and traps to run: {', '.join(names)}")
    parser.add_argument("--sizes", nargs="+", type=int, default=None,
                        help="stress table rows (default 10000 100000 1000000; --quick: "
                             "10000 100000)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="cases run at a time (each is one subprocess at a time)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--results", type=Path, default=HERE / "GENERALIZATION.md")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000])
    rounds = [] if args.no_labels else [10, 25]
    command = "python bench/generalization.py" + " ".join(
        [""] + (["--quick"] if args.quick else [])
        + (["--no-labels"] if args.no_labels else [])
        + (["--only", *args.only] if args.only != names else [])
        + (["--sizes", *map(str, args.sizes)] if args.sizes else [])
        + (["--jobs", str(args.jobs)] if args.jobs != 1 else []))
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()
    clock = time.perf_counter()
    labels_ok = bool(rounds) and (_has_option(["sample"], "--active")
                                  and _has_option(["dedupe"], "--labels"))

    def run_group(load_cases) -> list[dict]:
        out = []
        for case in load_cases():
            labelled = labels_ok and not (args.quick and case.variant != "named")
            out.extend(run_case(case, rounds if labelled else [], args.timeout, labels_ok,
                                reference=labelled))
        return out

    groups = _groups(args, sizes)
    done: dict[int, list[dict]] = {}

    def ordered() -> list[dict]:
        return [row for k in sorted(done) for row in done[k]]

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_group, g): k for k, g in enumerate(groups)}
        for future in futures:  # in order; the report is rewritten as each group ends
            done[futures[future]] = future.result()
            write_report(ordered(), args.results, command, started, load, rounds,
                         partial=len(done) < len(groups))
    total = time.perf_counter() - clock
    write_report(ordered(), args.results, command, started, load, rounds, total=total)
    print(f"total {total / 60:.1f} min ({total:.0f} s); wrote {args.results}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
