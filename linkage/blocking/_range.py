"""Range blocking: records that share a key and whose date or number lies within a tolerance.

A ledger and a bank statement write one payment days apart and for an amount less a fee; two
systems write one visit a day apart. An equal key ([first(memo, 8)]) groups the payments of
a payer, and at scale such a block holds hundreds of them: a sorted neighbourhood's window of
ten then reaches a few days of a payer's payments, fewer as the table grows, and an exact
second part (the date, the amount) loses every record written a day later or a cent less. A
range keeps what the comparison would credit: the pairs within `within_days` days, or within
`abs_tolerance` or `rel_tolerance` of each other (the comparators' own words), and no others,
whatever the table's size; its pairs grow with the records that fall in each range, not with
a fixed window.

Pairs are found by one sort (by key, then by value) and a binary search per record for the
end of its range; nothing is compared pair by pair. A relative tolerance is an absolute one
on the logarithm of the magnitude (a and b of one sign: |a - b| <= t * max(|a|, |b|) exactly
when |log|a| - log|b|| <= -log(1 - t)), so it takes the same search; zero pairs with zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from linkage._schema import check
from linkage.blocking._blockers import Blocker, BlockingInput, Proposal, parse_parts
from linkage.comparators import is_missing, iso_days
from linkage.errors import InputError

# A tolerance written in decimal (0.05) is not exact in binary: the comparators allow this
# rounding slack, and so does the range, so that what a comparison credits is proposed.
SLACK = 1e-9


def day_numbers(values: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of ISO dates (`YYYY-MM-DD`, a time part ignored, as the date
    comparison reads them); NaN for a missing value or one that is not such a date (it is then
    in no range)."""
    dates, bad = iso_days(values)
    return np.where(bad, np.nan, dates.astype(np.int64).astype(np.float64))


def numbers(values: np.ndarray) -> np.ndarray:
    """Floats of the values; NaN where one is missing, not a number, or infinite (no
    tolerance reaches it, and it would stretch the search axis of every block after its)."""
    found = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(np.float64)
    return np.where(np.isfinite(found), found, np.nan)


def range_order(codes: np.ndarray, values: np.ndarray, width: float):
    """(rows, ends): the records with a key (code >= 0) and a value, sorted by code, then
    value, then row; and for each position i in that order the end (exclusive) of the run of
    records after it with the same code and a value at most `width` above its own."""
    rows = np.flatnonzero((codes >= 0) & ~np.isnan(values))
    if not len(rows):
        return rows, rows.copy()
    rows = rows[np.lexsort((rows, values[rows], codes[rows]))]
    c, v = codes[rows], values[rows]
    # One increasing axis for every block: each block's values moved past the last block's
    # by more than `width`, so one search finds each record's end inside its own block.
    new = np.concatenate(([True], c[1:] != c[:-1]))
    block = np.cumsum(new) - 1
    first = v[new]
    span = np.diff(np.append(np.flatnonzero(new), len(v)))
    last = v[np.cumsum(span) - 1]
    gap = width * (1 + SLACK) + 1.0
    shift = np.concatenate(([0.0], np.cumsum(last - first + gap)[:-1]))
    axis = v - first[block] + shift[block]
    tolerance = width * (1 + SLACK) + np.abs(axis) * 4 * np.finfo(np.float64).eps
    ends = np.searchsorted(axis, axis + tolerance, side="right")
    block_end = np.cumsum(span)[block]
    return rows, np.minimum(ends, block_end)


def range_pairs(rows: np.ndarray, ends: np.ndarray, source: np.ndarray | None):
    """(left, right) rows of every pair a `range_order` proposes, left < right; in a link
    (`source`: each row's table) only the pairs across tables."""
    count = ends - np.arange(len(rows)) - 1
    first = np.repeat(np.arange(len(rows)), count)
    offset = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    a, b = rows[first], rows[first + 1 + offset]
    if source is not None:
        cross = source[a] != source[b]
        a, b = a[cross], b[cross]
    return np.minimum(a, b), np.maximum(a, b)


