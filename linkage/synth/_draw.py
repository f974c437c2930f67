"""Seeded draws shared by the generators: a weighted pick, Zipf weights, dates, digit
strings, and vectorised takes from a pool of strings."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd


def zipf(n: int, offset: float, power: float = 1.0) -> np.ndarray:
    """Rank-based weights 1/(rank+offset)^power, normalised: a few names common, many rare."""
    w = 1.0 / (np.arange(n) + offset) ** power
    return w / w.sum()


def pick(rng: np.random.Generator, seq: list[Any], p: np.ndarray | None = None) -> Any:
    return seq[int(rng.choice(len(seq), p=p))]


def random_date(rng: np.random.Generator, first: dt.date, last: dt.date) -> dt.date:
    return first + dt.timedelta(days=int(rng.integers((last - first).days + 1)))


def digit_string(rng: np.random.Generator, n: int, first_nonzero: bool = False) -> str:
    d = rng.integers(0, 10, n)
    if first_nonzero:
        d[0] = rng.integers(1, 10)
    return "".join(str(int(x)) for x in d)


def take(pool: Sequence[str], codes: np.ndarray) -> pd.Series:
    """pool[codes] as a pandas string column: one Arrow take, no Python object per row."""
    return pd.Series(pool, dtype="str").take(codes).reset_index(drop=True)


def digit_text(values: np.ndarray, width: int) -> pd.Series:
    """Non-negative integers as zero-padded text, vectorised."""
    return pd.Series(values.astype(np.int64), dtype="int64").astype("str").str.zfill(width)
