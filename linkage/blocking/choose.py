"""Blocking keys for suggested rules, chosen on a sample of the table and sized for the whole.

`sample_table` draws a seeded random sample of rows (all of a small table). `choose_keys`
measures each candidate key on it and scales the count to the full table: a pair of records
is in a uniform sample of m of n rows with probability m(m-1) / (n(n-1)), so the pairs found in
the sample times n(n-1) / (m(m-1)) estimate the full table's, whatever share of them are
duplicates and whatever share random collisions (in a link, left and right scale apart).

A key is kept when its estimated pairs fit the per-key budget. One that does not is refined,
never silently dropped: a second part from another identifying column is added (a year of a
date, the first letter or the Soundex code of a name, the start of a postcode): of the parts
that make it fit, the one most often shared by likely matches (pairs of the sample that share
a precise key), and of those about equal, the one bringing the fewest pairs. When no part
makes it fit, the key becomes a sorted neighbourhood (sorted by the key, then by its finest
refinement, a date whole rather than its year, with a window sized to the budget and widened,
once every key is chosen, with the total budget the keys left: `_widen`; in a link its pairs
are the neighbours across tables, their share measured on the sample). In a link it is
dropped instead where more records share its whole sort key than the widest window reaches:
inside such runs it would pair records at random (a dedupe keeps it, see `choose_keys`).
Where likely matches show which, a **range** takes the window's place once the keys are
chosen, if the total budget holds it: the key with a date or number within the tolerance its
comparison credits (`_range_options`), whose reach, unlike a window's, does not shrink as the
table grows. Every candidate's fate is recorded in `measured`.

A short-text column (a memo, a reference) is a key whole, and by its start (`PREFIX`
characters) where the sample shows that likely matches found by other keys (or by an equal
amount) share its start clearly more often than its whole value: text re-keyed or cut at its
end, as one system writes a payment's memo and another its statement line.

The budget is in pairs per record up to a share of `max_pairs`: a key whose pairs are mostly
duplicates (they grow like n) fits at every size, while one whose random collisions grow like
n^2 is refined at the size where they pass the budget, so the keys in the rules keep their
recall from 10,000 to 1,000,000 records instead of dropping out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage.blocking._keys import KeyPart, keyed_codes
from linkage.errors import InputError
from linkage.parallel import thread_map
from linkage.profiling import sample_rows

# Rows measured, all tables together: a key's pairs on a million records are estimated
# within a few percent from 50,000 (a key near the per-key budget holds thousands of pairs in
# the sample), and the sample is the profiler's (`linkage.profiling`) in a dedupe.
SAMPLE_ROWS = 50_000
# A key may propose PAIRS_PER_RECORD pairs per record (enough for recall on corrupted data,
# few enough that its non-matches do not swamp the matches), FLOOR_PAIRS on a small table,
# and at most 1 / KEY_SHARE of `max_pairs`: from 50,000 records on (default `max_pairs`) that
# cap binds, and keys whose random collisions grow with n^2 are refined to fit it.
PAIRS_PER_RECORD = 40
FLOOR_PAIRS = 250_000
KEY_SHARE = 10
# A key of `rescue_keys` may propose this many pairs per record: it finds the few records whose
# names and dates all differ, and its other pairs are non-matches that dilute the candidates.
RESCUE_PAIRS_PER_RECORD = 4
PREFIX = 8  # the characters of a text's start that make its prefix key
MAX_WINDOW = 10  # the widest sorted-neighbourhood window a key falls back to
MIN_EVIDENCE = 20  # likely matches that must hold a column before their shares count
AGREE_SLACK = 0.1  # parts shared by likely matches this much less often count as equal

# Kinds (today's profiler and the value-first one) by the part they give a key.
_NAMES = ("name", "given_name", "surname", "full_name")
_HANGUL = ("hangul_name",)
_DATES = ("date",)
_CONTACT = ("email", "phone")
_POSTCODES = ("postcode",)
# Never a key on their own: few values (category), or no evidence (row numbers, constants).
NEVER_ALONE = ("category", "row_number", "constant", "numeric", "year", "month", "day")


@dataclass
class KeyTrial:
    """One candidate key, its estimated pairs on the whole table, and what became of it."""

    key: list[str]
    pairs: int
    outcome: str  # "kept", "refined to [..]", "sorted neighbourhood ...", "dropped: why"
    chosen: list[str] | None = None  # the key (or sort key) that went into the rules
    chosen_pairs: int = 0

    @property
    def kept(self) -> bool:
        return self.chosen is not None

    def __iter__(self):  # (key, pairs), as the measured list was before
        return iter((self.key, self.pairs))


def per_key_budget(n: int, max_pairs: int) -> int:
    """The most pairs one suggested key may propose on a table of `n` records."""
    return int(min(max_pairs // KEY_SHARE, max(FLOOR_PAIRS, PAIRS_PER_RECORD * n)))


def sample_table(frames: list[pd.DataFrame], size: int = SAMPLE_ROWS, seed: int = 0):
    """(sample, source, sizes): a seeded random sample of the rows of each table (all rows of
    a small one), in their order, as one frame; the table (0 left, 1 right) of each sampled
    row, None with one table; and the full tables' sizes."""
    sizes = [len(f) for f in frames]
    each = max(size // len(frames), 1)
    if len(frames) == 1:  # the profiler's own draw (`sample_rows`): the same rows it reads
        frame = frames[0]
        if len(frame) > each:
            frame = frame.take(sample_rows(len(frame), each, seed))
        return frame.reset_index(drop=True), None, sizes
    rng = np.random.default_rng(seed)
    parts = []
    for frame in frames:
        if len(frame) > each:
            rows = np.sort(rng.choice(len(frame), each, replace=False))
            frame = frame.iloc[rows]
        parts.append(frame.reset_index(drop=True))
    source = np.repeat(np.arange(len(frames), dtype=np.int8), [len(p) for p in parts])
    return pd.concat(parts, ignore_index=True), source, sizes


def _sorted_groups(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, sizes): the rows with a code (>= 0) ordered by code and, within a code, by row,
    and the size of each code's run; what `blocking.groups` gives, by one sort of the numbers
    code * rows + row (quicker than its stable argsort of the codes)."""
    rows = np.flatnonzero(codes >= 0)
    if not len(rows):
        return rows, np.zeros(0, dtype=np.int64)
    found, n = codes[rows], len(codes)
    if int(found.max()) >= (1 << 62) // n:  # renumbered in the same order, to fit
        found = np.unique(found, return_inverse=True)[1].astype(np.int64)
    ordered = np.sort(found * n + rows)
    return ordered % n, _run_lengths(ordered // n)


def _run_lengths(ordered: np.ndarray) -> np.ndarray:
    """The lengths of the runs of equal values of a sorted array."""
    if not len(ordered):
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return np.diff(np.append(starts, len(ordered)))


class _Measure:
    """Estimated full-table pairs of keys, from their codes on the sample."""

    def __init__(self, work: dict[str, np.ndarray], source: np.ndarray | None,
                 sizes: list[int], coded: dict[str, tuple[np.ndarray, np.ndarray]] | None = None):
        self.work, self.source, self.coded = work, source, coded or {}
        self.m = len(next(iter(work.values()))) if work else 0
        self._parts: dict[str, np.ndarray] = {}
        self._columns: dict[str, tuple[np.ndarray, list]] = {}
        self._kept: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        if source is None:
            n, m = sizes[0] if sizes else self.m, self.m
            self.scale = n * (n - 1) / max(m * (m - 1), 1)
            self.grow = n / max(m, 1)
        else:
            m_l, m_r = int((source == 0).sum()), int((source == 1).sum())
            self.scale = sizes[0] * sizes[1] / max(m_l * m_r, 1)
            self.grow = sum(sizes) / max(self.m, 1)

    def _column(self, column: str) -> tuple[np.ndarray, list]:
        """(codes, distinct values) of a column: -1 where missing or empty."""
        if column not in self._columns:
            if column in self.coded:  # a code per row into a table: number the table's values
                rows, table = self.coded[column]
                codes, uniques = pd.factorize(np.asarray(table, dtype=object),
                                              use_na_sentinel=True)
                codes = np.append(codes, -1)[rows]
            else:
                values = np.asarray(self.work[column], dtype=object)
                codes, uniques = pd.factorize(values, use_na_sentinel=True)
            uniques = list(uniques)
            if pd.api.types.infer_dtype(uniques, skipna=False) != "string":  # not all text
                uniques = [u if isinstance(u, str) else str(u) for u in uniques]
            if "" in uniques:
                codes = np.where(codes == uniques.index(""), -1, codes)
            self._columns[column] = (codes.astype(np.int64), uniques)
        return self._columns[column]

    def part(self, text: str) -> np.ndarray:
        """A code per sampled record for one key part (-1 where missing), the part's function
        applied once per distinct value."""
        if text not in self._parts:
            part = KeyPart.parse(text)
            if part.column not in self.work:
                raise KeyError(part.column)
            codes, uniques = self._column(part.column)
            if part.function is not None:
                mapped = keyed_codes(part.function, part.argument or 0, uniques)
                codes = np.append(mapped, -1)[codes]
            self._parts[text] = codes
        return self._parts[text]

    def codes(self, key: list[str]) -> np.ndarray:
        """An int64 code per sampled record (-1 where a part is missing); equal keys, equal
        codes. Not renumbered: codes only group, so they may be large."""
        name = "\x1f".join(key)
        if name in self._parts:
            return self._parts[name]
        combined = None
        for text in key:
            codes = self.part(text)
            if combined is None:
                combined = codes
                continue
            width = int(codes.max(initial=0)) + 1
            if int(combined.max(initial=0)) >= (1 << 62) // width:
                dense = pd.factorize(combined)[0]
                combined = np.where(combined < 0, -1, dense).astype(np.int64)
            missing = (combined < 0) | (codes < 0)
            combined = combined * width + codes
            combined[missing] = -1
        assert combined is not None
        self._parts[name] = combined
        return combined

    def _blocks(self, key: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, ids, sizes) of `key`'s blocks of two records or more: those rows (in order),
        each one's block (equal ids, one block), and each block's size by id (zero for an id
        that no kept row has). Only these rows can pair, also under a key that adds parts to
        `key`: a longer key is counted on them alone (its other rows are singletons), which
        spares combining and grouping the whole sample again for each refinement."""
        if key in self._kept:
            return self._kept[key]
        codes = self.part(key[-1])
        if len(key) == 1:
            rows = np.flatnonzero(codes >= 0)
            ids = codes[rows]
        else:
            rows, ids, _ = self._blocks(key[:-1])
            part = codes[rows]
            single = self._blocks(key[-1:])
            # rows whose own value of the part is shared with another row (else a singleton)
            keep = (part >= 0) & (single[2][np.maximum(part, 0)] >= 2) if len(single[2]) \
                else np.zeros(len(rows), dtype=bool)
            rows, part = rows[keep], part[keep]
            width = int(part.max(initial=0)) + 1
            ids = ids[keep] * width + part
            if len(ids) and int(ids.max()) >= 4 * len(ids) + 1024:  # sparse: number densely
                ids = pd.factorize(ids)[0].astype(np.int64)
        sizes = np.bincount(ids) if len(ids) else np.zeros(0, dtype=np.int64)
        shared = sizes[ids] >= 2
        self._kept[key] = found = (rows[shared], ids[shared], sizes)
        return found

    def pairs(self, key: list[str]) -> int:
        """Estimated candidate pairs of `key` on the full table(s)."""
        rows, ids, sizes = self._blocks(tuple(key))
        if self.source is None:
            found = float((sizes.astype(np.float64) * (sizes - 1) / 2).sum())
        else:
            side = self.source[rows]
            width = len(sizes)
            left = np.bincount(ids[side == 0], minlength=width)
            right = np.bincount(ids[side == 1], minlength=width)
            found = float((left.astype(np.float64) * right).sum())
        return round(found * self.scale)

    def share_across(self, sort_key: list[str]) -> float:
        """Of the neighbour pairs a window of `MAX_WINDOW` meets in the sample of a link
        sorted by `sort_key`, the share across tables (the pairs a link proposes)."""
        from linkage.blocking._blockers import BlockingInput, SortedNeighbourhood

        blocker = SortedNeighbourhood(sort_key, window=MAX_WINDOW)
        every, across = blocker.pair_counts(BlockingInput(self.work, self.source))
        return across / max(every, 1)

    def likely_matches(self, keys: list[list[str]], per_block: int = 20):
        """Pairs of the sample that share a precise key (few pairs per record): mostly true
        matches, the evidence for how often matches agree on a part. Blocks above
        `per_block` records are left out."""
        from linkage.blocking._blockers import pairs_within

        lefts, rights = [], []
        n = max(self.m, 1)
        for key in keys:
            rows, ids, _ = self._blocks(tuple(key))
            codes = np.full(self.m, -1, dtype=np.int64)
            codes[rows] = ids  # the rows of blocks of two or more, in their blocks
            rows, sizes = _sorted_groups(codes)
            keep = sizes <= per_block
            member = np.repeat(keep, sizes)
            rows, sizes = rows[member], sizes[keep]
            a, b = pairs_within(rows, np.cumsum(sizes) - sizes, sizes)
            lefts.append(a.astype(np.int64))
            rights.append(b.astype(np.int64))
        if not lefts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        code = np.unique(np.concatenate(lefts) * n + np.concatenate(rights))
        a, b = code // n, code % n
        if self.source is not None:
            cross = self.source[a] != self.source[b]
            a, b = a[cross], b[cross]
        return a, b

    def _on_key(self, key: list[str], pairs) -> tuple[np.ndarray, np.ndarray]:
        """The likely matches `pairs` that agree on `key`, where at least 20 do; else all."""
        a, b = pairs
        if len(a) == 0:
            return a, b
        codes = self.codes(key)
        same = (codes[a] == codes[b]) & (codes[a] >= 0)
        return (a[same], b[same]) if same.sum() >= 20 else (a, b)

    def agreement(self, part: list[str], key: list[str], pairs) -> float:
        """The share of likely matches that agree on `part`, among those agreeing on `key`
        (all of them when too few do)."""
        a, b = self._on_key(key, pairs)
        if len(a) == 0:
            return 0.0
        codes = self.codes(part)
        return float(((codes[a] == codes[b]) & (codes[a] >= 0)).mean())

    def _ranged(self, key: list[str], column: str, tolerance: dict):
        """(codes, axis values, width) of `key` ranged on `column` (`RangeBlocker.prepared`)
        over the sample."""
        from linkage.blocking._range import RangeBlocker

        blocker = RangeBlocker(column, key=key, **tolerance)
        return blocker.prepared(self.codes(key), self.work[column])

    def range_pairs(self, key: list[str], column: str, tolerance: dict) -> int:
        """Estimated pairs on the full table(s) of `key` with `column` within `tolerance`:
        counted on the sample (`range_count`) and scaled as a key's pairs are."""
        from linkage.blocking._range import range_count, range_order

        rows, ends = range_order(*self._ranged(key, column, tolerance))
        return round(range_count(rows, ends, self.source) * self.scale)

    def range_agreement(self, column: str, tolerance: dict, key: list[str], pairs) -> float:
        """The share of likely matches whose `column` values lie within `tolerance`, among
        those agreeing on `key` (all of them when too few do): `agreement` for a range."""
        from linkage.blocking._range import SLACK, RangeBlocker

        a, b = self._on_key(key, pairs)
        if len(a) == 0:
            return 0.0
        codes, values, width = RangeBlocker(column, **tolerance).prepared(
            np.zeros(self.m, dtype=np.int64), self.work[column])
        with np.errstate(invalid="ignore"):
            near = np.abs(values[a] - values[b]) <= width * (1 + SLACK)
        return float((near & (codes[a] >= 0) & (codes[a] == codes[b])).mean())

    def present(self, key: list[str]) -> int:
        """Estimated records of the full table(s) holding every part of `key`."""
        return round(float((self.codes(key) >= 0).sum()) * self.grow)


def rescue_keys(profiles) -> list[list[str]]:
    """Keys of two fields of different kinds, and the postcode alone: a record whose names and
    birth date are all recorded otherwise (a nickname, a surname typo that changes its sound
    code, another year) is still found by its name with a place (a birthplace, a trade), its
    birth year with a postcode or a place, its postcode with a place, or its postcode.
    Without them such a record has no candidate pair at all, whatever the scorer makes of it.
    They are not precise: their budget is a few pairs per record (`RESCUE_PAIRS_PER_RECORD`),
    and one above it is refined like any other key."""
    by_kind: dict[str, list[str]] = {}
    for p in profiles:
        by_kind.setdefault(p.kind, []).append(p.column)
    names = [c for k in (*_NAMES, *_HANGUL) for c in by_kind.get(k, [])]
    dates = [c for k in _DATES for c in by_kind.get(k, [])]
    postcodes = [c for k in _POSTCODES for c in by_kind.get(k, [])][:1]
    others = by_kind.get("other", [])[:2]
    keys: list[list[str]] = [[a, o] for a in names for o in others]
    keys += [[p, f"year({d})"] for d in dates for p in postcodes + others]
    keys += [[p, o] for p in postcodes for o in others]
    keys += [[p] for p in postcodes]
    return keys


def candidate_keys(profiles) -> list[list[str]]:
    """Candidate keys, the most precise first (which of them fit is measured)."""
    by_kind: dict[str, list[str]] = {}
    for p in profiles:
        by_kind.setdefault(p.kind, []).append(p.column)

    def kinds(*names: str) -> list[str]:
        return [c for k in names for c in by_kind.get(k, [])]

    names = kinds(*_NAMES, *_HANGUL)
    dates = kinds(*_DATES)
    postcodes = kinds(*_POSTCODES)
    keys: list[list[str]] = []
    for c in kinds(*_CONTACT):
        keys.append([c])
    for c in kinds(*_HANGUL):
        keys.append([f"chosung({c})"] + ([f"year({dates[0]})"] if dates else []))
    for a in names:
        for b in names:
            if a < b:
                keys.append([a, b])
        for d in dates:
            keys.append([a, d])
        if postcodes:
            keys.append([f"soundex({a})", postcodes[0]])
    for d in dates:
        keys.append([d])
    for p in profiles:
        if p.kind in ("category", "id") and p.distinct > 0.3:
            keys.append([p.column])  # a near-unique code, such as a social security number
    if len(names) >= 2:
        keys.append([f"soundex({names[0]})", f"soundex({names[1]})"])
    # Single-column keys give recall on heavily corrupted data; on large tables they are
    # refined (a part added) or become sorted neighbourhoods.
    for c in by_kind.get("email", []):
        keys.append([f"local_part({c})"])
    for a in kinds(*_NAMES):
        keys.append([a])
        keys.append([f"soundex({a})"])
    for d in dates:
        keys.append([f"year({d})"])
    for c in by_kind.get("other", [])[:2]:
        keys.append([c])
    # Short text is reworded and cut at its end more often than at its start (a memo, a
    # reference, a model number with a suffix): its start finds what its whole value misses.
    for c in by_kind.get("other", [])[:2]:
        keys.append([f"first({c}, {PREFIX})"])
    for c in by_kind.get("address", [])[:1]:
        if postcodes:
            keys.append([postcodes[0], f"first({c}, 6)"])
    for c in by_kind.get("text", [])[:1] + by_kind.get("company", [])[:1]:
        keys.append([f"first({c}, {PREFIX})"])
    # Last, as the budget's last call: keys for records whose names and dates all differ.
    keys += [k for k in rescue_keys(profiles) if k not in keys]
    weak = {p.column for p in profiles if p.kind in NEVER_ALONE and p.distinct <= 0.3}
    out: list[list[str]] = []
    for key in keys:
        if key not in out and not {KeyPart.parse(k).column for k in key} <= weak:
            out.append(key)
    return out


def refinements(profiles, key: list[str]) -> list[str]:
    """Parts that may be added to `key`, from identifying columns it does not use yet, the
    coarsest of each column first."""
    used = {KeyPart.parse(k).column for k in key}
    out: list[str] = []
    for p in profiles:
        c = p.column
        if c in used:
            continue
        if p.kind in _DATES:
            out += [f"year({c})"]
        elif p.kind in _NAMES:
            out += [f"first({c}, 1)", f"soundex({c})"]
        elif p.kind in _HANGUL:
            out += [f"first({c}, 1)"]
        elif p.kind in _POSTCODES:
            out += [f"first({c}, 3)", c]
    return out


def _whole_date(part: str) -> str:
    """`column` for `year(column)`, else `part`."""
    parsed = _quietly(KeyPart.parse, part)
    return parsed.column if parsed is not None and parsed.function == "year" else part


def _whole_value(key: list[str]) -> list[str] | None:
    """`[column]` where `key` is a prefix of that one column alone (`first(column, n)`)."""
    part = _quietly(KeyPart.parse, key[0]) if len(key) == 1 else None
    if part is None or part.function != "first":
        return None
    return [part.column]


def _prefix_evidence(measure, profiles, candidates, column: str, prefix: list[str],
                     precise: int) -> tuple[float, float] | None:
    """(share sharing the whole value, share sharing `prefix`) of `column` among likely
    matches that other evidence finds: pairs of the sample that share a precise key of other
    columns (at most `precise` pairs on the whole table), or the same value of a number most
    records hold their own of (an amount, however many pairs share one). None where fewer
    than `MIN_EVIDENCE` such pairs both hold a value of `column`.

    The pairs need not be mostly matches: a non-match seldom shares either the value or its
    start, so non-matches dilute both shares alike and leave their ratio, which is what
    `_prefix_verdict` reads."""
    probes = [key for key, count in candidates if 0 < count <= precise
              and column not in {KeyPart.parse(k).column for k in key}]
    for p in profiles:
        if p.kind == "numeric" and p.distinct > 0.3 and p.column in measure.work:
            count = _quietly(measure.pairs, [p.column])
            if count:
                probes.append([p.column])
    if not probes:
        return None
    a, b = measure.likely_matches(probes)
    whole, start = measure.codes([column]), measure.codes(prefix)
    held = (whole[a] >= 0) & (whole[b] >= 0)
    if held.sum() < MIN_EVIDENCE:
        return None
    a, b = a[held], b[held]
    return float((whole[a] == whole[b]).mean()), float((start[a] == start[b]).mean())


def _prefix_verdict(measure, profiles, candidates, column: str, prefix: list[str],
                    same_pairs: bool, precise: int) -> tuple[str, str]:
    """(why the prefix key of a short-text column is dropped, or ""; the evidence for keeping
    it): kept only where likely matches found by other keys share the start of the column
    clearly more often than its whole value (the whole value misses at least `AGREE_SLACK` of
    those the start finds). `same_pairs`: the prefix has as many pairs as the whole value,
    which are then the same pairs (each pair of a value shares its start)."""
    if same_pairs:
        return (f"dropped: the same pairs as [{column}] (its values are no longer than the "
                "prefix)"), ""
    shares = _prefix_evidence(measure, profiles, candidates, column, prefix, precise)
    if shares is None:
        return ("dropped: too few likely matches found by other keys to show that its start "
                "finds more of them than its whole value"), ""
    whole, start = shares
    seen = (f" (of the likely matches other keys find, {start:.0%} share its start, "
            f"{whole:.0%} its whole value)")
    if start == 0 or 1.0 - whole / start < AGREE_SLACK:
        return f"dropped: likely matches that share its start share the whole value too{seen}", ""
    return "", seen


def _covered(key: list[str], chosen: list[list[str]]) -> list[str] | None:
    """A chosen key whose parts are all in `key`: it already proposes every pair `key` would."""
    for other in chosen:
        if set(other) <= set(key):
            return other
    return None


def _quietly(function, *args):
    """`function(*args)`, None where it raises what `choose_keys` passes over (a column
    the normalizers removed, a bad part): the estimate then says so itself."""
    try:
        return function(*args)
    except (KeyError, ValueError):
        return None


def choose_keys(profiles, work: dict[str, np.ndarray], source: np.ndarray | None,
                max_pairs: int, sizes: list[int] | None = None,
                coded: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
                ranges: dict[str, dict] | None = None):
    """(blocking, measured, budget): the suggested blockers (rules dicts), every candidate
    key with its estimated pairs and fate (`KeyTrial`), and the per-key budget.

    `work` holds the normalized columns of a sample (`sample_table`), `source` its rows'
    tables in a link, `sizes` the full tables' sizes (default: the sample is the table);
    `coded`, where given, the same columns as a code per row (-1: missing) into a table of
    values, which spares numbering the rows again. `ranges`: the date and number columns a
    key too coarse for any exact refinement may be ranged on, each with the tolerance its
    comparison credits (`RangeBlocker`'s arguments: `{"within_days": 31}`,
    `{"rel_tolerance": 0.05}`); see `_range_options`."""
    profiles = [p for p in profiles if p.kind not in ("row_number", "constant")]
    m = len(next(iter(work.values()))) if work else 0
    if sizes is None:
        sizes = [m] if source is None else [int((source == k).sum()) for k in (0, 1)]
    n = int(sum(sizes))
    budget = per_key_budget(n, max_pairs)
    total_budget = int(max_pairs * 0.8)  # the estimate is from a sample: leave a margin
    measure = _Measure(work, source, sizes, coded)
    trials: list[KeyTrial] = []
    keys: list[list[str]] = []
    windows: list[dict] = []
    widened: list[tuple[KeyTrial, dict, int]] = []  # each window, its trial and records
    ranged: list[dict] = []
    # (trial, its best range (`_range_options`), its window): ranges that may take a
    # window's place at the end, where the total budget holds them
    waiting: list[tuple[KeyTrial, tuple, dict]] = []
    total = 0

    known: dict[tuple, int | None] = {}

    def estimate(key: list[str]) -> int | None:
        if tuple(key) not in known:
            known[tuple(key)] = _quietly(measure.pairs, key)
        return known[tuple(key)]

    def estimates(keys: list[list[str]]) -> list[int | None]:
        # each key's parts first, one thread per column (a part's table is shared), then
        # the keys side by side: their sorts release the GIL
        parts: dict[str | None, dict[str, None]] = {}
        for text in (t for key in keys for t in key):
            part = _quietly(KeyPart.parse, text)
            parts.setdefault(None if part is None else part.column, {})[text] = None
        thread_map(lambda texts: [_quietly(measure.part, t) for t in texts], parts.values())
        return thread_map(estimate, keys)

    rescue = rescue_keys(profiles)
    keys_tried = candidate_keys(profiles)
    candidates = list(zip(keys_tried, estimates(keys_tried), strict=True))
    candidates = [(key, count) for key, count in candidates if count is not None]
    over = [[*key, part] for key, count in candidates if count > budget
            for part in refinements(profiles, key)]
    estimates(over)  # the refinements the loop below may weigh, measured side by side
    # Likely matches: pairs sharing a key that proposes at most one pair per record.
    likely = measure.likely_matches([k for k, c in candidates if 0 < c <= min(budget, n)])

    short_text = {p.column for p in profiles if p.kind == "other"}
    for key, count in candidates:
        trial = KeyTrial(key, count, "")
        evidence = ""
        trials.append(trial)
        if count == 0:
            trial.outcome = "dropped: no two records share it"
            continue
        whole = _whole_value(key)
        if whole is not None and whole[0] in short_text:
            dropped, evidence = _prefix_verdict(measure, profiles, candidates, whole[0], key,
                                                count == known.get(tuple(whole)),
                                                min(budget, n))
            if dropped:
                trial.outcome = dropped
                continue
        chosen, chosen_pairs = key, count
        # A rescue key's pairs are mostly non-matches: a few per record at most.
        limit = min(budget, RESCUE_PAIRS_PER_RECORD * n) if key in rescue else budget
        if count > limit:
            options = []  # (share of likely matches kept, pairs, refined key)
            for part in refinements(profiles, key):
                refined = [*key, part]
                pairs = estimate(refined)
                if pairs is not None and pairs > 0:
                    kept = round(measure.agreement([part], key, likely), 2)
                    options.append((kept, pairs, refined))
            fits = [o for o in options if o[1] <= limit]
            if fits:
                # The part that likely matches most often share (recall); of parts about as
                # often shared, the one that brings fewest pairs (cost, and fewer non-matches).
                best = max(o[0] for o in fits)
                _, chosen_pairs, chosen = min((o for o in fits if o[0] >= best - AGREE_SLACK),
                                              key=lambda o: o[1])
                trial.outcome = f"refined to [{', '.join(chosen)}]"
            else:
                # Sorted by the key, then by the part likely matches most often share:
                # neighbours share the key and come close on another column. A date's year
                # sorts as the date whole, whose order also puts near days side by side.
                # A year in the key sorts as its date too: by year alone, the records of one
                # year follow in row order, and a window over them pairs records at random.
                best = [_whole_date(o[2][-1]) for o in sorted(options, key=lambda o: -o[0])[:1]]
                sort_key = list(dict.fromkeys([_whole_date(p) for p in key] + best))
                present = measure.present(key)
                if source is not None:  # a link proposes the neighbours across tables only
                    present = round(present * measure.share_across(sort_key))
                window = min(MAX_WINDOW, 1 + limit // max(present, 1))
                sn_pairs = present * (window - 1)
                if window < 2:
                    trial.outcome = "dropped: even a window of 2 is above the budget"
                    continue
                # A window pairs each record with its next neighbours; where more records
                # share the whole sort key than even the widest window reaches, their order
                # inside each run of equal values is the tables' turns (by row), and the
                # window picks pairs among them at random: in a link, no such window.
                # In a dedupe it stays (ordered by row, as random): its pairs hold almost no
                # matches, but they are what keeps Fellegi-Sunter's EM, which learns u on the
                # candidates, from taking a group that shares a name and an address for the
                # match class (bench/GENERALIZATION.md, stop 40). That is the scorer's
                # weakness, not the window's merit; once u no longer hangs on the candidates,
                # the dedupe should drop such windows too.
                ties = estimate(sort_key) if source is not None else None
                if ties is not None and ties > present * (MAX_WINDOW - 1):
                    trial.outcome = (f"dropped: {ties:,} pairs share [{', '.join(sort_key)}] "
                                     f"whole, more than a window of {MAX_WINDOW} proposes: it "
                                     "would pair records of equal values at random")
                    continue
                same = next((w for w in windows if w["sort_key"] == sort_key), None)
                if same is not None:
                    trial.outcome = (f"dropped: the same sorted neighbourhood as "
                                     f"{same['name']}, on [{', '.join(sort_key)}]")
                    continue
                if total + sn_pairs > total_budget:
                    trial.outcome = "dropped: the total budget (`max_pairs`) is spent"
                    continue
                total += sn_pairs
                trial.chosen, trial.chosen_pairs = sort_key, sn_pairs
                windows.append({"name": f"suggested_window_{len(windows) + 1}",
                                "type": "sorted_neighbourhood", "sort_key": sort_key,
                                "window": window})
                widened.append((trial, windows[-1], present))
                by_range = _range_options(measure, key, ranges or {}, likely)
                if by_range is not None:
                    waiting.append((trial, by_range, windows[-1]))
                continue
        same = _covered(chosen, keys)
        if same is not None:
            trial.outcome = (f"dropped: {trial.outcome + ', ' if trial.outcome else ''}"
                             f"its pairs are all proposed by [{', '.join(same)}]")
            continue
        if total + chosen_pairs > total_budget:
            trial.outcome = "dropped: the total budget (`max_pairs`) is spent"
            continue
        total += chosen_pairs
        trial.chosen, trial.chosen_pairs = chosen, chosen_pairs
        trial.outcome = (trial.outcome or "kept") + evidence
        keys.append(chosen)
    # A range takes its key's window's place where the total budget the keys left holds it
    # (a range may pass the per-key share, as a window may be widened past it), in the order
    # the keys were tried: a window's reach in days or amounts shrinks as the table grows,
    # the range's does not.
    for trial, option, window in waiting:
        if total - trial.chosen_pairs + option[1] > total_budget:
            continue
        total += option[1] - trial.chosen_pairs
        windows.remove(window)
        widened[:] = [w for w in widened if w[1] is not window]
        _take_range(trial, option, ranged)
    _widen(widened, total_budget - total)
    blocking = ([{"name": "suggested", "keys": keys}] if keys else []) + windows + ranged
    return blocking, trials, budget


def _range_options(measure, key: list[str], ranges: dict[str, dict], likely):
    """(share of likely matches kept, pairs, column, tolerance) of the best range for a key no
    exact part refines to fit: for each date or number column the key does not use, the key
    with that column within the tolerance its comparison credits (`ranges`); of those, the
    one likely matches most often fall within, and of those about equal (`AGREE_SLACK`), the
    one with the fewest pairs. None without such a column, or where fewer than
    `MIN_EVIDENCE` likely matches show which range holds them (at a size where no key is
    precise enough to find them, a range is a guess: a window stays).

    A range keeps the pairs a comparison would still credit on its column (a payment's date a
    few days later, its amount less a fee), which an exact second part loses, and its pairs
    on the whole table are counted on the sample as a key's are: it reaches the same days or
    amounts at every size, where a window's reach shrinks as records crowd in."""
    if len(likely[0]) < MIN_EVIDENCE:
        return None
    used = {KeyPart.parse(k).column for k in key}
    options = []
    for column, tolerance in ranges.items():
        if column in used or column not in measure.work:
            continue
        try:
            pairs = _quietly(measure.range_pairs, key, column, tolerance)
        except InputError:  # values the range cannot read: no range on this column
            continue
        if pairs:
            kept = round(measure.range_agreement(column, tolerance, key, likely), 2)
            options.append((kept, pairs, column, tolerance))
    if not options:
        return None
    best = max(o[0] for o in options)
    return min((o for o in options if o[0] >= best - AGREE_SLACK), key=lambda o: o[1])


def _take_range(trial: KeyTrial, option, ranged: list[dict]) -> None:
    """Put the range `option` (`_range_options`) in the rules for `trial`'s key."""
    _, pairs, column, tolerance = option
    from linkage.blocking._range import RangeBlocker

    said = RangeBlocker(column, key=trial.key, **tolerance).tolerance()
    ranged.append({"name": f"suggested_range_{len(ranged) + 1}", "type": "range",
                   "key": list(trial.key), "column": column, **tolerance})
    trial.chosen, trial.chosen_pairs = [*trial.key, column], pairs
    trial.outcome = f"ranged: [{', '.join(trial.key)}] with {column} {said}, {pairs:,} pairs"


def _widen(widened: list[tuple[KeyTrial, dict, int]], spare: int) -> None:
    """Widen the windows with the total budget the keys left (`spare` pairs), one record at
    a time round the windows in their order, up to `MAX_WINDOW`: a key became a window because
    its pairs passed the per-key share of `max_pairs`, which leaves room for other keys; what
    they did not take is recall for the window. Each window's outcome says its final width."""
    grew = True
    while grew:
        grew = False
        for trial, window, present in widened:
            if window["window"] < MAX_WINDOW and present <= spare:
                window["window"] += 1
                trial.chosen_pairs += present
                spare -= present
                grew = True
    for trial, window, _ in widened:
        trial.outcome = (f"sorted neighbourhood on [{', '.join(window['sort_key'])}], "
                         f"window {window['window']}")