def range_count(rows: np.ndarray, ends: np.ndarray, source: np.ndarray | None) -> int:
    """The pairs `range_pairs` gives, counted without making them: in a link, each record's
    records of the other table in its run, from a running count of one table's records."""
    at = np.arange(len(rows))
    if source is None:
        return int((ends - at - 1).sum())
    right = np.concatenate(([0], np.cumsum(source[rows] == 1)))
    rights_after = right[ends] - right[at + 1]
    lefts_after = (ends - at - 1) - rights_after
    return int(np.where(source[rows] == 0, rights_after, lefts_after).sum())


@dataclass
class RangeJoin:
    """A range blocker's pairs as joins, for an engine that blocks by joining (Spark): records
    that hold every part of `parts` (values by `KeyPart.compute`) and a value of `column`;
    `prepared(codes, values)` gives a batch's codes (0 where the parts are present, -1 else;
    the returned codes also tell signs apart), values on the range's axis (NaN: in no range)
    and the width. Two records pair where their parts and codes are equal and their axis
    values lie within `width * (1 + slack)`: joined on the key and on buckets of that width
    (a pair lies in one bucket or in two next to each other), then checked."""

    parts: list
    column: str
    prepared: Callable[[np.ndarray, Any], tuple[np.ndarray, np.ndarray, float]]
    slack: float = SLACK


