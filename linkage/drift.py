"""Drift between reruns: labels earned on an earlier run, checked against a new one.

Each labelled pair is looked up in the new run's `pairs.parquet`; precision per score band is
measured then (the scores the labels were sampled with, or `--baseline`'s) and now, with 95%
Wilson intervals, and every pair whose decision flipped or that is no longer scored is listed.
`max_drop` turns it into a gate: the quarterly re-check is one command with an exit code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.measure.calibrate import SCORE, band_edges, band_of, calibrate, read_run
from linkage.options import AutoScoreScale
from linkage.review import (
    PROBABILITY_BANDS,
    bands_of,
    has_probabilities,
    label_state,
    read_pairs_csv,
)

TRUTH = {"match": 1.0, "non-match": 0.0}


@dataclass
class Drift:
    """Precision per band then and now (`bands`), and one row per labelled pair (`pairs`)."""

    on: str
    bands: pd.DataFrame
    pairs: pd.DataFrame
    max_drop: float | None = None

    @property
    def flipped(self) -> pd.DataFrame:
        return self.pairs[self.pairs["flipped"]]

    @property
    def no_longer_scored(self) -> pd.DataFrame:
        return self.pairs[~self.pairs["scored_now"]]

    def _worst(self) -> pd.Series | None:
        """The band whose precision fell most (only bands labelled then and now count)."""
        both = self.bands.dropna(subset=["change"])
        if both.empty or both["change"].min() >= 0:
            return None
        return both.loc[both["change"].idxmin()]

    @property
    def passed(self) -> bool:
        worst = self._worst()
        return self.max_drop is None or worst is None or -worst["change"] <= self.max_drop

    def verdict(self) -> str:
        worst = self._worst()
        if worst is None:
            fall = "precision held or rose in every band labelled then and now"
        else:
            beyond = worst["ci_high_now"] < worst["ci_low_then"]
            fall = (f"precision in band {worst['band']} fell {worst['precision_then']:.3f} -> "
                    f"{worst['precision_now']:.3f} (by {-worst['change']:.3f}; "
                    + ("beyond the 95% intervals)" if beyond
                       else "within the 95% intervals: label more pairs to be sure)"))
        if self.max_drop is None:
            return f"DRIFT: {fall}" if worst is not None else f"STABLE: {fall}"
        verdict = "PASS" if self.passed else "FAIL"
        return f"{verdict} (--max-drop {self.max_drop:g}): {fall}"

    def as_dict(self) -> dict:
        def records(frame: pd.DataFrame) -> list[dict]:
            clean = frame.astype(object).where(frame.notna(), None)
            return clean.to_dict(orient="records")

        pair_columns = ["id_l", "id_r", "label", "band_then", "band_now", "match_then",
                        "match_now"]
        return {"on": self.on, "passed": self.passed, "max_drop": self.max_drop,
                "verdict": self.verdict(), "labelled_pairs": len(self.pairs),
                "bands": records(self.bands),
                "pairs": records(self.pairs.drop(columns="flipped")),
                "flipped": records(self.flipped[pair_columns]),
                "no_longer_scored": records(self.no_longer_scored[["id_l", "id_r", "label",
                                                                   "band_then"]])}

    def format(self) -> str:
        lines = [f"{len(self.pairs):,} labelled pairs; precision per band ({self.on}), "
                 "then -> now (95% Wilson interval):"]
        for _, row in self.bands.iterrows():
            lines.append(f"  {row['band']}: {_precision(row, 'then')} -> "
                         f"{_precision(row, 'now')}")
        scored = self.pairs[self.pairs["scored_now"]]
        moved = int((scored["band_then"].fillna("") != scored["band_now"].fillna("")).sum())
        lines.append(f"  {moved:,} of {len(scored):,} pairs still scored changed band")
        flipped = self.flipped
        gained = int(flipped["match_now"].astype(bool).sum())
        lines.append(f"  {len(flipped):,} pairs flipped their decision ({gained} now a match, "
                     f"{len(flipped) - gained} no longer); "
                     f"{len(self.no_longer_scored):,} no longer scored")
        if self.pairs["match_then"].isna().all():
            lines.append("  (the labels carry no decisions: pass --baseline OLD_RUN to list "
                         "flipped pairs)")
        for _, row in flipped.head(10).iterrows():
            was, now = ("match", "no match") if row["match_then"] else ("no match", "match")
            lines.append(f"    {row['id_l']} ~ {row['id_r']} (label {row['label']}): {was} -> "
                         f"{now}, band {row['band_then']} -> {row['band_now']}")
        if len(flipped) > 10:
            lines.append(f"    ... and {len(flipped) - 10:,} more (--json lists every pair)")
        lines.append(self.verdict())
        return "\n".join(lines)


def _precision(row: pd.Series, when: str) -> str:
    n = int(row[f"labelled_{when}"])
    if n == 0:
        return "n/a (0 labelled)"
    return (f"{row[f'precision_{when}']:.3f} [{row[f'ci_low_{when}']:.3f}, "
            f"{row[f'ci_high_{when}']:.3f}] of {n}")


def _keys(frame: pd.DataFrame, ordered: bool) -> pd.Series:
    """One key per pair; a dedupe pair is the same pair whichever record comes first."""
    left, right = frame["id_l"].astype(str), frame["id_r"].astype(str)
    if not ordered:
        left, right = left.where(left <= right, right), right.where(left <= right, left)
    return left + "\x1f" + right


def _decisions(run_dir: Path, ordered: bool) -> pd.DataFrame:
    """A run's scores and decisions, indexed by pair key."""
    pairs, _ = read_run(run_dir)
    table = pairs[["match_weight", "match_probability", "is_match"]].copy()
    table.index = _keys(pairs, ordered)
    return table[~table.index.duplicated()]


