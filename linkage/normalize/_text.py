"""Plain text normalization and the by-unique-value machinery every normalizer shares."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

import numpy as np
import pandas as pd

from ..errors import InputError, RulesError

# Unicode categories kept as they are: letters (Hangul syllables and jamo are "Lo"), combining
# marks (scripts such as Devanagari need them), and numbers. Everything else becomes a space.
_KEPT_CATEGORIES = frozenset("LMN")


class _PunctuationTable(dict):
    """A `str.translate` table that decides each character once, the first time it is seen."""

    def __missing__(self, code: int) -> int | str:
        ch = chr(code)
        value: int | str = code if unicodedata.category(ch)[0] in _KEPT_CATEGORIES else " "
        self[code] = value
        return value


_PUNCTUATION_TO_SPACE = _PunctuationTable()


def column_label(values: pd.Series) -> str:
    """How an error message names the column that `values` came from."""
    return repr(values.name) if values.name is not None else "(unnamed column)"


def check_series(values: object, kind: str) -> pd.Series:
    """Reject anything that is not a Series before it fails somewhere less clear."""
    if not isinstance(values, pd.Series):
        raise TypeError(
            f"normalize_{kind} expects a pandas Series of strings, got {type(values).__name__}; "
            "pass one column, e.g. df['name']"
        )
    return values


class OptionValueError(RulesError, ValueError):
    """An option value a normalizer does not support (`order="DYM"`).

    A RulesError, because it comes from the rules; also a ValueError, as Python callers expect.
    """


def check_choice(kind: str, option: str, value: object, choices: tuple[object, ...]) -> None:
    """Raise OptionValueError when an option value is not one of `choices`."""
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise OptionValueError(
            f"normalizer {kind!r}: option {option}={value!r} is not supported; use one of {allowed}"
        )


ON_ERROR = ("raise", "null", None)  # None: YAML reads `on_error: null` as None
_EXAMPLES_SHOWN = 3


def unreadable(values: pd.Series, out: pd.Series) -> pd.Series:
    """Records whose value had text but normalized to missing (blank text is missing)."""
    had = values.notna() & values.map(lambda v: as_text(v).strip() != "", na_action="ignore")
    return had.astype(bool) & out.isna().to_numpy()


def raise_unreadable(values: pd.Series, invalid: pd.Series, what: str, expected: str) -> None:
    """Raise InputError naming the column, the count and the first few records whose value
    could not be read as `what` (`on_error: raise`); `expected` says what is accepted."""
    if not invalid.any():
        return
    bad = values[invalid.to_numpy()]
    examples = ", ".join(
        f"record id '{rid}': {as_text(value)!r}"
        for rid, value in zip(bad.index[:_EXAMPLES_SHOWN], bad.iloc[:_EXAMPLES_SHOWN], strict=True)
    )
    noun = "value" if len(bad) == 1 else "values"
    msg = (
        f"column {column_label(values)}: {len(bad)} {noun} could not be read as {what} "
        f"(e.g. {examples}); {expected}; fix the values, or set `on_error: null` on this "
        "normalizer to treat them as missing"
    )
    raise InputError(msg)


_HANDED = threading.local()  # see `distinct_arrow`


@contextmanager
def distinct_arrow(values: pd.Series, array, *, arrow_series: bool = False
                   ) -> Iterator[Callable[[pd.Series], object]]:
    """Tell `map_unique` that `values` (a Series of str) are distinct, none missing, and held
    by `array` (Arrow strings, in the same order): inside the block, `map_unique(values, ...)`
    reads them from `array` instead of hashing the Python strings and converting them again,
    and, where its `ascii_func` did all of them, keeps its result as Arrow too. The block
    gets a function that gives, for the Series a normalizer returned, that Arrow result
    (null where missing), or None where that Series is not `map_unique`'s own (a normalizer
    that changed it afterwards) or was made otherwise. The same values either way.

    With `arrow_series`, `map_unique` returns that result as a Series over the Arrow array
    itself (no Python string per value): for a caller that reads only the Arrow result and
    discards the Series (`normalize_encoded`), and that `values` may hold as Arrow too."""
    import pyarrow as pa

    _HANDED.given, _HANDED.made = (values, array.cast(pa.large_string())), None
    _HANDED.arrow_series = arrow_series

    def made(result: pd.Series):
        found = _HANDED.made
        return found[1] if found is not None and found[0] is result else None

    try:
        yield made
    finally:
        _HANDED.given = _HANDED.made = None
        _HANDED.arrow_series = False


def _handed_arrow(values: pd.Series, ascii_func: Callable | None) -> pd.Series | None:
    """`map_unique` of values `distinct_arrow` handed over, where `ascii_func` does them all
    (each ASCII); None otherwise."""
    given = getattr(_HANDED, "given", None)
    if given is None or given[0] is not values or ascii_func is None or not len(values):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    text = given[1]
    if len(text) != len(values) or text.null_count or not pc.all(
            pc.string_is_ascii(text), min_count=0).as_py():
        return None
    done = ascii_func(text)
    done = pc.if_else(pc.equal(done, ""), pa.scalar(None, done.type), done)
    if getattr(_HANDED, "arrow_series", False):
        out = pd.Series(pd.arrays.ArrowExtensionArray(done), index=values.index,
                        name=values.name)
    else:
        out = pd.Series(done.to_numpy(zero_copy_only=False), index=values.index,
                        name=values.name, dtype=object)
    _HANDED.made = (out, done)
    return out


def map_unique(values: pd.Series, func: Callable[[str], str | None],
               ascii_func: Callable | None = None) -> pd.Series:
    """Apply `func` to each distinct non-missing value once and spread the results back.

    Missing values (None, NaN, pd.NA) stay None, and a result that is an empty string becomes
    None, so callers only ever see `str` or `None`. The index and name of `values` are kept.

    `ascii_func`, where given, does what `func` does for ASCII text, over a whole Arrow string
    array at once (pyarrow.compute); the other values still go through `func`.
    """
    handed = _handed_arrow(values, ascii_func)
    if handed is not None:
        return handed
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    uniques = np.asarray(uniques, dtype=object)
    # The extra trailing None is what code -1 (missing) picks up when indexing below.
    table = np.full(len(uniques) + 1, None, dtype=object)
    fast = np.zeros(len(uniques), dtype=bool)
    if ascii_func is not None and len(uniques):
        import pyarrow as pa
        import pyarrow.compute as pc

        text = None
        if pd.api.types.infer_dtype(uniques, skipna=False) == "string":  # ASCII by Arrow
            text = pa.array(uniques, type=pa.large_string())
            fast = pc.string_is_ascii(text).to_numpy(zero_copy_only=False)
        else:
            fast = np.array([type(u) is str and u.isascii() for u in uniques], dtype=bool)
        if fast.all() and text is not None:
            done = ascii_func(text)
        elif fast.any():
            done = ascii_func(pa.array(uniques[fast], type=pa.large_string()))
        if fast.any():
            done = pc.if_else(pc.equal(done, ""), pa.scalar(None, done.type), done)
            table[:-1][fast] = done.to_numpy(zero_copy_only=False)
    slow = np.flatnonzero(~fast)
    table[slow] = [r if r else None for r in (func(as_text(u)) for u in uniques[slow])]
    return pd.Series(table[codes], index=values.index, name=values.name, dtype=object)


# What `str.strip()` removes from ASCII text (`str.isspace`, which also counts \x1c-\x1f).
ASCII_SPACE = "".join(chr(c) for c in range(128) if chr(c).isspace())


def ascii_digits_column(values):
    """`ascii_digits` of ASCII text, over an Arrow string array."""
    return ascii_keep(values, _DIGIT_BYTES)


_DIGIT_BYTES = np.zeros(256, dtype=bool)
_DIGIT_BYTES[ord("0"):ord("9") + 1] = True


def ascii_keep(values, keep: np.ndarray):
    """An Arrow array of ASCII text with only the characters whose byte `keep` (a bool for
    each of the 256 bytes) marks, the others deleted: what a regex replacing a class of them
    by "" gives, read as bytes in one pass. Text with a missing value goes by the regex."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if values.null_count or not len(values):
        dropped = "".join(f"\\x{b:02x}" for b in range(128) if not keep[b])
        return pc.replace_substring_regex(values, f"[{dropped}]", "") if dropped else values
    kind, values = values.type, values.cast(pa.large_string())
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64)[
        values.offset:values.offset + len(values) + 1]
    data = np.frombuffer(values.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
    kept = keep[data]
    return pa.LargeStringArray.from_buffers(
        len(values), pa.py_buffer(_kept_ends(kept, offsets - offsets[0])),
        pa.py_buffer(data[kept])).cast(kind)


_ENDS_STEP = 1 << 15  # strings at a time: each step's running count stays in the cache


def _kept_ends(kept: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The offsets of the text that keeps the bytes `kept` marks: for each string boundary
    (`offsets`, from 0), how many kept bytes lie before it. A running count over a few
    thousand strings at a time, not one over every byte (an int64 a byte, hundreds of MB
    written once for a column of a few million values: measured 0.26-0.71 s against 0.1 s
    for 2.4M phone numbers)."""
    n = len(offsets) - 1
    ends = np.zeros(len(offsets), dtype=np.int64)
    total = 0
    for start in range(0, n, _ENDS_STEP):
        stop = min(start + _ENDS_STEP, n)
        a, b = int(offsets[start]), int(offsets[stop])
        if b == a:  # only empty strings
            ends[start + 1:stop + 1] = total
            continue
        running = np.cumsum(kept[a:b], dtype=np.int64)
        at = offsets[start + 1:stop + 1] - a
        ends[start + 1:stop + 1] = total + np.where(at > 0, running[np.maximum(at - 1, 0)], 0)
        total += int(running[-1])
    return ends


def replace_integral(values, pattern: str):
    """`integral_text` over an Arrow array of text by `pattern` (RE2, "\\1" kept), where a
    value holds a "." (no float's text lacks one)."""
    import pyarrow.compute as pc

    if not pc.any(pc.match_substring(values, "."), min_count=0).as_py():
        return values
    return pc.replace_substring_regex(values, pattern, "\\1")


def as_text(value: Hashable) -> str:
    """A cell as a string; non-string cells (numbers in an object column) are formatted, and
    a float holding an integer is that integer (19651013.0 is "19651013"): pandas reads a
    column of integers with blanks as floats."""
    if isinstance(value, str):
        return value
    if isinstance(value, float | np.floating) and value.is_integer():
        return str(int(value))
    return str(value)


INTEGRAL_FLOAT = re.compile(r"\s*([+-]?\d+)\.0+\s*")


def integral_text(text: str) -> str:
    """"19651013.0", an integer written by way of a float (a CSV saved from pandas), as
    "19651013"; any other text as it is."""
    match = INTEGRAL_FLOAT.fullmatch(text)
    return match.group(1) if match else text


# ASCII text: every character but 0-9 deleted in one `str.translate`.
_ASCII_NON_DIGITS = {code: None for code in range(128) if not chr(code).isdecimal()}


def ascii_digits(text: str) -> str:
    """Every decimal digit of `text` (any script, full width included) as ASCII digits."""
    if text.isascii():
        return text.translate(_ASCII_NON_DIGITS)
    return "".join(str(unicodedata.decimal(ch)) for ch in text if ch.isdecimal())


def text_core(text: str, *, lowercase: bool = True, strip_punctuation: bool = True) -> str:
    """NFKC, optional case-fold, optional punctuation-to-space, collapsed white space."""
    text = unicodedata.normalize("NFKC", text)
    if lowercase:
        # Case folding can leave decomposed sequences (e.g. Greek with two accents), so NFKC again.
        text = unicodedata.normalize("NFKC", text.casefold())
    if strip_punctuation:
        text = text.translate(_PUNCTUATION_TO_SPACE)
    return " ".join(text.split())


def normalize_text(
    values: pd.Series, *, lowercase: bool = True, strip_punctuation: bool = True
) -> pd.Series:
    """Normalize free text: NFKC, case-fold, punctuation to spaces, white space collapsed.

    Letters of every script (Hangul included), combining marks and digits are kept.

    Options:
        lowercase: case-fold the text (default True).
        strip_punctuation: turn punctuation, symbols and control characters into spaces
            (default True).
    """
    check_series(values, "text")
    return map_unique(
        values,
        lambda s: text_core(s, lowercase=lowercase, strip_punctuation=strip_punctuation),
        ascii_text_core if lowercase and strip_punctuation else None,
    )


def ascii_text_core(values):
    """`text_core` (lower-cased, punctuation to spaces) of ASCII text over an Arrow array: NFKC
    and case folding leave ASCII as `lower()` does, the only ASCII letters and numbers are
    a-z and 0-9 (every other character becomes a space), and splitting at white space and
    joining with one space is then a run of spaces as one, none at either end."""
    import pyarrow.compute as pc

    spaced = pc.replace_substring_regex(pc.ascii_lower(values), "[^a-z0-9]+", " ")
    return pc.utf8_trim(spaced, " ")
