"""Dictionary-encoded work columns: one small integer per record and each distinct value once.

Blocking, comparison and term frequencies only ever ask "are these two values equal?" and "how
similar are these two distinct values?", so the pipeline keeps every normalized column as codes
into its distinct values. A million records with 20,000 distinct surnames then cost 4 MB of
codes and 20,000 strings, instead of a million Python strings; normalizers and similarity
functions run once per distinct value (or distinct pair), and equality is integer equality.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.io import arrow_data

_INT32_MAX = np.iinfo(np.int32).max


def _narrow(codes: np.ndarray, distinct: int) -> np.ndarray:
    """int32 codes when the distinct values allow it (half the memory of int64)."""
    return codes.astype(np.int32 if distinct < _INT32_MAX else np.int64, copy=False)


ARROW_UNIQUES = 50_000  # above this many distinct values, keep them as Arrow strings


@dataclass(eq=False)
class EncodedColumn:
    """A column of text as `codes` (-1 where missing) into its distinct values.

    The distinct values are an object array of `str`, or, for a column with many of them
    (e-mail addresses, phone numbers), an Arrow string array: a few bytes a value instead of a
    Python object each; `pick` makes Python strings only for the values a step looks at.
    The empty string, where present, is a value like any other (as in the decoded column);
    `blank` is its code, so that comparisons and keys can treat it as missing.
    """

    codes: np.ndarray
    uniques: np.ndarray  # object array of distinct str, or a pyarrow string array
    _cache: dict = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.codes)

    def cached(self, key: str, make):
        """What `make()` gives, made once per column and kept under `key` (a step's derived
        arrays: counts, TF-IDF vectors ...)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def distinct(self) -> int:
        return len(self.uniques)

    def pick(self, codes: np.ndarray) -> np.ndarray:
        """The values of these codes (all >= 0), as an object array of str."""
        if isinstance(self.uniques, np.ndarray):
            return self.uniques[codes]
        import pyarrow as pa

        return self.uniques.take(pa.array(np.asarray(codes, dtype=np.int64))).to_numpy(
            zero_copy_only=False).astype(object, copy=False)

    def all_uniques(self) -> np.ndarray:
        """Every distinct value, as an object array of str."""
        return self.pick(np.arange(self.distinct))

    @property
    def blank(self) -> int:
        """The code of "" (-1 when no record holds it)."""
        if "blank" not in self._cache:
            if isinstance(self.uniques, np.ndarray):
                where = np.flatnonzero(self.uniques == "") if self.distinct else []
                self._cache["blank"] = int(where[0]) if len(where) else -1
            else:
                import pyarrow.compute as pc

                self._cache["blank"] = int(pc.index(self.uniques, "").as_py())
        return self._cache["blank"]

    def present(self, codes: np.ndarray) -> np.ndarray:
        """Codes that hold a value: neither missing nor the empty string."""
        ok = codes >= 0
        if self.blank >= 0:
            ok &= codes != self.blank
        return ok

    def values(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The decoded object array (str, or None where missing), of `rows` or of all."""
        codes = self.codes if rows is None else self.codes[rows]
        out = np.empty(len(codes), dtype=object)  # None where missing
        present = codes >= 0
        out[present] = self.pick(codes[present])
        return out

    def take(self, rows: np.ndarray) -> EncodedColumn:
        """The column of a subset of records (same distinct values)."""
        return EncodedColumn(self.codes[rows], self.uniques)

    def counts(self) -> np.ndarray:
        """Records per code."""
        if "counts" not in self._cache:
            present = self.codes[self.codes >= 0]
            self._cache["counts"] = np.bincount(present, minlength=self.distinct)
        return self._cache["counts"]

    def shares(self) -> np.ndarray:
        """Each value's share of the non-missing records, as `value_counts(normalize=True)`
        counts them (the empty string included)."""
        if "shares" not in self._cache:
            counts = self.counts().astype(np.int64)
            total = counts.sum()
            self._cache["shares"] = counts / total if total else counts.astype(np.float64)
        return self._cache["shares"]


def _compact(codes: np.ndarray, uniques) -> EncodedColumn:
    """An EncodedColumn with narrow codes, its many distinct values kept as Arrow strings
    (`uniques`: an object array of str, or an Arrow string array)."""
    import pyarrow as pa

    if isinstance(uniques, pa.ChunkedArray):
        uniques = uniques.combine_chunks()
    if isinstance(uniques, pa.Array):
        if len(uniques) > ARROW_UNIQUES:
            return EncodedColumn(_narrow(codes, len(uniques)), uniques.cast(pa.large_string()))
        uniques = uniques.to_numpy(zero_copy_only=False)
    uniques = np.asarray(uniques, dtype=object)
    if len(uniques) > ARROW_UNIQUES:
        uniques = pa.array(uniques, type=pa.large_string())
    return EncodedColumn(_narrow(codes, len(uniques)), uniques)


def factorize_text(values):
    """`pd.factorize(values, use_na_sentinel=True)` for text (an object array of str and
    None/NaN, or an Arrow string array): the same codes, numbered in order of first
    appearance, and the same distinct values, found by Arrow's hash table (two to three
    times faster than pandas' on Python strings) and given back as an Arrow array. Anything
    Arrow cannot hold as text goes to pandas."""
    import pyarrow as pa

    try:
        array = (values if isinstance(values, pa.Array | pa.ChunkedArray)
                 else pa.array(values, type=pa.large_string(), from_pandas=True))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError, TypeError):
        return pd.factorize(values, use_na_sentinel=True)
    if isinstance(array, pa.ChunkedArray):
        # one hash table over every chunk, in order; each chunk's indices then point into the
        # dictionary of all of them (else, the chunks are combined first)
        encoded = array.dictionary_encode()
        if encoded.num_chunks and len({_address(c.dictionary) for c in encoded.chunks}) == 1:
            codes = np.concatenate([_indices(c.indices) for c in encoded.chunks])
            return codes, encoded.chunk(0).dictionary
        array = array.combine_chunks()
    encoded = array.dictionary_encode()
    return _indices(encoded.indices), encoded.dictionary


def _address(array) -> tuple:
    """Where an Arrow array's buffers lie: equal for arrays that share them."""
    return tuple(b.address if b is not None else None for b in array.buffers())


def _indices(indices) -> np.ndarray:
    """Dictionary indices as int64 codes, -1 where missing."""
    return indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def encode_values(values: np.ndarray) -> EncodedColumn:
    """Encode an object array of `str` / None (what `linkage.io.as_text` returns)."""
    codes, uniques = factorize_text(np.asarray(values, dtype=object))
    return _compact(codes, uniques)


def encode_series(values: pd.Series) -> EncodedColumn:
    """Encode a column as `linkage.io.as_text` would render it: each present value's text.

    Values are hashed as they are (Arrow strings, numbers, dates) and turned into text once
    per distinct value; distinct values with the same text (1 and "1" in an object column)
    share a code. Floats take the record-by-record path: 0.0 and -0.0 hash alike but read
    differently.
    """
    from linkage.io import as_text

    arrow = _arrow_text(values)
    if arrow is not None:  # hashed by Arrow where it lies: no Python string per value
        codes, uniques = factorize_text(arrow)
        return _compact(codes, uniques)
    if pd.api.types.is_float_dtype(values.dtype) or pd.api.types.is_complex_dtype(values.dtype):
        return encode_values(as_text(values))
    codes, raw = pd.factorize(values.reset_index(drop=True), use_na_sentinel=True)
    if len(raw) == 0:
        return EncodedColumn(codes.astype(np.int32), np.zeros(0, dtype=object))
    raw = pd.Series(raw)  # keeps the column's dtype, so that text is rendered as for the column
    distinct = raw.to_numpy(dtype=object)
    if isinstance(raw.dtype, pd.StringDtype) or all(type(v) is str for v in distinct):
        return _compact(codes, distinct)
    text = as_text(raw)
    merged, uniques = pd.factorize(text)
    codes = np.where(codes >= 0, merged[codes], -1)
    return _compact(codes, uniques)


# A column of at least this many records whose strided sample of DISTINCT_SAMPLE values is
# at least DISTINCT_SHARE distinct is encoded without hashing where a normalize step numbers
# its values again (`encode_distinct`): the hash table of millions of nearly distinct strings
# costs more than normalizing the few repeats twice.
DISTINCT_ROWS = 1_000_000
DISTINCT_SAMPLE = 100_000
DISTINCT_SHARE = 0.99


def encode_distinct(values: pd.Series) -> EncodedColumn | None:
    """The column as codes into its values without hashing them: each present value its own
    code, in row order, a repeat included (`uniques` may then hold a value twice). For a
    column of Arrow text, of at least `DISTINCT_ROWS` records, nearly all distinct in a
    strided sample (e-mail addresses, phone numbers), that only a normalize step reads: it
    does each value once (a repeat twice, with the same result) and numbers its results
    again, so the column it makes is what `encode_series` would have led to. None where the
    column is not such a column: `encode_series` then."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from linkage.ordering import distinct_share

    arrow = _arrow_text(values)
    if arrow is None or len(arrow) < DISTINCT_ROWS:
        return None
    if distinct_share(arrow, DISTINCT_SAMPLE) < DISTINCT_SHARE:
        return None
    if arrow.null_count == 0:
        return _compact(np.arange(len(arrow), dtype=np.int64), arrow)
    valid = pc.is_valid(arrow)
    mask = valid.to_numpy(zero_copy_only=False) if isinstance(valid, pa.Array) else \
        np.concatenate([c.to_numpy(zero_copy_only=False) for c in valid.chunks])
    codes = np.cumsum(mask, dtype=np.int64) - 1
    codes[~mask] = -1
    return _compact(codes, arrow.filter(valid))


def _arrow_text(values: pd.Series):
    """The Arrow strings behind a pandas string column (pyarrow storage), else None.

    `pd.factorize` of such a column numbers its values in order of first appearance with -1
    for missing, as Arrow's dictionary encoding does; its distinct values are the same
    strings. Hashing them in Arrow skips a Python string per distinct value both ways."""
    import pyarrow as pa

    if not isinstance(values.dtype, pd.StringDtype) or values.dtype.storage != "pyarrow":
        return None
    data = arrow_data(values)
    if not isinstance(data, pa.ChunkedArray | pa.Array) or not (
            pa.types.is_string(data.type) or pa.types.is_large_string(data.type)):
        return None
    return data


def encode_chunks(chunks) -> EncodedColumn:
    """`encode_series` of a column given as consecutive pieces (a chunk of records at a time):
    each piece is encoded alone, then their distinct values are merged into one code space.
    Pieces of Arrow strings are encoded as one (the same codes: both number the values in
    order of first appearance), the Arrow strings shared, not copied."""
    import pyarrow as pa

    chunks = list(chunks)
    if len(chunks) > 1 and all(_arrow_text(chunk) is not None for chunk in chunks):
        return encode_series(pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(
            [c for chunk in chunks for c in _as_chunks(_arrow_text(chunk))],
            type=_arrow_text(chunks[0]).type)), dtype=chunks[0].dtype))
    parts = [encode_series(chunk) for chunk in chunks]
    if len(parts) == 1:
        return parts[0]
    every = pa.chunked_array(
        [p.uniques.cast(pa.large_string()) if isinstance(p.uniques, pa.Array)
         else pa.array(p.uniques, type=pa.large_string()) for p in parts],
        type=pa.large_string())
    merged, uniques = factorize_text(every)
    del every
    codes, offset = [], 0
    for part in parts:
        table = np.append(merged[offset:offset + part.distinct], -1)  # -1 picks the last
        codes.append(table[part.codes])
        offset += part.distinct
    return _compact(np.concatenate(codes), uniques)


def _as_chunks(data) -> list:
    import pyarrow as pa

    return list(data.chunks) if isinstance(data, pa.ChunkedArray) else [data]


def renumbered(codes: np.ndarray) -> np.ndarray:
    """Codes renumbered in order of first appearance (-1 stays -1), as `pd.factorize` numbers
    values: numbering then never depends on how the codes were made.

    The numbers are `pd.factorize`'s, -1 counted as a value: a code after the first -1 is one
    more than it would be without it. Codes already numbered in order of first appearance
    (each new code larger than every code before it, as an encoded column's are, with gaps
    where values were masked) are renumbered in a few passes in order over them; others by
    pandas' hash table."""
    codes = np.asarray(codes)
    if len(codes) == 0 or codes.dtype.kind not in "iu":
        return _factorized(codes)
    top = np.maximum.accumulate(codes)
    new = np.empty(len(codes), dtype=bool)
    new[0] = True
    np.greater(codes[1:], top[:-1], out=new[1:])  # a code larger than all before it
    missing = codes < 0
    if missing.any():
        if int(codes.min()) < -1:
            return _factorized(codes)
        new[int(np.argmax(missing))] = True  # -1 is numbered where it first appears
        new[0] = True
    del top
    firsts = codes[new]  # increasing, but for the one -1
    if int(firsts.max()) >= 2 * len(firsts) + 1024:
        # far fewer new codes than the largest: not numbered in order of appearance (or
        # sparse, where a table of codes would be too large)
        return _factorized(codes)
    # Every code must have been new once: no code first seen after a larger one.
    seen = np.zeros(int(firsts.max()) + 2, dtype=bool)
    seen[codes[~missing]] = True
    if int(seen.sum()) != int((firsts >= 0).sum()):
        return _factorized(codes)
    number = np.full(len(seen), -1, dtype=np.int64)
    order = np.arange(len(firsts), dtype=np.int64)
    number[firsts[firsts >= 0]] = order[firsts >= 0]
    out = number[codes]
    out[missing] = -1
    return out


# splitmix64's multiplier: each part's codes are mixed into a record's 64-bit hash with it
_MIX = np.uint64(0xBF58476D1CE4E5B9)


def tuple_codes(parts, n: int, missing: np.ndarray | None = None,
                largest: list[int] | None = None) -> np.ndarray:
    """One code per record for its tuple of part codes (each array int64, at least -1):
    equal tuples, equal codes, numbered in order of first appearance (`renumbered`); -1 for
    the records in `missing`, which count as one value where they first appear. `parts()`
    yields the arrays, one per part, and may be called several times; `largest`: each
    part's largest code, where the caller has them.

    Where the tuples fit one int64 as mixed-radix numbers, they are combined so and numbered
    by one hash table. Where they do not (many wide columns: a record's label over seven
    columns at ten million records), each step whose product would overflow renumbered
    first, one hash table a part; `hashed_tuple_codes` numbers them by one checked 64-bit hash
    instead (5.6 s became 3.6 there), and this way is kept for when two tuples share a hash.
    """
    if largest is None:
        largest = [int(codes.max(initial=0)) for codes in parts()]
    total = 1
    for top in largest:
        total *= top + 2
    if len(largest) > 1 and total >= 1 << 62:
        fast = hashed_tuple_codes(parts, n, missing)
        if fast is not None:
            return fast
    combined = None
    for codes in parts():
        if combined is None:
            combined = codes
            continue
        width = int(codes.max(initial=0)) + 1
        if int(combined.max(initial=0)) >= (1 << 62) // width:
            combined = renumbered(combined)  # smaller numbers for the same values
        combined = combined * width + codes  # one number per pair of values
        if missing is not None:
            combined[missing] = -1
    if combined is None:
        return np.zeros(n, dtype=np.int64)
    return renumbered(combined)


def hashed_tuple_codes(parts, n: int, missing: np.ndarray | None = None) -> np.ndarray | None:
    """The codes of each record's tuple of part codes: `renumbered` of their exact
    combination (equal tuples, equal codes, numbered in order of first appearance), and -1
    for the records in `missing`, which count as one value where they first appear (as
    `renumbered` counts -1). `parts()` yields the int64 code arrays, one per part, and is
    called twice.

    One hash table over a 64-bit hash of each tuple (`tuple_codes` calls it where the exact
    combination would need one per part); every record is then checked against the first of
    its code. None where two different tuples share a hash (about one table in a million at
    ten million records): the caller combines them exactly."""
    from linkage.parallel import factorize

    if n == 0:
        return None
    mixed = np.full(n, _MIX, dtype=np.uint64)  # (from 0, codes all 0 would hash to 0)
    with np.errstate(over="ignore"):
        for codes in parts():
            mixed ^= codes.astype(np.uint64)
            mixed *= _MIX
            mixed ^= mixed >> np.uint64(31)
    if missing is not None:
        mixed[missing] = 0
    labels = factorize(mixed.view(np.int64))
    del mixed
    new = np.empty(n, dtype=bool)  # labels are numbered in order of first appearance
    new[0] = True
    np.greater(labels[1:], np.maximum.accumulate(labels)[:-1], out=new[1:])
    first = np.flatnonzero(new)[labels]  # each record's first record of its code
    del new
    if missing is not None and not np.array_equal(missing[first], missing):
        return None
    for codes in parts():
        same = codes[first] == codes
        if missing is not None:
            same |= missing
        if not same.all():
            return None
    if missing is not None:
        labels[missing] = -1
    return labels


def _factorized(codes: np.ndarray) -> np.ndarray:
    from linkage.parallel import factorize

    if codes.dtype.kind in "iu":  # -1 a value like any other, as pandas numbers integers
        out = factorize(codes)
    else:
        out = pd.factorize(codes, use_na_sentinel=True)[0].astype(np.int64)
    out[codes < 0] = -1
    return out


LOST_EXAMPLES = 3  # distinct values a warning quotes
_EXAMPLE_CHARS = 60  # of each, so a 1 MB cell does not become a 1 MB warning


def lost_values(gone: np.ndarray, counts: np.ndarray | None = None) -> dict:
    """Of the values a normalize step made missing (`gone`, each standing for `counts`
    records, else one), those that had text: how many records, and `examples` of them."""
    had = np.array([v is not None and v == v and str(v).strip() != "" for v in gone],
                   dtype=bool)
    weights = np.ones(len(gone), dtype=np.int64) if counts is None else counts
    return {"emptied": int(weights[had].sum()), "emptied_examples": examples(gone[had])}


def examples(values) -> list[str]:
    """The first `LOST_EXAMPLES` distinct values in sorted order, each cut short."""
    return [v if len(v) <= _EXAMPLE_CHARS else v[:_EXAMPLE_CHARS] + "…"
            for v in sorted({str(v) for v in values})[:LOST_EXAMPLES]]


def _joined(pieces: list):
    """Normalized distinct values, given a piece at a time (object arrays, or Arrow strings
    where a normalizer kept them as Arrow), as one array `factorize_text` numbers alike."""
    import pyarrow as pa

    if all(isinstance(p, np.ndarray) for p in pieces):
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=object)
    try:
        return pa.chunked_array([p if not isinstance(p, np.ndarray) else pa.array(
            p, type=pa.large_string(), from_pandas=True) for p in pieces],
            type=pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError, TypeError):
        return np.concatenate([p if isinstance(p, np.ndarray) else p.to_numpy(
            zero_copy_only=False).astype(object) for p in pieces])


