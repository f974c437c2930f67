"""Blockers propose candidate pairs; their union is what gets compared.

A pair is a pair of internal row numbers (i < j). In link mode only pairs whose rows come
from different sources are proposed. Everything is vectorised with numpy: group boundaries
over sorted key codes, then all pairs inside a group by index arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from linkage._schema import Configurable, SchemaViolation, check
from linkage.blocking._keys import KEY_FUNCTIONS, KeyPart, key_codes, key_values
from linkage.normalize import EncodedColumn, renumbered


class DecodedColumns(Mapping):
    """Encoded columns seen as plain object arrays, each decoded the first time it is read
    (for blockers that read values: sorted neighbourhood, MinHash, embeddings)."""

    def __init__(self, encoded: Mapping[str, EncodedColumn]):
        self.encoded = encoded
        self._decoded: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._decoded:
            self._decoded[name] = self.encoded[name].values()
        return self._decoded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.encoded)

    def __len__(self) -> int:
        return len(self.encoded)


@dataclass
class BlockingInput:
    """What blockers read: normalized columns by name, and the source of each row (link mode).

    `columns` may be a `DecodedColumns`, whose `encoded` columns key blockers read directly.
    """

    columns: Mapping[str, np.ndarray]
    source: np.ndarray | None = None  # int8 0 (left) / 1 (right); None when deduplicating
    # int64 label per row with `group_by`: every key holds it, pairs never cross it
    group: np.ndarray | None = None
    _keys: dict = field(default_factory=dict, repr=False)  # key codes, computed once

    @classmethod
    def encoded(cls, columns: Mapping[str, EncodedColumn], source: np.ndarray | None = None,
                group: np.ndarray | None = None):
        return cls(DecodedColumns(columns), source, group)

    @property
    def key_columns(self) -> Mapping:
        """Encoded columns where there are some, else the value arrays."""
        return getattr(self.columns, "encoded", self.columns)

    @property
    def n(self) -> int:
        columns = self.key_columns
        return len(next(iter(columns.values()))) if columns else 0

    def key_codes(self, parts: list[KeyPart]) -> np.ndarray:
        """`key_codes` of a key, computed once per blocking run (estimate, then propose)."""
        name = tuple(map(str, parts))
        if name not in self._keys:
            codes = key_codes(parts, self.key_columns)
            if self.group is not None:  # the group is a part of every key
                codes = renumbered(np.where(codes < 0, -1, codes * (int(self.group.max()) + 1)
                                            + self.group))
            self._keys[name] = codes
        return self._keys[name]

    def once(self, name: tuple, compute: Callable[[], Any]) -> Any:
        """`compute()`, kept under `name` for the rest of the blocking run (a blocker's order
        or codes, made for its estimate and read again when it proposes)."""
        if name not in self._keys:
            self._keys[name] = compute()
        return self._keys[name]

    def prepare_keys(self, keys: list[list[KeyPart]]) -> None:
        """`key_codes` of several keys, computed side by side (threads: each key's hash table
        releases the GIL), each stored as `key_codes` stores it."""
        from linkage.parallel import thread_map

        todo = list({tuple(map(str, parts)): parts for parts in keys
                     if tuple(map(str, parts)) not in self._keys}.values())
        if len(todo) > 1:
            thread_map(self.key_codes, todo)

    def same_group(self, left: np.ndarray, right: np.ndarray) -> np.ndarray | None:
        """Which pairs (left[i], right[i]) are inside one group (None: no groups)."""
        return None if self.group is None else self.group[left] == self.group[right]


@dataclass
class SkippedBlock:
    """A block above `max_block_size`: sub-blocked (`how` says how), or skipped (`how` empty:
    no other column to order it by, or an engine that cannot sub-block)."""

    blocker: str
    key: str
    value: str
    size: int
    how: str = ""  # e.g. "sorted neighbourhood on [surname], [email], window 5"


@dataclass
class Proposal:
    """Pairs proposed by one blocker, and the oversized blocks it sub-blocked or skipped."""

    left: np.ndarray
    right: np.ndarray
    skipped: list[SkippedBlock] = field(default_factory=list)


def groups(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows sorted by code (missing dropped), group start offsets and sizes."""
    rows = np.nonzero(codes >= 0)[0]
    order = np.argsort(codes[rows], kind="stable")
    rows = rows[order]
    sorted_codes = codes[rows]
    if len(rows) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return rows, empty, empty
    change = np.flatnonzero(np.diff(sorted_codes)) + 1
    starts = np.concatenate([[0], change]).astype(np.int64)
    sizes = np.diff(np.concatenate([starts, [len(rows)]])).astype(np.int64)
    return rows, starts, sizes


