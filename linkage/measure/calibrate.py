"""Thresholds earned, not guessed: sample pairs per score band for labelling, then measure
precision per band and recommend a threshold for a target precision.

Bands are on `match_probability` (Fellegi-Sunter, supervised) or, with `on="weight"`, on the
match weight (any scorer, rule sums included).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.io import read
from linkage.options import ScoreScale

SCORE = {"probability": "match_probability", "weight": "match_weight"}


def read_run(run_dir: Path) -> tuple[pd.DataFrame, dict]:
    if not (run_dir / "pairs.parquet").exists():
        raise InputError(f"{run_dir}: not a run folder (no pairs.parquet).")
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    return pd.read_parquet(run_dir / "pairs.parquet"), summary


def band_edges(bands: list[float], on: ScoreScale) -> list[float]:
    edges = sorted(bands)
    if on == "probability" and (edges[0] < 0 or edges[-1] > 1):
        raise InputError(f"--bands must be probabilities in [0, 1]. Got {bands!r} instead.")
    top = 1.0 + 1e-12 if on == "probability" else math.inf
    return [*edges, top]


def band_of(scores: np.ndarray, edges: list[float]) -> np.ndarray:
    """Index of the band [edges[k], edges[k+1]) of each score; -1 below the first edge."""
    return np.searchsorted(np.asarray(edges), scores, side="right") - 1


def _input(run_dir: Path, name: str) -> pd.DataFrame:
    """A run's input, found by the path its summary.json recorded (as the run was given it)."""
    path = Path(name)
    if not path.exists():
        raise InputError(
            f"{run_dir}/summary.json: the run's input {name} is not found from {Path.cwd()}. "
            "The side-by-side records come from it: work from the folder the run was started in "
            "(the path is relative to it), or put the file back."
        )
    return read(path)


def sample_pairs(run_dir: str | Path, bands: list[float], per_band: int, *,
                 on: ScoreScale = "probability", seed: int = 0) -> pd.DataFrame:
    """Up to `per_band` scored pairs from each band, with both records side by side and an
    empty `label` column (1 match, 0 non-match, blank unsure) for a person to fill."""
    run_dir = Path(run_dir)
    pairs, summary = read_run(run_dir)
    score = pairs[SCORE[on]].to_numpy(dtype=float)
    if on == "probability" and np.isnan(score).all():
        raise InputError(f"{run_dir}: this run's scorer gives no probabilities (a rule sum). "
                         "Sample by match weight instead: --on weight.")
    edges = band_edges(bands, on)
    band = band_of(score, edges)
    picked = []
    rng = np.random.default_rng(seed)
    for k in range(len(edges) - 1):
        rows = np.flatnonzero(band == k)
        take = np.sort(rng.choice(rows, size=min(per_band, len(rows)), replace=False))
        picked.append(pairs.iloc[take].assign(band=f"[{edges[k]:g}, {edges[k + 1]:g})"))
    chosen = pd.concat(picked, ignore_index=True)
    return side_by_side(run_dir, summary, chosen, ["band"])


def side_by_side(run_dir: Path, summary: dict, chosen: pd.DataFrame,
                 first: list[str]) -> pd.DataFrame:
    """The `chosen` pairs of a run (rows of its pairs.parquet) as the CSV a person labels:
    the `first` columns, the ids and the decision as it was, both records side by side
    (`<column>_l`, `<column>_r`, read from the run's inputs) and an empty `label` column."""
    tables = [_input(run_dir, i["name"]) for i in summary["inputs"]]
    id_col = summary["id_column"]
    left = tables[0]
    right = tables[-1]
    if len(tables) == 2:  # a link: the right table under the left's names, as the run read it
        right = right.rename(columns=_rename_right(run_dir))
    if id_col not in left.columns:  # row numbers were the ids
        left = left.assign(**{id_col: np.arange(len(left))})
        right = right.assign(**{id_col: np.arange(len(right))})
    left = left.astype({id_col: str}).add_suffix("_l").rename(columns={f"{id_col}_l": "_kl"})
    right = right.astype({id_col: str}).add_suffix("_r").rename(columns={f"{id_col}_r": "_kr"})
    # The decision as it was, so that `linkage drift` can tell which labelled pairs flip.
    out = chosen[[*first, "id_l", "id_r", "match_weight", "match_probability",
                  "is_match"]].copy()
    out["_kl"], out["_kr"] = out["id_l"].astype(str), out["id_r"].astype(str)
    out = out.merge(left, on="_kl", how="left").merge(right, on="_kr", how="left")
    out = out.drop(columns=["_kl", "_kr"])
    out["label"] = ""
    return out.reset_index(drop=True)


def _rename_right(run_dir: Path) -> dict[str, str]:
    """The `rename_right` of the rules a link run saved (right name -> left name), or {}."""
    path = Path(run_dir) / "rules.yaml"
    if not path.is_file():
        return {}
    import yaml

    rules = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return dict(rules.get("rename_right") or {})


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def calibrate(labels: pd.DataFrame, bands: list[float], *, on: ScoreScale = "probability",
              target: float = 0.95) -> tuple[pd.DataFrame, float | None]:
    """Precision per band (with its 95% interval) from labelled pairs, and the lowest band
    edge from which every band up reaches `target` precision (None if none does)."""
    if "label" not in labels.columns or SCORE[on] not in labels.columns:
        raise InputError(f"the labels need columns `label` and `{SCORE[on]}` (the file that "
                         "`linkage sample` writes, with `label` filled in).")
    text = labels["label"].astype(str).str.strip().str.lower()
    value = text.map({"1": 1, "1.0": 1, "match": 1, "yes": 1, "true": 1,
                      "0": 0, "0.0": 0, "non-match": 0, "no": 0, "false": 0})
    labelled = labels.assign(y=value).dropna(subset=["y"])
    scores = pd.to_numeric(labelled[SCORE[on]], errors="coerce")
    if on == "probability" and len(labelled) and scores.isna().all():
        raise InputError("the labelled pairs have no match_probability: the run's scorer (a rule "
                         "sum) gives match weights only. Pass `--on weight` with bands on the "
                         "weight scale (e.g. --bands 0,2,4,6,8).")
    edges = band_edges(bands, on)
    band = band_of(labelled[SCORE[on]].to_numpy(dtype=float), edges)
    rows = []
    for k in range(len(edges) - 1):
        y = labelled["y"].to_numpy()[band == k]
        matches, n = int(y.sum()), len(y)
        low, high = wilson(matches, n)
        rows.append({"band_from": edges[k], "band_to": edges[k + 1], "labelled": n,
                     "matches": matches, "precision": matches / n if n else float("nan"),
                     "ci_low": low, "ci_high": high})
    table = pd.DataFrame(rows)
    recommended = None
    for k in range(len(table) - 1, -1, -1):
        if table.loc[k, "labelled"] == 0 or table.loc[k, "precision"] < target:
            break
        recommended = float(table.loc[k, "band_from"])
    return table, recommended
