"""Issue 18: summary.json's text lengths and token counts (`before_after`) of a column held as
Arrow text are counted by Arrow where the text is ASCII; they equal Python's `len` and
`\\S+` counts of the same values, white space of every ASCII kind included."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from linkage import before_after

ODD = ["a b", " x\vy ", "p\x1cq", "", None, "tab\there  ", "  ", "one", "a\x1f", "\x00z",
       "f\x0cg\rh\ni", "x" * 40]


def _arrow(values: list, chunk: int = 5, kind=None) -> pd.Series:
    """`values` as Arrow text in chunks of `chunk` values, each a slice of one array (its
    offsets start inside the array's buffers)."""
    kind = kind or pa.large_string()
    whole = pa.array(values, kind)
    chunks = [whole.slice(a, chunk) for a in range(0, len(values), chunk)]
    return pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array(chunks, kind)))


def _same(a, b) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("kind", [pa.large_string(), pa.string()])
def test_ascii_arrow_text_is_measured_as_python_measures_it(kind):
    values = ODD * 50
    column = _arrow(values, kind=kind)
    arrow = before_after._ascii_arrow(column)
    assert arrow is not None  # chunked, each chunk a slice
    counted = [before_after._ascii_counts(chunk) for chunk in arrow.chunks]
    got = tuple(np.concatenate([c[k] for c in counted]) for k in (0, 1))
    assert _same(got, before_after._lengths(pd.Series(values, dtype=object)))
    chars, tokens = got
    assert tokens[:4].tolist() == [2, 2, 2, 0] and np.isnan(tokens[4])
    assert chars[1] == 5 and tokens[9] == 1


def test_a_nearly_distinct_column_is_counted_in_its_bytes_with_the_same_result():
    """An e-mail-like column (nearly all distinct) takes the byte path in `_lengths`; a
    column of few values is measured once per value; both as Python measures them."""
    values = [None if k % 97 == 0 else f"user {k}\t@x.org" if k % 3 else f" u{k}\x1c"
              for k in range(30_000)]
    column = _arrow(values, chunk=4096)
    assert before_after._mostly_distinct(column)
    assert _same(before_after._lengths(column),
                 before_after._lengths(pd.Series(values, dtype=object)))
    assert not before_after._mostly_distinct(_arrow(ODD * 50))


def test_other_text_takes_the_python_path_with_the_same_counts():
    values = ["\u3000한국\u3000어", "a\xa0b", "plain", *ODD]
    column = _arrow(values)
    assert before_after._ascii_arrow(column) is None  # not ASCII: Python's white space
    assert _same(before_after._lengths(column),
                 before_after._lengths(pd.Series(values, dtype=object)))
    assert before_after._lengths(column)[1][:2].tolist() == [2, 2]