def pairs_within(rows: np.ndarray, starts: np.ndarray, sizes: np.ndarray):
    """All pairs of positions inside each group, as row numbers (left < right: `groups` keeps
    each group's rows in ascending order). Built with few temporaries, as pair counts can be
    large: the member at position p of a group ending at e pairs with positions p+1..e-1."""
    members = len(rows)
    index = np.int32 if members < np.iinfo(np.int32).max else np.int64
    positions = np.arange(members, dtype=np.int64)
    counts = np.repeat(starts + sizes, sizes) - positions - 1
    total = int(counts.sum())
    # right position k of the flat list: k + (p + 1 - first k of p's run), for its left p.
    shift = positions + 1 - (np.cumsum(counts) - counts)
    right_pos = np.arange(total, dtype=np.int64)
    right_pos += np.repeat(shift, counts)
    del shift
    rows = rows.astype(index, copy=False)
    left = rows[np.repeat(positions.astype(index), counts)]
    right = rows[right_pos]
    return left, right


# Inside a block above `max_block_size`, each record is paired with about this many neighbours
# in all, over one sorted pass per ordering column: a block of s records costs about
# s * SUB_NEIGHBOURS pairs instead of s^2 / 2, and a pair that agrees on the key and is close
# on any one ordering column is still proposed.
SUB_NEIGHBOURS = 8
SUB_PASSES = 4  # ordering columns at most


def sort_ranks(part: KeyPart, columns) -> np.ndarray:
    """The rank of each record's key-part value in sorted (text) order; -1 where missing."""
    column = columns[part.column]
    if isinstance(column, EncodedColumn):
        values = part.compute(column.all_uniques())
    else:
        values = part.compute(column)
    codes, uniques = pd.factorize(pd.Series(values, dtype=object))
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[np.argsort(np.asarray(uniques, dtype=str), kind="stable")] = np.arange(len(uniques))
    ranked = np.where(codes >= 0, rank[np.maximum(codes, 0)], -1).astype(np.int64)
    if isinstance(column, EncodedColumn):
        ranked = np.append(ranked, -1)[column.codes]  # code -1 (missing) picks up the last
    return ranked


