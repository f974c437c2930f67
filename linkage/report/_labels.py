"""Labelled pairs for the report's precision per band: read as `linkage calibrate` reads them,
with the bands taken from the file that `linkage sample` wrote when none are given."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.measure.calibrate import SCORE

DEFAULT_BANDS = [0.6, 0.7, 0.8, 0.9]  # the default of `linkage sample` and `calibrate`
_BAND = re.compile(r"^\s*\[\s*([^,\s]+)\s*,\s*([^)\s]+)\s*\)\s*$")
_LABELS = {"1", "1.0", "match", "yes", "true", "0", "0.0", "non-match", "no", "false"}


@dataclass
class Labels:
    """Labelled pairs and how to band them: what `calibrate` needs, and where it came from."""

    frame: pd.DataFrame
    bands: list[float]
    on: str  # "probability" or "weight"
    source: str  # the file name, for messages and the page
    bands_from: str  # "the `band` column", "--bands" or "the default"
    not_in_run: int = 0  # labelled pairs that are not candidate pairs of this run


def read_labels(path: str | Path) -> pd.DataFrame:
    """The labels CSV exactly as `linkage calibrate` reads it (so the numbers agree)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such labels file. Pass the CSV that `linkage sample` "
                         "wrote, with its `label` column filled in (1 match, 0 non-match).")
    try:
        frame = pd.read_csv(path, dtype={"label": str}, keep_default_na=False)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: cannot read the labels as CSV ({err}). Pass the CSV that "
                         "`linkage sample` wrote.") from None
    frame.attrs["linkage_source"] = str(path)
    return frame


def _edge(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _bands_from_column(values: pd.Series) -> tuple[list[float], bool] | None:
    """Band edges written by `linkage sample` ("[0.6, 0.7)", ..., "[0.9, 1)" or "[8, inf)"),
    and whether the top is open (inf: bands on the match weight). None if not that format."""
    lowers, uppers = set(), set()
    for text in pd.unique(values.astype(str)):
        found = _BAND.match(text)
        if not found:
            return None
        low, high = _edge(found.group(1)), _edge(found.group(2))
        if low is None or high is None:
            return None
        lowers.add(low)
        uppers.add(high)
    if not lowers:
        return None
    open_top = math.inf in uppers
    # An upper edge is a band's lower edge too, unless it is the top (1 or inf): this keeps a
    # band that `sample` found empty (and so wrote no rows for) in the table.
    edges = lowers | {u for u in uppers if math.isfinite(u) and (open_top or u != 1.0)}
    return sorted(edges), open_top


def resolve(frame: pd.DataFrame, *, bands: list[float] | None, on: str | None,
            pairs: pd.DataFrame | None) -> Labels:
    """Labels with their bands: given ones win, else the `band` column's, else the default;
    checked for the columns `calibrate` needs, usable labels, and pairs of this run."""
    source = frame.attrs.get("linkage_source", "the labels")
    _need(frame, ["label"], source)
    from_column = (_bands_from_column(frame["band"]) if "band" in frame.columns
                   and len(frame) else None)
    if on is None:
        probabilities = (pd.to_numeric(frame["match_probability"], errors="coerce")
                         if "match_probability" in frame.columns else pd.Series(dtype=float))
        edges = bands or (from_column[0] if from_column else [])
        open_top = bool(from_column and from_column[1])  # "[8, inf)": match weights
        outside = any(e < 0 or e > 1 for e in edges)
        on = "weight" if open_top or outside or not probabilities.notna().any() \
            else "probability"
    if bands is not None:
        bands_from = "--bands"
    elif from_column is not None:
        bands, bands_from = from_column[0], "the `band` column"
    elif on == "probability":
        bands, bands_from = list(DEFAULT_BANDS), "the default"
    else:
        raise InputError(f"{source}: has no `band` column to take the score bands from. Give "
                         "them with --bands (match weights with --on weight, e.g. 0,4,8).")
    _need(frame, [SCORE[on]], source)
    usable = frame["label"].astype(str).str.strip().str.lower().isin(_LABELS)
    if not usable.any():
        raise InputError(f"{source}: no row has a usable `label`. Fill it with 1 (match) or "
                         "0 (non-match); leave it blank when unsure.")
    not_in_run = 0
    if pairs is not None and {"id_l", "id_r"} <= set(frame.columns):
        known = _pair_keys(pairs["id_l"], pairs["id_r"])
        found = _pair_keys(frame["id_l"], frame["id_r"]).isin(known).to_numpy()
        not_in_run = int((~found).sum())
        if not found.any():
            raise InputError(f"{source}: none of its {len(frame):,} pairs is a candidate pair "
                             "of this run. Were they sampled from another run? Label a sample "
                             "of this one (`linkage sample RUN_DIR --out labels.csv`).")
    return Labels(frame, [float(b) for b in bands], on, str(source), bands_from, not_in_run)


def _need(frame: pd.DataFrame, columns: list[str], source: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(
            f"{source}: the labels need the column(s) {', '.join(f'`{c}`' for c in missing)} "
            f"(it has {', '.join(f'`{c}`' for c in frame.columns) or 'none'}). Pass the CSV "
            "that `linkage sample` wrote, with `label` filled in (1 match, 0 non-match)."
        )


def _pair_keys(left: pd.Series, right: pd.Series) -> pd.Series:
    """One text key per unordered pair of ids."""
    a = left.astype(str).to_numpy(dtype=object)
    b = right.astype(str).to_numpy(dtype=object)
    first = a <= b
    low, high = np.where(first, a, b), np.where(first, b, a)
    return pd.Series(low, dtype=object) + "\x1f" + pd.Series(high, dtype=object)
