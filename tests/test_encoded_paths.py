"""The fast paths of encoding, renumbering and normalizing give what the general ones give
(issue 18): the same codes, distinct values and stats, so that no output byte moves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from linkage.normalize._encoded import (
    ARROW_UNIQUES,
    EncodedColumn,
    _arrow_alone,
    _factorized,
    encode_chunks,
    encode_series,
    normalize_encoded,
    renumbered,
)
from linkage.pipeline import first_rows
from linkage.settings import Normalize


def test_renumbered_numbers_as_pandas_factorize_with_minus_one_as_a_value():
    rng = np.random.default_rng(7)
    for _ in range(2000):
        codes = rng.integers(-1, int(rng.integers(1, 12)), int(rng.integers(0, 40)))
        if rng.random() < 0.5 and len(codes):  # ordered by first appearance, one value masked
            codes = np.where(_factorized(codes) == rng.integers(0, 5), -1, _factorized(codes))
        if rng.random() < 0.3:
            codes = codes.astype(np.int32)
        assert np.array_equal(renumbered(codes), _factorized(codes)), codes
    # -1 takes a number where it first appears: the code after it is one more
    assert renumbered(np.array([4, -1, 9, 4])).tolist() == [0, -1, 2, 0]
    assert renumbered(np.array([0, -1, 1, 3])).tolist() == [0, -1, 2, 3]


def test_wide_keys_and_record_labels_are_numbered_as_their_exact_combination(monkeypatch):
    """`tuple_codes` and its `hashed_tuple_codes` (one hash table over a key's parts, where their
    product would not fit one number) give the codes the part-by-part combination gives, and
    where two tuples share a hash (every hash made equal here) the exact way is taken."""
    from linkage.blocking import KeyPart
    from linkage.blocking._keys import key_codes
    from linkage.normalize import _encoded, hashed_tuple_codes, tuple_codes
    from linkage.pipeline import row_labels

    def exact(parts, missing):
        label = np.zeros(len(parts[0]), dtype=np.int64)
        for codes in parts:
            label = renumbered(label) * (int(codes.max(initial=0)) + 2) + codes + 1
        return renumbered(np.where(missing, -1, label))

    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        parts = [rng.integers(-1, int(rng.integers(1, 6)), n) for _ in range(rng.integers(2, 5))]
        missing = np.logical_or.reduce([p < 0 for p in parts])
        assert np.array_equal(hashed_tuple_codes(lambda p=parts: iter(p), n, missing),
                              exact(parts, missing))
        assert np.array_equal(hashed_tuple_codes(lambda p=parts: iter(p), n),
                              exact(parts, np.zeros(n, dtype=bool)))
        assert np.array_equal(tuple_codes(lambda p=parts: iter(p), n, missing),
                              exact(parts, missing))
    # codes too wide for one number: the hashed way, and the same as part by part
    wide = [np.array(v) * (1 << 40)
            for v in ([1, 2, 1, 3, 1, 2], [5, 5, 5, 6, 5, 5], [0, 1, 0, 2, 0, 1])]
    assert np.prod([int(c.max()) + 2 for c in wide], dtype=object) >= 1 << 62
    missing = np.array([False, False, False, True, False, False])
    assert tuple_codes(lambda: iter(wide), 6, missing).tolist() == [0, 1, 0, -1, 0, 1]
    columns = {f"c{i}": codes for i, codes in enumerate(wide)}
    parts = [KeyPart(c) for c in columns]
    assert key_codes(parts, columns).tolist() == [0, 1, 0, 2, 0, 1]
    labels, present = row_labels(wide)
    assert labels.tolist() == [0, 1, 0, 2, 0, 1] and present.all()
    # every hash alike: the check finds the different tuples, and the exact way numbers them
    monkeypatch.setattr(_encoded, "_MIX", np.uint64(0))
    assert hashed_tuple_codes(lambda: iter(wide), 6) is None
    assert tuple_codes(lambda: iter(wide), 6, missing).tolist() == [0, 1, 0, -1, 0, 1]
    assert key_codes(parts, columns).tolist() == [0, 1, 0, 2, 0, 1]
    assert row_labels(wide)[0].tolist() == [0, 1, 0, 2, 0, 1]


def test_first_rows_is_each_labels_smallest_row():
    rng = np.random.default_rng(8)
    for _ in range(2000):
        labels = rng.integers(0, int(rng.integers(1, 12)), int(rng.integers(1, 40)))
        if rng.random() < 0.6:
            labels = renumbered(labels) * int(rng.integers(1, 3))  # ordered, maybe with gaps
        expected = pd.Series(np.arange(len(labels))).groupby(labels).transform("min")
        assert np.array_equal(first_rows(labels), expected.to_numpy()), labels


def _emails(n: int, *, ascii_only: bool = False) -> list:
    rng = np.random.default_rng(9)
    values = [f" User{i % (n - 10)}@Example.COM " for i in range(n)]
    if not ascii_only:
        values[5] = "Zoë@exämple.org"  # not ASCII: the per-value path for its piece
    values[6] = "   "  # empty after normalizing: lost
    values[7] = None
    return [values[i] for i in rng.permutation(n)]


def _as_objects(column: EncodedColumn) -> EncodedColumn:
    """The same column with its distinct values as a Python object array."""
    return EncodedColumn(column.codes, np.asarray(column.all_uniques(), dtype=object))


def test_arrow_strings_encode_as_object_strings_do():
    values = _emails(ARROW_UNIQUES + 5_000)
    arrow = encode_series(pd.Series(values, dtype="str"))
    objects = encode_series(pd.Series(values, dtype=object))
    assert isinstance(arrow.uniques, pa.Array)
    assert np.array_equal(arrow.codes, objects.codes)
    assert arrow.all_uniques().tolist() == objects.all_uniques().tolist()
    chunks = encode_chunks(pd.Series(values, dtype="str").iloc[a:a + 7_000]
                           for a in range(0, len(values), 7_000))
    merged = encode_chunks(pd.Series(values, dtype=object).iloc[a:a + 7_000]
                           for a in range(0, len(values), 7_000))
    assert np.array_equal(chunks.codes, merged.codes)
    assert chunks.all_uniques().tolist() == merged.all_uniques().tolist()


_STEPS = [("email", {}), ("email", {"plus_tags": True}), ("postcode", {}),
          ("phone", {"country": None}), ("text", {}), ("name", {})]


@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize(("kind", "options"), _STEPS)
def test_normalizing_arrow_values_gives_the_object_paths_codes_and_stats(ascii_only, kind,
                                                                        options):
    values = _emails(ARROW_UNIQUES + 5_000, ascii_only=ascii_only)
    column = encode_series(pd.Series(values, dtype="str"))
    assert isinstance(column.uniques, pa.Array)  # the Arrow hand-over is taken
    step = Normalize("email", kind, **options)
    # A step whose normalizer does ASCII text in Arrow (`map_unique`'s ascii_func) does an
    # ASCII chunk from the Arrow values alone, with no Python string per value (the 10M
    # run's peak memory: issue 18); e-mail with plus tags removed has no such function.
    alone = _arrow_alone(step, column.uniques.slice(0, 1_000).filter(
        pc.string_is_ascii(column.uniques.slice(0, 1_000))))
    assert (alone is None) is options.get("plus_tags", False), alone
    for chunk_rows in (None, 20_000):
        fast, fast_stats = normalize_encoded(step, column, chunk_rows=chunk_rows)
        slow, slow_stats = normalize_encoded(step, _as_objects(column), chunk_rows=chunk_rows)
        assert np.array_equal(fast.codes, slow.codes)
        assert fast.all_uniques().tolist() == slow.all_uniques().tolist()
        assert fast_stats == slow_stats
        if kind in ("email", "text"):
            assert fast_stats["missing"] == 2 and fast_stats["changed"] > 0  # None and "   "


def test_two_decimals_prints_as_python_formats_the_rounded_weight():
    """The reasons' weights are printed by Arrow (issue 18); each must read as
    `"{:.2f}".format(np.round(w, 2))`: halves, negative zeros, large and non-finite values."""
    from linkage.run.outputs import two_decimals

    rng = np.random.default_rng(5)
    values = np.concatenate([
        rng.normal(0, 20, 20_000), rng.normal(0, 0.01, 5_000),
        np.round(rng.normal(0, 5, 5_000), 3), rng.normal(0, 1e9, 1_000),
        [0.0, -0.0, -0.004, 0.005, -0.005, 0.015, 1.005, 2.675, -2.675, np.inf, -np.inf,
         np.nan, 1e15, -1e17, 123456789.125, 1e-320, 45035996273704.96]])
    expected = [f"{v:.2f}" for v in np.round(values, 2)]
    assert two_decimals(values).to_pylist() == expected
    assert two_decimals(np.zeros(0)).to_pylist() == []
