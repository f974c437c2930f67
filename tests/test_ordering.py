"""linkage.ordering (lexsort, is_unique) and the outputs' strongest link: numpy's and pandas'
answers, found faster."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linkage.ordering import is_unique, lexsort
from linkage.run.outputs import _strongest_link

_KINDS = ("small", "bool", "uint8", "wide", "float", "huge")


def _key(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    if kind == "small":
        return rng.integers(-3, 3, n)
    if kind == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if kind == "uint8":
        return rng.integers(0, 5, n).astype(np.uint8)
    if kind == "wide":  # packs alone, not with another wide key: np.lexsort then
        return rng.integers(-(2**40), 2**40, n)
    if kind == "float":
        return rng.normal(size=n).round(1)
    return rng.integers(2**63, 2**64 - 1, n, dtype=np.uint64)  # above int64: not packed


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 40), kinds=st.lists(st.sampled_from(_KINDS), min_size=1, max_size=4),
       seed=st.integers(0, 2**32 - 1))
def test_lexsort_is_numpys_permutation(n, kinds, seed):
    rng = np.random.default_rng(seed)
    keys = [_key(rng, kind, n) for kind in kinds]
    got = lexsort(keys)
    np.testing.assert_array_equal(got, np.lexsort(keys))
    assert got.dtype == np.int64


def test_lexsort_packs_keys_and_keeps_ties_in_input_order():
    clusters = np.array([2, 0, 2, 0, 1, 2])
    rank = np.array([1, 1, 0, 1, 0, 1])  # ties inside clusters 0 and 2: input order
    np.testing.assert_array_equal(lexsort((rank, clusters)), [1, 3, 4, 2, 0, 5])


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 12), m=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       odd=st.sampled_from(["none", "nan", "-inf", "-0.0"]))
def test_strongest_link_is_the_first_of_each_record_in_lexsort(n, m, seed, odd):
    """Highest weight, then smallest other record, then the first: as the sort found it."""
    rng = np.random.default_rng(seed)
    both, other = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(-2, 2, m).astype(float)
    if odd != "none":
        w[rng.integers(0, m, 3)] = float(odd)
    order = np.lexsort((other, -w, both))
    first = np.ones(m, dtype=bool)
    first[1:] = both[order][1:] != both[order][:-1]
    got = _strongest_link(n, both, other, w, len(np.unique(both)))
    np.testing.assert_array_equal(np.sort(got), np.sort(order[first]))


@pytest.mark.parametrize("dtype", ["string[pyarrow]", "large_string[pyarrow]", object, "int64"])
@pytest.mark.parametrize("values", [["b", "a", "c", "d"], ["b", "a", "c", "a"], ["x"], []])
def test_is_unique_of_any_text_is_pandas_is_unique(values, dtype):
    """Arrow string ids of any length are checked by sorting, in pieces too; the answer is
    pandas'."""
    import pyarrow as pa

    if dtype == "int64":
        values = [ord(v) for v in values]
    series = pd.Series(values, dtype=dtype)
    assert is_unique(series) == series.is_unique
    if dtype == "large_string[pyarrow]" and len(values) > 1:  # a column read in batches
        data = series.array._pa_array
        pieces = pa.chunked_array([data.slice(0, 1), data.slice(1)])
        split = pd.Series(pd.arrays.ArrowExtensionArray(pieces))
        assert is_unique(split) == series.is_unique


def test_is_unique_of_fixed_width_text_is_pandas_is_unique():
    """Arrow strings of one length are read by their bytes: the answer is `Series.is_unique`'s,
    duplicates or not, for widths below, at and above eight bytes, multi-byte characters,
    sliced arrays and other columns."""
    rng = np.random.default_rng(9)
    cases = itertools.product((1, 3, 7, 8, 9, 16, 17, 36), (2, 50, 5_000), (False, True),
                              ("AZaz09-", "éüßø", "AZaz09-é김"))
    for width, n, dup, chars in cases:
        values = ["".join(rng.choice(list(chars), width)) for _ in range(n)]
        values = list(dict.fromkeys(values))  # distinct, maybe of other byte lengths
        if dup and len(values) > 1:
            values[-1] = values[0]
        for series in (pd.Series(values, dtype="str"), pd.Series(values, dtype="str").iloc[1:],
                       pd.Series(values, dtype=object)):
            assert is_unique(series) == series.is_unique, (width, n, dup, chars)
    same = pd.Series([f"P{i:07d}" for i in range(100_000)], dtype="str")
    assert is_unique(same) and not is_unique(pd.concat([same, same.iloc[:1]]))


def test_is_unique_of_ids_in_order_is_pandas_is_unique():
    """Ids of one byte length that come in order (by their bytes) are distinct without a sort;
    in order but for one repeat, one swap or one step back in a later group of eight bytes,
    the answer is still `Series.is_unique`'s."""
    from linkage.ordering import _ascending

    rng = np.random.default_rng(12)
    for width, chars in itertools.product((1, 5, 8, 9, 16, 20), ("AZ09", "éz", "z김")):
        for n in (2, 3, 300):
            values = sorted({"".join(rng.choice(list(chars), width)) for _ in range(n)},
                            key=lambda v: v.encode())
            if len({len(v.encode()) for v in values}) > 1 or len(values) < 2:
                continue
            k = int(rng.integers(1, len(values)))
            swapped = [*values[:k - 1], values[k], values[k - 1], *values[k + 1:]]
            for case in (values, [*values[:k], values[k - 1], *values[k:]], swapped,
                         values[::-1]):
                series = pd.Series(case, dtype="str")
                assert is_unique(series) == series.is_unique, (width, chars, n, case[:4])
    # rows tied on their first eight bytes are told by the next ones
    prefix = "ABCDEFGH"
    rows = np.array([[1, 1], [1, 2], [2, 0], [2, 0]], dtype=np.uint64)
    assert _ascending(rows[:3]) and not _ascending(rows) and not _ascending(rows[[1, 0, 2]])
    ordered = pd.Series([f"{prefix}{i:04d}" for i in range(2_000)], dtype="str")
    assert is_unique(ordered) and not is_unique(pd.concat([ordered.iloc[:5], ordered.iloc[4:]]))


def test_distinct_share_reads_a_strided_sample_of_numpy_pandas_and_arrow_alike():
    """One helper tells nearly distinct columns from repeating ones for the factorize split,
    normalize's encoding and summary.json's text measures: the share of distinct values among
    the present ones of every (len // sample)-th value, whatever holds them."""
    import pandas as pd
    import pyarrow as pa

    from linkage.ordering import distinct_share

    values = np.arange(1000) % 250  # every 4th value sampled: 4k mod 250, 125 distinct of 250
    for held in (values, pd.Series(values), pa.array(values),
                 pa.chunked_array([pa.array(values[:500]), pa.array(values[500:])])):
        assert distinct_share(held, 250) == pytest.approx(125 / 250)
    text = pd.Series([None, "a", "b", "b"] * 5, dtype="string[pyarrow]")
    arrow = pa.array([None, "a", "b", "b"] * 5)
    assert distinct_share(text, 100) == distinct_share(arrow, 100) == pytest.approx(2 / 15)
    assert distinct_share(pd.Series([None, None]), 10) == distinct_share(pa.array([None]), 5) == 0