def _all_ascii(held) -> bool:
    """Whether an Arrow string array holds ASCII text only, none missing."""
    import pyarrow.compute as pc

    return held.null_count == 0 and bool(pc.all(pc.string_is_ascii(held), min_count=0).as_py())


def _arrow_alone(step, held):
    """The step's result for the distinct values `held` (Arrow, ASCII, none missing) where it
    comes from Arrow alone (`distinct_arrow`, `map_unique`'s ascii_func), the values handed to
    it as a Series over `held` itself; None where the step does them otherwise (then the
    caller does them as Python strings, as for any chunk, and that run says what is wrong)."""
    import pyarrow as pa

    from linkage.normalize._text import distinct_arrow

    series = pd.Series(pd.arrays.ArrowExtensionArray(held.cast(pa.large_string())),
                       name=step.column)
    try:
        with distinct_arrow(series, held, arrow_series=True) as made:
            return made(step.apply(series))
    except Exception:  # redone with Python strings, which raises it there
        return None


def normalize_encoded(step, column: EncodedColumn, ids: pd.Series | None = None, *,
                      chunk_rows: int | None = None):
    """Apply a `Normalize` step to each distinct value once; return the column and its stats:
    records `changed`, `missing` after the step, and `lost_values`.

    The counts are of records, as the record-by-record path counts them. When a
    normalizer rejects a value (a date that cannot be read), it is rerun on the records so that
    its error names them. With `chunk_rows`, distinct values are normalized that many at a time.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from linkage.normalize._text import distinct_arrow

    size = chunk_rows or max(column.distinct, 1)
    after, changed_u, none_after, lost = [], [], [], []
    arrow = not isinstance(column.uniques, np.ndarray)
    held_only: bool | None = None  # whether the step did a chunk from Arrow alone (below)
    try:
        for start in range(0, column.distinct, size):
            stop = min(start + size, column.distinct)
            if not arrow:
                before = column.pick(np.arange(start, stop))
                done = step.apply(pd.Series(before, name=step.column, dtype=object)).to_numpy(
                    dtype=object)
                # Per distinct value: is it missing now, and did normalizing change it?
                gone = np.array([v is None or v != v for v in done], dtype=bool)
                after.append(done)
                none_after.append(gone)
                changed_u.append(gone | (done != before))
                lost.append(before[gone])
                continue
            # Many distinct values, held as Arrow strings: a normalizer that does them all in
            # Arrow (`map_unique`'s ascii_func) hands its result back as Arrow
            held = column.uniques.slice(start, stop - start)
            if held_only is None and _all_ascii(held):  # tried on one value first
                held_only = _arrow_alone(step, held.slice(0, 1)) is not None
            if held_only and _all_ascii(held):
                # The step does the chunk in Arrow alone (`map_unique`'s ascii_func): no
                # Python string of it is made, of the values or of the result.
                done = _arrow_alone(step, held)
                held_only = done is not None
                if done is not None:
                    gone = done.is_null().to_numpy(zero_copy_only=False)
                    changed_u.append(pc.fill_null(pc.not_equal(done, held.cast(done.type)),
                                                  True).to_numpy(zero_copy_only=False))
                    after.append(done)
                    none_after.append(gone)
                    lost.append(held.filter(pa.array(gone)).to_numpy(
                        zero_copy_only=False).astype(object, copy=False))
                    continue
            before = held.to_numpy(zero_copy_only=False).astype(object, copy=False)
            series = pd.Series(before, name=step.column, dtype=object)
            with distinct_arrow(series, held) as made:
                result = step.apply(series)
                done = made(result)
            if done is None:
                done = result.to_numpy(dtype=object)
                gone = np.array([v is None or v != v for v in done], dtype=bool)
                changed_u.append(gone | (done != before))
            else:
                gone = done.is_null().to_numpy(zero_copy_only=False)
                changed_u.append(pc.fill_null(pc.not_equal(done, held.cast(done.type)),
                                              True).to_numpy(zero_copy_only=False))
            after.append(done)
            none_after.append(gone)
            lost.append(before[gone])
    except InputError:
        index = ids.to_numpy() if ids is not None else None
        step.apply(pd.Series(column.values(), index=index, name=step.column, dtype=object))
        raise
    none_after = np.concatenate(none_after) if none_after else np.zeros(0, dtype=bool)
    changed_u = np.concatenate(changed_u) if changed_u else np.zeros(0, dtype=bool)
    after = _joined(after)
    merged, uniques = factorize_text(after)
    del after
    codes = np.append(merged, -1)[column.codes]  # code -1 (missing) picks up the last
    present = column.codes >= 0
    counts = np.bincount(column.codes[present], minlength=column.distinct)
    lost = np.concatenate(lost) if lost else np.zeros(0, dtype=object)  # in code order
    stats = {"changed": int(counts[changed_u].sum()),
             "missing": int((~present).sum() + counts[none_after].sum()),
             **lost_values(lost, counts[none_after])}
    return _compact(codes, uniques), stats