def _names(edges: list[float]) -> list[str]:
    return [f"[{edges[k]:g}, {edges[k + 1]:g})" for k in range(len(edges) - 1)]


def _band_names(scores: np.ndarray, edges: list[float]) -> list[str | None]:
    names = _names(edges)
    return [names[k] if k >= 0 and not np.isnan(s) else None
            for k, s in zip(band_of(scores, edges), scores, strict=True)]


def drift(new_run: str | Path, labels: str | Path, *, baseline: str | Path | None = None,
          on: AutoScoreScale = "auto", bands: list[float] | None = None,
          max_drop: float | None = None) -> Drift:
    """How precision per band moved between the run the `labels` were sampled from (their own
    scores, or `baseline`'s) and `new_run`, with the pairs that flipped or are no longer scored.
    `on` is "probability", "weight" or "auto" (probabilities when both runs give them)."""
    new_run, labels = Path(new_run), Path(labels)
    table = read_pairs_csv(labels, "labels file")
    table["y"] = table["label"].map(lambda text: TRUTH.get(label_state(text)))
    table = table.dropna(subset=["y"]).reset_index(drop=True)
    if table.empty:
        raise InputError(f"{labels}: no pair is labelled 1 (match) or 0 (non-match). Label some "
                         "with `linkage review` first.")
    _, summary = read_run(new_run)
    ordered = summary.get("mode") == "link"  # a link pair is (left record, right record)
    keys = _keys(table, ordered)
    now = _decisions(new_run, ordered).reindex(keys)
    if baseline is not None:
        then = _decisions(Path(baseline), ordered).reindex(keys)
        missing = int(then["match_weight"].isna().sum())
        if missing:
            raise InputError(f"{labels}: {missing} labelled pairs are not in --baseline "
                             f"{baseline}'s pairs.parquet, so the labels were not sampled from "
                             "it. Pass the run they were sampled from as --baseline, or leave "
                             "--baseline out to use the scores the labels file carries.")
    else:
        then = table[["match_weight", "match_probability"]].apply(pd.to_numeric,
                                                                  errors="coerce")
        # Labels sampled before `linkage sample` wrote `is_match` carry no decisions.
        then["is_match"] = (table["is_match"].str.lower().map({"true": True, "false": False})
                            if "is_match" in table.columns else None)
        then.index = keys
    if on == "auto":
        both = has_probabilities(then["match_probability"]) and has_probabilities(
            now["match_probability"])
        on = "probability" if both else "weight"
    if bands is None:
        bands = bands_of(table, on) or (list(PROBABILITY_BANDS) if on == "probability" else None)
    if bands is None:
        raise InputError(f"{labels}: the labels carry no `band` column on the weight scale. "
                         "Pass --bands with match-weight edges (e.g. --bands 0,2,4,6,8).")
    edges = band_edges(bands, on)
    score_then = then[SCORE[on]].to_numpy(dtype=float)
    score_now = now[SCORE[on]].to_numpy(dtype=float)
    scored_now = now["match_weight"].notna().to_numpy()
    label_text = table["y"].astype(int).astype(str)
    measured = {}
    for when, score, rows in (("then", score_then, np.ones(len(table), bool)),
                              ("now", score_now, scored_now)):
        frame = pd.DataFrame({"label": label_text[rows], SCORE[on]: score[rows]})
        measured[when] = calibrate(frame, bands, on=on)[0]
    per_band = pd.DataFrame({"band": _names(edges)})
    for when, part in measured.items():
        for column in ("labelled", "precision", "ci_low", "ci_high"):
            per_band[f"{column}_{when}"] = part[column].to_numpy()
    per_band["change"] = per_band["precision_now"] - per_band["precision_then"]
    match_then = then["is_match"].to_numpy(dtype=object)
    match_now = np.where(scored_now, now["is_match"].to_numpy(dtype=object), None)
    known = pd.notna(match_then) & scored_now
    flipped = np.zeros(len(table), bool)
    flipped[known] = match_then[known].astype(bool) != match_now[known].astype(bool)
    pairs = pd.DataFrame({
        "id_l": table["id_l"], "id_r": table["id_r"], "label": label_text,
        "score_then": score_then, "score_now": score_now,
        "band_then": _band_names(score_then, edges), "band_now": _band_names(score_now, edges),
        "match_then": match_then, "match_now": match_now, "scored_now": scored_now,
        "flipped": flipped})
    return Drift(on=on, bands=per_band, pairs=pairs, max_drop=max_drop)
