"""Tests for linkage.text.exact: 128-bit row hashes and exact groups."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from linkage.errors import InputError
from linkage.text.exact import (
    exact_groups,
    exact_pairs,
    group_representatives,
    hashes_to_bytes,
    hashes_to_hex,
    row_hashes,
)


def same(hashes: np.ndarray, i: int, j: int) -> bool:
    return bool((hashes[i] == hashes[j]).all())


def test_shape_and_dtype():
    frame = pd.DataFrame({"a": ["x", "y", "z"], "b": ["1", "2", "3"]})
    hashes = row_hashes(frame)
    assert hashes.shape == (3, 2)
    assert hashes.dtype == np.uint64
    assert row_hashes(frame.iloc[:0]).shape == (0, 2)


def test_normalized_rows_share_a_hash_only_when_normalizing():
    frame = pd.DataFrame({"text": ["Hello, World", "hello   world", "Hello World!", "goodbye"]})
    normalized = row_hashes(frame)
    assert same(normalized, 0, 1) and same(normalized, 0, 2)
    assert not same(normalized, 0, 3)
    raw = row_hashes(frame, normalize=False)
    assert not same(raw, 0, 1) and not same(raw, 0, 2) and not same(raw, 1, 2)


def test_full_width_and_case_fold_alike():
    frame = pd.DataFrame({"t": ["ＡＢＣ　１２３", "abc 123"]})
    assert same(row_hashes(frame), 0, 1)


def test_column_order_matters():
    frame = pd.DataFrame({"a": ["x"], "b": ["y"]})
    assert not (row_hashes(frame, ["a", "b"]) == row_hashes(frame, ["b", "a"])).all()


def test_column_choice_matters():
    frame = pd.DataFrame({"a": ["x", "x"], "b": ["y", "z"]})
    assert same(row_hashes(frame, ["a"]), 0, 1)
    assert not same(row_hashes(frame, ["a", "b"]), 0, 1)
    assert not same(row_hashes(frame), 0, 1)  # None means every column
    assert (row_hashes(frame, "a") == row_hashes(frame, ["a"])).all()


def test_value_boundaries_are_kept():
    frame = pd.DataFrame({"a": ["ab", "a", "a b", "a"], "b": ["c", "bc", "c", "b c"]})
    for normalize in (True, False):
        hashes = row_hashes(frame, normalize=normalize)
        assert not same(hashes, 0, 1)
        assert not same(hashes, 2, 3)


def test_missing_differs_from_empty_without_normalization():
    frame = pd.DataFrame({"a": [None, "", np.nan, pd.NA]}, dtype=object)
    raw = row_hashes(frame, normalize=False)
    assert not same(raw, 0, 1)
    assert same(raw, 0, 2) and same(raw, 0, 3)  # every kind of missing is missing


def test_missing_and_empty_alike_after_normalization():
    # The text normalizer turns a value with nothing left into missing (documented).
    frame = pd.DataFrame({"a": [None, "", " !! "]}, dtype=object)
    hashes = row_hashes(frame)
    assert same(hashes, 0, 1) and same(hashes, 0, 2)


def test_missing_is_not_the_text_none_or_nan():
    frame = pd.DataFrame({"a": [None, "None", "nan", "\x00"]}, dtype=object)
    hashes = row_hashes(frame, normalize=False)
    assert len({tuple(h) for h in hashes.tolist()}) == 4


def test_known_value_catches_a_platform_or_encoding_change():
    frame = pd.DataFrame({"name": ["Kim Min-su", None], "city": ["서울", ""]})
    hashes = row_hashes(frame, normalize=False)
    assert hashes_to_hex(hashes).tolist() == [
        "8bf3a931a430168f49f183631ef8076d",
        "4ede44762e13dd6e903f5675acbf2fd2",
    ]
    assert hashes[0].tolist() == [10084590021285779087, 5328184295900579693]
    # The documented encoding, computed independently.
    expected = hashlib.blake2b("\x0110:Kim Min-su\x012:서울".encode(), digest_size=16).digest()
    assert hashes_to_bytes(hashes)[0] == expected
    assert hashes_to_hex(row_hashes(frame)).tolist() == [
        "996d6b3f70560c308cddcbf159ca88d3",
        "71d0aacb690b61280d0c97c6b6a66664",
    ]


def test_same_input_same_hash_every_call():
    frame = pd.DataFrame({"a": ["x", None, "가나다"], "n": [1.5, 2.0, None]})
    assert (row_hashes(frame) == row_hashes(frame.copy())).all()


def test_numbers_are_hashed_as_their_text():
    as_number = pd.DataFrame({"n": [12, 7]})
    as_text = pd.DataFrame({"n": ["12", "7"]})
    assert (row_hashes(as_number) == row_hashes(as_text)).all()


def test_index_is_ignored():
    frame = pd.DataFrame({"a": ["x", "y"]}, index=[10, 3])
    assert (row_hashes(frame) == row_hashes(frame.reset_index(drop=True))).all()


def test_missing_column_is_an_input_error():
    frame = pd.DataFrame({"a": ["x"]})
    with pytest.raises(InputError, match=r"'nope'.*columns: 'a'"):
        row_hashes(frame, ["a", "nope"])
    with pytest.raises(InputError, match="no columns"):
        row_hashes(frame, [])


def test_groups_numbered_by_first_occurrence():
    frame = pd.DataFrame({"t": ["b", "a", "B!", "c", "A", "b"]})
    labels = exact_groups(row_hashes(frame))
    assert labels.tolist() == [0, 1, 0, 2, 1, 0]
    assert group_representatives(labels).tolist() == [0, 1, 3]
    left, right = exact_pairs(labels)
    assert list(zip(left.tolist(), right.tolist(), strict=True)) == [(0, 2), (1, 4), (0, 5)]


def test_groups_accept_16_byte_values():
    hashes = row_hashes(pd.DataFrame({"t": ["x", "y", "x"]}))
    as_bytes = hashes_to_bytes(hashes)
    assert as_bytes.dtype == np.dtype("S16")
    assert exact_groups(as_bytes).tolist() == [0, 1, 0]
    assert exact_groups(np.array(list(as_bytes), dtype=object)).tolist() == [0, 1, 0]


def test_groups_need_both_words_equal():
    hashes = np.array([[1, 2], [1, 3], [0, 2], [1, 2]], dtype=np.uint64)
    assert exact_groups(hashes).tolist() == [0, 1, 2, 0]


def test_groups_of_nothing():
    assert exact_groups(np.empty((0, 2), dtype=np.uint64)).tolist() == []
    left, right = exact_pairs(np.empty(0, dtype=np.int64))
    assert len(left) == len(right) == 0


def test_groups_agree_with_pandas_factorize_on_random_hashes():
    rng = np.random.default_rng(7)
    pool = rng.integers(0, 2**63, size=(50, 2), dtype=np.uint64)
    hashes = pool[rng.integers(0, 50, size=2000)]
    labels = exact_groups(hashes)
    keys = [f"{h}-{lo}" for h, lo in hashes.tolist()]
    expected, _ = pd.factorize(pd.Series(keys))
    assert labels.tolist() == expected.tolist()


def test_a_hundred_thousand_rows_quickly():
    import time

    n = 100_000
    frame = pd.DataFrame({"a": [f"Name {i % 5000}" for i in range(n)], "b": ["x"] * n})
    start = time.perf_counter()
    labels = exact_groups(row_hashes(frame))
    assert time.perf_counter() - start < 5
    assert labels.max() == 4999