def sub_window(passes: int) -> int:
    return 1 + max(1, SUB_NEIGHBOURS // max(passes, 1))


def neighbours(rows: np.ndarray, block: np.ndarray, rank: np.ndarray, window: int,
               source: np.ndarray | None):
    """Pairs of records of one block that are within `window` of each other when the block is
    sorted by `rank` (records without a value left out)."""
    ok = rank[rows] >= 0
    rows, block = rows[ok], block[ok]
    order = np.lexsort((rows, rank[rows], block))
    rows, block = rows[order], block[order]
    if source is not None and len(rows) > 1:  # equal values: the tables take turns
        rows = alternated(rows, (block[1:] == block[:-1]) & (rank[rows[1:]] == rank[rows[:-1]]),
                          source)
    lefts, rights = [], []
    for k in range(1, window):
        a, b = rows[:-k], rows[k:]
        keep = block[:-k] == block[k:]
        if source is not None:
            keep &= source[a] != source[b]
        lefts.append(np.minimum(a, b)[keep])
        rights.append(np.maximum(a, b)[keep])
    if not lefts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(lefts), np.concatenate(rights)




def alternated(rows: np.ndarray, tie: np.ndarray, source: np.ndarray) -> np.ndarray:
    """`rows` (in sort order) with each run of equal sort keys reordered so that the two
    tables of a link take turns: the first left record of the run, the first right one, the
    second left, the second right, ... (each table's records in their order, the longer
    table's rest at the end). `tie[i]`: rows i and i + 1 have equal keys.

    A window pairs a record with the next `window - 1`: in a run of equal keys ordered by row,
    every left record would precede every right one, and only the few at the boundary could
    pair across. Runs stay where they are, so a window still reaches the neighbouring keys."""
    n = len(rows)
    if n < 2 or not tie.any():
        return rows
    run = np.concatenate(([0], np.cumsum(~tie)))  # run number of each position
    start = np.flatnonzero(np.concatenate(([True], ~tie)))[run]  # its run's first position
    right = (source[rows] == 1).astype(np.int64)
    rights_before = np.cumsum(right) - right
    lefts_before = np.arange(n) - rights_before
    turn = np.where(right == 1, rights_before - rights_before[start],
                    lefts_before - lefts_before[start])
    return rows[np.lexsort((right, turn, run))]


def _window_pairs(present: np.ndarray, window: int) -> int:
    """Pairs a window of `window` proposes over blocks of `present` records each."""
    present = present.astype(np.int64)
    return int(sum(np.maximum(present - k, 0).sum() for k in range(1, window)))


@dataclass
class KeyJoin:
    """A blocker's pairs as an equi-join, for an engine that blocks by joining its own data
    (Spark): records pair when every part of one of `keys` is equal on both (values computed
    by `KeyPart.compute`); a block above `max_block_size` is not joined whole but sorted by
    `sub_parts(key, data)` (`data` has `key_columns`, the columns in the run's order) and
    each record paired with the next `sub_window(len(sub_parts)) - 1`, as `propose` does."""

    keys: list[list[KeyPart]]
    sub_parts: Callable[[list[KeyPart], Any], list[KeyPart]]


@dataclass
class WindowJoin:
    """A blocker's pairs as a join on sort positions: the records with a value of any of
    `parts`, sorted by the parts' values joined with "\\x1f" (then by row; in a link, equal
    values taking turns between the tables, as `alternated` orders them), each paired with the
    next `window - 1`; in a link only the pairs across tables, counted for the budget."""

    parts: list[KeyPart]
    window: int


@dataclass
class BandJoin:
    """A blocker's pairs as equi-joins on band keys, then verified pair by pair (MinHash-LSH):
    `band_keys(texts)` gives each text of a batch its `bands` keys (an (n, bands) int64
    array, each text's alone) and whether it takes part; two records of `column` are
    candidates when any band's keys are equal, a bucket (band, key) of more than
    `max_block_size` records is skipped (`skipped_blocks` lists them, from (band, size, first
    row, its text) in the order of the band and the key as unsigned), and a candidate counts
    where `verify(left texts, right texts)` holds."""

    column: str
    bands: int
    band_keys: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    verify: Callable[[np.ndarray, np.ndarray], np.ndarray]
    skipped_blocks: Callable[[list[tuple[int, int, int, Any]]], list[SkippedBlock]]


@dataclass
class NeighbourJoin:
    """A blocker's pairs from one vector per record (embeddings): `vectors(texts)` gives the
    vectors of a batch of the present values of `column` (each text's its own), `neighbours(
    rows, vectors, source)` the pairs (l, r) of the records `rows` (ascending) holding those
    vectors (`source`: each one's table in a link, None in a dedupe), and
    `estimate(records, left_records)` the pairs it would give, before any vector is made.
    The neighbour search reads every vector at once: an engine gathers them to run it."""

    column: str
    vectors: Callable[[list[str]], np.ndarray]
    neighbours: Callable[[np.ndarray, np.ndarray, np.ndarray | None],
                         tuple[np.ndarray, np.ndarray]]
    estimate: Callable[[int, int], int]


class Blocker(Configurable):
    """Base of blockers; `type:` in the rules picks the kind (default: keys)."""

    family: ClassVar[str] = "blocker"
    default_kind: ClassVar[str] = "keys"

    name: str | None

    def estimate(self, data: BlockingInput, max_block_size: int) -> int:
        raise NotImplementedError

    def propose(self, data: BlockingInput, max_block_size: int) -> Proposal:
        raise NotImplementedError

    @property
    def columns(self) -> list[str]:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    # What `linkage update` asks of a blocker: only the pairs that hold a new record, and
    # whether an old pair is still proposed now that the table has grown.

    def estimate_new(self, data: BlockingInput, is_new: np.ndarray,
                     max_block_size: int) -> int:
        """Pairs holding a record where `is_new` is set that `propose_new` will give; by
        default the bound of the whole table's estimate."""
        return int(self.estimate(data, max_block_size))

    def propose_new(self, data: BlockingInput, is_new: np.ndarray,
                    max_block_size: int) -> Proposal:
        """The pairs a full run over `data` proposes that hold a new record (`is_new`); by
        default all of them are proposed and the others dropped."""
        proposal = self.propose(data, max_block_size)
        keep = ((is_new[proposal.left] | is_new[proposal.right])
                & (proposal.left != proposal.right))
        return Proposal(proposal.left[keep], proposal.right[keep], list(proposal.skipped))

    def still_proposes(self, data: BlockingInput, left: np.ndarray, right: np.ndarray,
                       max_block_size: int) -> np.ndarray | None:
        """Whether a full run over `data` would propose each pair (`left`, `right`: rows of
        `data`, -1 for a record not in it); None where the blocker cannot tell without
        proposing every pair again (an update then keeps what the pair's run said)."""
        return None

    def lookup_index(self, work: dict[str, np.ndarray], max_block_size: int):
        """An index of the run records `work` (normalized values by column) whose
        `find(query)` gives the (query row, run row) pairs a full run over both would
        propose, as a list of array pairs (`Result.match`). By default the blocker proposes
        over the run's records and the queries together each time."""
        return ProposeLookup(self, work, max_block_size)

    def join_plan(self) -> KeyJoin | WindowJoin | BandJoin | NeighbourJoin | None:
        """The blocker's pairs as joins (`KeyJoin`, `WindowJoin`, `BandJoin`, `NeighbourJoin`),
        for an engine that blocks by joining its own data rather than by calling `propose`
        (Spark); None, the default, where they cannot be written as joins: such an engine
        then refuses the blocker by its rules key."""
        return None


def parse_parts(owner: object, field_name: str, key: str | list[str]) -> list[KeyPart]:
    items = [key] if isinstance(key, str) else list(key)
    check(len(items) > 0, owner, field_name, "must name at least one key part", key)
    parts = []
    for k, item in enumerate(items):
        try:
            parts.append(KeyPart.parse(item))
        except ValueError as err:
            sub = field_name if isinstance(key, str) else f"{field_name}[{k}]"
            raise SchemaViolation(sub, str(err), item, type(owner).__name__) from None
    return parts


class KeyBlocker(Blocker):
    """Candidate pairs share at least one key. A key is one part (`postcode`) or several
    (`[soundex(surname), year(dob)]`), all of which must be equal.
    """

    kind = "keys"

    def __init__(self, keys: list[str | list[str]], *, name: str | None = None):
        check(isinstance(keys, list | tuple) and len(keys) > 0, self, "keys",
              "must be a non-empty list of keys", keys)
        self.keys = [k if isinstance(k, str) else list(k) for k in keys]
        self.name = name
        self._parts = [parse_parts(self, f"keys[{i}]", k) for i, k in enumerate(self.keys)]

    @property
    def columns(self) -> list[str]:
        return sorted({p.column for parts in self._parts for p in parts})

    @property
    def key_parts(self) -> list[list[KeyPart]]:
        """Each key's parts, in the rules' order (what an engine joins on)."""
        return self._parts

    def describe(self) -> str:
        return " or ".join("[" + ", ".join(map(str, parts)) + "]" for parts in self._parts)

    def join_plan(self) -> KeyJoin:
        return KeyJoin(self.key_parts, self.sub_parts)

    def estimate(self, data: BlockingInput, max_block_size: int) -> int:
        return sum(self.estimate_per_key(data, max_block_size))

    def sub_parts(self, parts: list[KeyPart], data: BlockingInput) -> list[KeyPart]:
        """The columns an oversized block of key `parts` is sorted by: those of the blocker's
        other keys (the columns its author thought identifying), else the other columns of
        the data; never the key's own columns, which are equal inside the block."""
        own = {p.column for p in parts}
        columns = [p.column for other in self._parts for p in other]
        if not [c for c in columns if c not in own]:
            columns = list(data.key_columns)
        out = [KeyPart(c) for c in dict.fromkeys(columns) if c not in own]
        return out[:SUB_PASSES]

    def estimate_per_key(self, data: BlockingInput, max_block_size: int) -> list[int]:
        """Each key's pairs: exact for blocks within `max_block_size`; for a sub-blocked
        block, every neighbour of each pass in a dedupe (a bound: passes may repeat pairs),
        the pairs across tables each pass proposes in a link."""
        out = []
        for parts in self._parts:
            codes = data.key_codes(parts)
            valid = codes >= 0
            m = int(codes.max()) + 1 if valid.any() else 0
            sizes = np.bincount(codes[valid], minlength=m).astype(np.int64)
            big = sizes > max_block_size
            if data.source is None:
                count = int((sizes * (sizes - 1) // 2)[~big].sum())
            else:
                left = np.bincount(codes[valid & (data.source == 0)], minlength=m)
                right = np.bincount(codes[valid & (data.source == 1)], minlength=m)
                count = int((left.astype(np.int64) * right)[~big].sum())
            if big.any():
                sub = self.sub_parts(parts, data)
                window = sub_window(len(sub))
                in_big = valid & big[np.maximum(codes, 0)]
                for part in sub:
                    if data.source is None:  # every neighbour: counted from the sizes
                        ranked = in_big & (data.key_codes([part]) >= 0)
                        present = np.bincount(codes[ranked], minlength=m)[big]
                        count += _window_pairs(present, window)
                    else:  # the neighbours across tables, as `propose` pairs them
                        rows = np.flatnonzero(in_big)
                        a, _ = neighbours(rows, codes[rows], sort_ranks(part, data.key_columns),
                                          window, data.source)
                        count += len(a)
            out.append(count)
        return out

    def propose(self, data: BlockingInput, max_block_size: int) -> Proposal:
        from linkage.parallel import thread_map

        # each key's pairs on a thread (sorting and pairing release the GIL), in key order
        done = thread_map(lambda parts: self._propose_key(parts, data, max_block_size),
                          self._parts)
        lefts = [a for lefts, _, _ in done for a in lefts]
        rights = [b for _, rights, _ in done for b in rights]
        skipped = [s for _, _, skipped in done for s in skipped]
        return Proposal(np.concatenate(lefts), np.concatenate(rights), skipped)

    def _propose_key(self, parts: list[KeyPart], data: BlockingInput, max_block_size: int):
        """One key's pairs: (left arrays, right arrays, the blocks it sub-blocked)."""
        lefts, rights, skipped = [], [], []
        codes = data.key_codes(parts)
        rows, starts, sizes = groups(codes)
        big = sizes > max_block_size
        if big.any():
            sub = self.sub_parts(parts, data)
            window = sub_window(len(sub))
            how = ""
            if sub:
                how = (f"sorted neighbourhood on {', '.join(map(str, sub))}, "
                       f"window {window}")
                member = np.repeat(big, sizes)
                big_rows = rows[member]
                block = np.repeat(np.arange(len(sizes)), sizes)[member]
                for part in sub:
                    a, b = neighbours(big_rows, block, sort_ranks(part, data.key_columns),
                                      window, data.source)
                    lefts.append(a)
                    rights.append(b)
            key = "[" + ", ".join(map(str, parts)) + "]"
            for s, size in zip(starts[big], sizes[big], strict=True):
                value = key_values(parts, data.key_columns, rows[s : s + 1])
                skipped.append(SkippedBlock(self.name or "", key, value, int(size), how))
        keep = (sizes >= 2) & ~big
        member = np.repeat(keep, sizes)
        rows, sizes = rows[member], sizes[keep]
        if data.source is None:
            new_starts = np.cumsum(sizes) - sizes
            a, b = pairs_within(rows, new_starts, sizes)
        else:
            a, b = _cross_pairs(rows, codes, data.source)
        lefts.append(a)
        rights.append(b)
        return lefts, rights, skipped

    def estimate_new(self, data: BlockingInput, is_new: np.ndarray,
                     max_block_size: int) -> int:
        """Exactly the pairs with a new record in blocks within `max_block_size`, and the
        bound of a sub-blocked block's neighbour pairs with one."""
        total = 0
        for parts in self._parts:
            size, old = _block_sizes(key_codes(parts, data.columns), is_new)
            ok = size <= max_block_size
            total += int(((size * (size - 1) - old * (old - 1)) // 2)[ok].sum())
            # a sub-blocked block: at most its new records' neighbours, both sides, every pass
            sub = self.sub_parts(parts, data) if (~ok).any() else []
            total += 2 * (sub_window(len(sub)) - 1) * len(sub) * int((size - old)[~ok].sum())
        return total

    def propose_new(self, data: BlockingInput, is_new: np.ndarray,
                    max_block_size: int) -> Proposal:
        """The new records' keys joined with everyone's: new × old, and each new × new pair
        once. A block above `max_block_size` is sub-blocked as a full run does it, and its
        neighbour pairs with a new record kept."""
        lefts, rights, skipped = [], [], []
        for parts in self._parts:
            done = len(skipped)
            codes = key_codes(parts, data.columns)
            size, _old = _block_sizes(codes, is_new)
            valid = codes >= 0
            block_size = np.where(valid, size[np.where(valid, codes, 0)] if len(size) else 0, 0)
            big = valid & (block_size > max_block_size)
            for code in np.unique(codes[big & is_new]):
                first = np.flatnonzero(codes == code)[:1]
                key = "[" + ", ".join(map(str, parts)) + "]"
                skipped.append(SkippedBlock(self.name or "", key,
                                            key_values(parts, data.columns, first),
                                            int(size[code])))
            sub = self.sub_parts(parts, data) if big.any() else []
            if sub:
                window = sub_window(len(sub))
                held = np.flatnonzero(big & np.isin(codes, codes[big & is_new]))
                for part in sub:
                    a, b = neighbours(held, codes[held], sort_ranks(part, data.columns),
                                      window, None)
                    keep = is_new[a] | is_new[b]
                    lefts.append(a[keep])
                    rights.append(b[keep])
                how = f"sorted neighbourhood on {', '.join(map(str, sub))}, window {window}"
                for block in skipped[done:]:
                    block.how = how
            ok = valid & ~big & (block_size >= 2)
            members = pd.DataFrame({"b": np.flatnonzero(ok), "code": codes[ok]})
            fresh = members[is_new[members["b"].to_numpy()]].rename(columns={"b": "a"})
            joined = fresh.merge(members, on="code", sort=False)
            a, b = joined["a"].to_numpy(np.int64), joined["b"].to_numpy(np.int64)
            keep = (a != b) & (~is_new[b] | (b < a))
            lefts.append(a[keep])
            rights.append(b[keep])
        return Proposal(np.concatenate(lefts), np.concatenate(rights), skipped)

    def lookup_index(self, work: dict[str, np.ndarray], max_block_size: int) -> KeyLookup:
        """Each key's blocks in a dict, looked up per query (an oversized block is
        sub-blocked as a full run would)."""
        return KeyLookup(self, work, max_block_size)

    def still_proposes(self, data: BlockingInput, left: np.ndarray, right: np.ndarray,
                       max_block_size: int) -> np.ndarray:
        """Both records share one of the keys, in a block within `max_block_size`."""
        hit = np.zeros(len(left), dtype=bool)
        if data.n == 0:
            return hit
        for parts in self._parts:
            codes = key_codes(parts, data.columns)
            size = np.bincount(codes[codes >= 0]) if (codes >= 0).any() else np.zeros(0)
            ok = (codes >= 0) & (size[np.maximum(codes, 0)] <= max_block_size
                                 if len(size) else False)
            codes = np.where(ok, codes, -1)
            a = np.where(left >= 0, codes[np.maximum(left, 0)], -1)
            b = np.where(right >= 0, codes[np.maximum(right, 0)], -1)
            hit |= (a >= 0) & (a == b)
        return hit


def _block_sizes(codes: np.ndarray, is_new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Records per key code, and old records (not `is_new`) per key code."""
    valid = codes >= 0
    m = int(codes.max()) + 1 if valid.any() else 0
    return (np.bincount(codes[valid], minlength=m).astype(np.int64),
            np.bincount(codes[valid & ~is_new], minlength=m).astype(np.int64))


def _cross_pairs(rows: np.ndarray, codes: np.ndarray, source: np.ndarray):
    """Pairs (left row, right row) with equal codes, by a hash join."""
    frame = pd.DataFrame({"row": rows, "code": codes[rows]})
    src = source[rows]
    left = frame[src == 0]
    right = frame[src == 1]
    joined = left.merge(right, on="code", suffixes=("_l", "_r"), sort=False)
    a = joined["row_l"].to_numpy(np.int64)
    b = joined["row_r"].to_numpy(np.int64)
    return np.minimum(a, b), np.maximum(a, b)


class SortedNeighbourhood(Blocker):
    """Sort records by a key and pair each with the next `window - 1` records. In a link
    only pairs across the tables count, and records with equal keys take turns between the
    tables, so a window inside a run of equal keys still pairs across."""

    kind = "sorted_neighbourhood"

    def __init__(self, sort_key: str | list[str], *, window: int = 5, name: str | None = None):
        check(isinstance(window, int) and window >= 2, self, "window",
              "must be a whole number of at least 2", window)
        self.sort_key = sort_key if isinstance(sort_key, str) else list(sort_key)
        self.window = window
        self.name = name
        self._parts = parse_parts(self, "sort_key", self.sort_key)

    @property
    def columns(self) -> list[str]:
        return sorted({p.column for p in self._parts})

    @property
    def sort_parts(self) -> list[KeyPart]:
        """The sort key's parts, in order (what an engine sorts by)."""
        return self._parts

    def describe(self) -> str:
        return f"sorted by [{', '.join(map(str, self._parts))}], window {self.window}"

    def join_plan(self) -> WindowJoin:
        return WindowJoin(self.sort_parts, self.window)

    def _order(self, data: BlockingInput) -> np.ndarray:
        """The records with any part of the sort key, in sort order: by the key's text, equal
        texts by row, but in a link taking turns between the tables (`alternated`). Computed
        once per blocking run (estimate, then propose)."""
        name = (SortedNeighbourhood, *map(str, self._parts))  # no key's name (all text)
        if name in data._keys:
            return data._keys[name]
        values = [pd.Series(p.compute(data.columns[p.column]), dtype=object) for p in self._parts]
        present = np.zeros(data.n, dtype=bool)
        for v in values:
            present |= v.notna().to_numpy()
        text = values[0].fillna("")
        for v in values[1:]:
            text = text + "\x1f" + v.fillna("")
        rows = np.nonzero(present)[0]
        texts = text.to_numpy()[rows].astype(str)
        keys = [rows, texts]
        if data.group is not None:  # groups one after another: a window crosses few
            keys.append(data.group[rows])
        order = np.lexsort(keys)
        rows = rows[order]
        if data.source is not None and len(rows) > 1:
            texts = texts[order]
            tie = texts[1:] == texts[:-1]
            if data.group is not None:
                tie &= data.group[rows[1:]] == data.group[rows[:-1]]
            rows = alternated(rows, tie, data.source)
        data._keys[name] = rows
        return rows

    def lookup_index(self, work: dict[str, np.ndarray], max_block_size: int) -> SortedLookup:
        """The run's sort order; a query meets the `window - 1` records on either side of
        where it sorts."""
        return SortedLookup(self, work)

    def still_proposes(self, data: BlockingInput, left: np.ndarray, right: np.ndarray,
                       max_block_size: int) -> np.ndarray:
        """The two records sit within `window` of each other in the sort order."""
        if data.n == 0:
            return np.zeros(len(left), dtype=bool)
        order = self._order(data)
        rank = np.full(data.n, -1, dtype=np.int64)
        rank[order] = np.arange(len(order))
        a = np.where(left >= 0, rank[np.maximum(left, 0)], -1)
        b = np.where(right >= 0, rank[np.maximum(right, 0)], -1)
        return (a >= 0) & (b >= 0) & (np.abs(a - b) < self.window)

    def estimate(self, data: BlockingInput, max_block_size: int) -> int:
        """Exactly the pairs `propose` gives: every neighbour in a dedupe, in a link only
        the neighbours from the other table."""
        every, across = self.pair_counts(data)
        return every if data.source is None else across

    def pair_counts(self, data: BlockingInput) -> tuple[int, int]:
        """(every neighbour pair the window meets, those of them across tables in a link:
        counted on the order, a pass per step; 0 in a dedupe)."""
        order = self._order(data)
        m = len(order)
        every = int(sum(max(m - k, 0) for k in range(1, self.window)))
        if data.source is None:
            return every, 0
        side = data.source[order]
        return every, int(sum(int(np.count_nonzero(side[:-k] != side[k:]))
                              for k in range(1, min(self.window, m))))

    def propose(self, data: BlockingInput, max_block_size: int) -> Proposal:
        order = self._order(data)
        lefts, rights = [], []
        for k in range(1, self.window):
            a, b = order[:-k], order[k:]
            if data.source is not None:
                cross = data.source[a] != data.source[b]
                a, b = a[cross], b[cross]
            lefts.append(np.minimum(a, b))
            rights.append(np.maximum(a, b))
        return Proposal(np.concatenate(lefts), np.concatenate(rights))


# --- lookup indexes ---------------------------------------------------------------------------
# A blocker's blocks over a finished run's records, built once, that find the run records a few
# new records would be paired with (`Result.match`), as a full run over the run's records and
# the new ones would pair them (`Blocker.lookup_index`).

SMALL = 64  # a lookup of at most this many records takes the plain-Python paths


def part_values(part, values: np.ndarray) -> list:
    """`KeyPart.compute` for a few values, without pandas' per-call cost (same results)."""
    if len(values) > SMALL:
        return part.compute(values).tolist()
    fn = KEY_FUNCTIONS[part.function][0] if part.function else None
    out = []
    for value in values:
        if value is None or value is pd.NA or value == "" or (
                isinstance(value, float) and value != value):
            out.append(None)
        else:
            text = str(value)
            out.append(text if fn is None else (fn(text, part.argument or 0) or None))
    return out


def key_text(parts, columns: dict[str, np.ndarray]) -> list:
    """A compound key per record as one text, None where any part is missing."""
    keys = None
    for part in parts:
        values = part_values(part, columns[part.column])
        keys = values if keys is None else [
            None if a is None or b is None else a + "\x1f" + b
            for a, b in zip(keys, values, strict=True)]
    return keys


def spans(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, position) of every position in the ranges [starts[i], ends[i])."""
    sizes = np.maximum(ends - starts, 0)
    owner = np.repeat(np.arange(len(starts)), sizes)
    offset = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return owner, np.repeat(starts, sizes) + offset


class KeyGroups:
    """Records grouped by a key (a blocking key's text, or a row hash): each distinct key's
    records in one sorted array, found again by a dict lookup per query record."""

    def __init__(self, keys: list, max_block_size: int | None):
        codes, uniques = pd.factorize(pd.Series(keys, dtype=object), use_na_sentinel=True)
        present = np.flatnonzero(codes >= 0)
        self.members = present[np.argsort(codes[present], kind="stable")]
        sizes = np.bincount(codes[present], minlength=len(uniques))
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        # A block that a full run with the query would find above `max_block_size`: its
        # records are found by `oversized` and sub-blocked, not joined whole.
        self.big = (np.zeros(len(sizes), dtype=bool) if max_block_size is None
                    else sizes + 1 > max_block_size)
        self.full_sizes = sizes
        self.sizes = np.where(self.big, 0, sizes)
        self.block_of = dict(zip(uniques.tolist(), range(len(uniques)), strict=True))

    def oversized(self, keys: list) -> list[tuple[int, np.ndarray]]:
        """(query row, the run rows of its block) for each query whose block is oversized."""
        out = []
        for q, k in enumerate(keys):
            b = None if k is None else self.block_of.get(k)
            if b is not None and self.big[b]:
                out.append((q, self.members[self.starts[b]:self.starts[b] + self.full_sizes[b]]))
        return out

    def find(self, keys: list) -> tuple[np.ndarray, np.ndarray]:
        """(query row, run row) of the records that share each query's key."""
        block = np.array([-1 if k is None else self.block_of.get(k, -1) for k in keys],
                         dtype=np.int64)
        hit = np.flatnonzero(block >= 0)
        owner, position = spans(self.starts[block[hit]],
                                 self.starts[block[hit]] + self.sizes[block[hit]])
        return hit[owner], self.members[position]


class KeyLookup:
    """A key blocker's blocks over the run's records, one per key."""

    def __init__(self, blocker, work: dict[str, np.ndarray], max_block_size: int):
        self.blocker, self.work = blocker, work
        self.keys = [(parts, KeyGroups(key_text(parts, work), max_block_size))
                     for parts in blocker.key_parts]

    def find(self, query: dict[str, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        """(query row, run row) pairs, a tuple per key and per sub-blocked block."""
        found = []
        for parts, index in self.keys:
            keys = key_text(parts, query)
            found.append(index.find(keys))
            found += [self.sub_block(parts, q, members, query)
                      for q, members in index.oversized(keys)]
        return found

    def sub_block(self, parts, q: int, members: np.ndarray,
                  query: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(query row, run row) of query `q`'s neighbours in its block, which a full run with
        it would find above `max_block_size` and sub-block: sorted by the same columns, the
        query last among equal values (it would be the newest row), as `update` does it."""
        data = BlockingInput({c: np.concatenate([v[members], query[c][q:q + 1]])
                              for c, v in self.work.items()}, None)
        sub = self.blocker.sub_parts(parts, data)
        rows = np.arange(len(members) + 1, dtype=np.int64)
        block = np.zeros(len(rows), dtype=np.int64)
        runs = []
        for part in sub:
            a, b = neighbours(rows, block, sort_ranks(part, data.columns),
                               sub_window(len(sub)), None)
            runs.append(a[b == len(members)])  # a < b: the query is always b
        run = np.unique(np.concatenate(runs)) if runs else np.zeros(0, np.int64)
        return np.full(len(run), q, dtype=np.int64), members[run]


class SortedLookup:
    """A sorted neighbourhood's order: a query sits where its sort key falls, after equal
    keys (it would be the newest row), and meets the `window - 1` records on either side."""

    def __init__(self, blocker, work: dict[str, np.ndarray]):
        self.blocker = blocker
        text, present = sort_text(blocker, work)
        rows = np.flatnonzero(present)
        order = np.lexsort((rows, text[rows]))
        self.rows = rows[order]
        self.text = text[self.rows]
        self.window = blocker.window

    def find(self, query: dict[str, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        text, present = sort_text(self.blocker, query)
        qs = np.flatnonzero(present)
        pos = np.searchsorted(self.text, text[qs], side="right")
        starts = np.maximum(pos - (self.window - 1), 0)
        ends = np.minimum(pos + (self.window - 1), len(self.rows))
        owner, position = spans(starts, ends)
        return [(qs[owner], self.rows[position])]


def sort_text(blocker, columns: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The sort key text of SortedNeighbourhood._order, and whether any part is present."""
    values = [part_values(p, columns[p.column]) for p in blocker.sort_parts]
    present = np.array([any(v is not None for v in row) for row in zip(*values, strict=True)],
                       dtype=bool)
    text = ["\x1f".join("" if v is None else v for v in row) for row in zip(*values,
                                                                              strict=True)]
    return np.array(text, dtype=str), present


class ProposeLookup:
    """Any other blocker: it proposes over the run's records and the queries together, and the
    pairs of a query with a run record are kept."""

    def __init__(self, blocker, work: dict[str, np.ndarray], max_block_size: int):
        self.blocker, self.work, self.max_block_size = blocker, work, max_block_size

    def find(self, query: dict[str, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        work = self.work
        n = len(next(iter(work.values())))
        both = BlockingInput({c: np.concatenate([v, query[c]]) for c, v in work.items()}, None)
        prop = self.blocker.propose(both, self.max_block_size)
        lo, hi = np.minimum(prop.left, prop.right), np.maximum(prop.left, prop.right)
        keep = (hi >= n) & (lo < n)
        return [(hi[keep] - n, lo[keep])]