class RangeBlocker(Blocker):
    """Candidate pairs share every part of `key` (none: the whole table is one block) and
    their `column` values lie within a tolerance: `within_days` days (ISO dates: run the `date`
    normalizer first), or `abs_tolerance` or `rel_tolerance` (a fraction of the larger
    magnitude) for numbers. Exactly one tolerance is given. A record missing the key or the
    value (or whose value is no date, no number) is in no range. The pairs are bounded by
    `max_pairs`, not by `max_block_size`: a range is not a block."""

    kind = "range"

    def __init__(self, column: str, *, key: list[str] = (), within_days: int | None = None,
                 abs_tolerance: float | None = None, rel_tolerance: float | None = None,
                 name: str | None = None):
        check(isinstance(column, str) and column != "", self, "column",
              "must name a column", column)
        given = [t for t in (within_days, abs_tolerance, rel_tolerance) if t is not None]
        check(len(given) == 1, self, "within_days",
              "the range's one tolerance: give exactly one of `within_days` (dates), "
              "`abs_tolerance` or `rel_tolerance` (numbers)",
              {"within_days": within_days, "abs_tolerance": abs_tolerance,
               "rel_tolerance": rel_tolerance})
        if within_days is not None:
            check(isinstance(within_days, int) and not isinstance(within_days, bool)
                  and within_days >= 0, self, "within_days", "must be a whole number >= 0",
                  within_days)
        if abs_tolerance is not None:
            check(isinstance(abs_tolerance, int | float) and abs_tolerance >= 0, self,
                  "abs_tolerance", "must be a number >= 0", abs_tolerance)
        if rel_tolerance is not None:
            check(isinstance(rel_tolerance, int | float) and 0 < rel_tolerance < 1, self,
                  "rel_tolerance", "must be a fraction in (0, 1)", rel_tolerance)
        self.column = column
        self.key = list(key)
        self.within_days = within_days
        self.abs_tolerance = None if abs_tolerance is None else float(abs_tolerance)
        self.rel_tolerance = None if rel_tolerance is None else float(rel_tolerance)
        self.name = name
        self._parts = parse_parts(self, "key", self.key) if self.key else []

    @property
    def columns(self) -> list[str]:
        return sorted({self.column, *(p.column for p in self._parts)})

    @property
    def key_parts(self) -> list:
        return self._parts

    def tolerance(self) -> str:
        if self.within_days is not None:
            return f"within {self.within_days} days"
        if self.abs_tolerance is not None:
            return f"within {self.abs_tolerance:g}"
        return f"within {self.rel_tolerance:.0%}"

    def describe(self) -> str:
        key = f"[{', '.join(map(str, self._parts))}], " if self._parts else ""
        return f"{key}{self.column} {self.tolerance()}"

    def axis(self, values: np.ndarray) -> tuple[np.ndarray, float, np.ndarray | None]:
        """(a value per record on the axis the range is absolute on, the range's width there,
        a sign per record that must also be equal, or None). A value that is present but no
        ISO date (no number) is an error, as the column's comparison would call it: a range
        that silently left such records out would lose their pairs without a word."""
        if self.within_days is not None:
            days = day_numbers(values)
            self._check(values, days, "are not ISO dates", (
                f"Add a `date` normalizer for `{self.column}` in the rules' `normalize:` list, "
                "which reads other spellings, or fix the values."))
            return days, float(self.within_days), None
        found = numbers(values)
        self._check(values, found, "are not numbers", (
            "Fix the values, or block on this column with a key (`type: keys`) instead of a "
            "range."), allow_infinite=True)
        if self.abs_tolerance is not None:
            return found, self.abs_tolerance, None
        sign = np.sign(found)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.where(sign == 0, 0.0, np.log(np.abs(found)))
        return logs, -float(np.log1p(-self.rel_tolerance)), np.nan_to_num(sign).astype(np.int64)

    def _check(self, values, parsed: np.ndarray, what: str, fix: str,
               allow_infinite: bool = False) -> None:
        """Raise `InputError` where a present value did not parse (`parsed` NaN)."""
        values = np.asarray(values, dtype=object)
        bad = np.isnan(parsed) & ~is_missing(values)
        if allow_infinite and bad.any():  # read as infinite: in no range, not an error
            with np.errstate(invalid="ignore"):
                raw = pd.to_numeric(pd.Series(values[bad], dtype=object), errors="coerce")
            bad[np.flatnonzero(bad)[np.isinf(raw.to_numpy(np.float64))]] = False
        if bad.any():
            examples = ", ".join(repr(v) for v in pd.unique(values[bad])[:3])
            raise InputError(f"column `{self.column}`: {int(bad.sum())} value(s) {what} (e.g. "
                             f"{examples}), which the range blocker {self.describe()} reads. "
                             + fix)

    def prepared(self, codes: np.ndarray, values) -> tuple[np.ndarray, np.ndarray, float]:
        """(codes, axis values, width) that `range_order` takes, from the key's codes per
        record (-1: missing) and the column's values: with a relative tolerance the codes
        also tell the values' signs apart (three times as many codes)."""
        axis, width, sign = self.axis(np.asarray(values, dtype=object))
        if sign is not None:
            if len(codes) and int(codes.max()) >= (1 << 61):  # numbered densely, to fit
                codes = np.where(codes < 0, -1, pd.factorize(codes)[0]).astype(np.int64)
            codes = np.where(codes < 0, -1, codes * 3 + sign + 1)
        return codes, axis, width

    def join_plan(self) -> RangeJoin:
        return RangeJoin(self._parts, self.column, self.prepared)

    def _codes(self, data: BlockingInput) -> np.ndarray:
        """The key's code per record; without a key, one block (or one per `group_by`
        group: the key codes hold the group, and pairs never cross it)."""
        if self._parts:
            return data.key_codes(self._parts)
        if data.group is not None:
            return data.group.astype(np.int64)
        return np.zeros(data.n, dtype=np.int64)

    def _order(self, data: BlockingInput):
        return data.once((RangeBlocker, self.describe()), lambda: range_order(
            *self.prepared(self._codes(data), data.columns[self.column])))

    def estimate(self, data: BlockingInput, max_block_size: int) -> int:
        """Exactly the pairs `propose` gives (in a link, those across tables)."""
        rows, ends = self._order(data)
        return range_count(rows, ends, data.source)

    def propose(self, data: BlockingInput, max_block_size: int) -> Proposal:
        rows, ends = self._order(data)
        left, right = range_pairs(rows, ends, data.source)
        return Proposal(left, right)

    def still_proposes(self, data: BlockingInput, left: np.ndarray, right: np.ndarray,
                       max_block_size: int) -> np.ndarray:
        """The two records share the key and their values lie within the range."""
        codes, values, width = self.prepared(self._codes(data), data.columns[self.column])
        ok = (left >= 0) & (right >= 0)
        a, b = np.maximum(left, 0), np.maximum(right, 0)
        with np.errstate(invalid="ignore"):
            near = np.abs(values[a] - values[b]) <= width * (1 + SLACK)
        return ok & (codes[a] >= 0) & (codes[a] == codes[b]) & near
