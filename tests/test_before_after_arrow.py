"""Issue 18: summary.json's text lengths and token counts (`before_after`) of a column held as
Arrow text are counted by Arrow where the text is ASCII; they equal Python's `len` and
`\\S+` counts of the same values, white space of every ASCII kind included."""

import numpy as np
import pandas as pd
import pyarrow as pa

from linkage import before_after

ODD = ["a b", " x\vy ", "p\x1cq", "", None, "tab\there  ", "  ", "one", "a\x1f", "\x00z",
       "f\x0cg\rh\ni", "x" * 40]


def _arrow(values: list, chunk: int = 5) -> pd.Series:
    chunks = [pa.array(values[a:a + chunk], pa.large_string())
              for a in range(0, len(values), chunk)]
    return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(chunks, pa.large_string())))


def _same(a, b) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))


def test_ascii_arrow_text_is_measured_as_python_measures_it():
    values = ODD * 50
    column = _arrow(values)
    assert before_after._ascii_arrow(column) is not None  # Arrow's path, chunked
    got = before_after._lengths(column)
    assert _same(got, before_after._lengths(pd.Series(values, dtype=object)))
    chars, tokens = got
    assert tokens[:12].tolist()[:4] == [2, 2, 2, 0] and np.isnan(tokens[4])
    assert chars[1] == 5 and tokens[9] == 1


def test_other_text_takes_the_python_path_with_the_same_counts():
    values = ["\u3000한국\u3000어", "a\xa0b", "plain", *ODD]
    column = _arrow(values)
    assert before_after._ascii_arrow(column) is None  # not ASCII: Python's white space
    assert _same(before_after._lengths(column),
                 before_after._lengths(pd.Series(values, dtype=object)))
    assert before_after._lengths(column)[1][:2].tolist() == [2, 2]
