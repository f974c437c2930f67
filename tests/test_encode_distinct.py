"""Issue 18: a nearly distinct column that only a normalize step reads is encoded without a
hash table (`encode_distinct`); the column the step makes, and its stats, are those of the
hashed encoding, repeats, missing values and values the step empties included."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from linkage.normalize import encode_distinct, encode_series, normalize_encoded
from linkage.normalize._encoded import DISTINCT_ROWS
from linkage.settings import Normalize

N = DISTINCT_ROWS + 1_000


def _emails(n: int, repeats: int, nulls: int, seed: int = 0) -> pd.Series:
    """`n` e-mail addresses as Arrow text: distinct but for `repeats` copies of earlier ones
    (another case and spacing, so the step merges them) and `nulls` missing; a few the
    step empties ('  ')."""
    rng = np.random.default_rng(seed)
    values = np.array([f"User{k}@Example.com" for k in range(n)], dtype=object)
    copies = rng.choice(np.arange(1, n), repeats, replace=False)
    values[copies] = [f" {values[k - 1].lower()} " for k in copies]
    values[rng.choice(n, 5, replace=False)] = "  "
    values[rng.choice(n, nulls, replace=False)] = None
    return pd.Series(pa.chunked_array([pa.array(values[a:a + 250_000], pa.large_string())
                                       for a in range(0, n, 250_000)]),
                     dtype=pd.ArrowDtype(pa.large_string())).astype("string[pyarrow]")


@pytest.mark.parametrize("nulls", [0, 1_234])
def test_a_nearly_distinct_column_normalizes_as_the_hashed_one_does(nulls):
    values = _emails(N, repeats=500, nulls=nulls)
    identity = encode_distinct(values)
    assert identity is not None and identity.distinct == N - nulls  # each present value
    hashed = encode_series(values)
    assert hashed.distinct < identity.distinct  # the repeats hashed away
    step = Normalize.from_dict({"column": "email", "type": "email"})
    got, got_stats = normalize_encoded(step, identity)
    want, want_stats = normalize_encoded(step, encode_series(values))
    assert got_stats == want_stats and want_stats["missing"] == nulls + 5  # '  ' emptied
    assert np.array_equal(got.codes, want.codes)
    assert got.values().tolist() == want.values().tolist()


def test_a_column_with_repeats_or_few_rows_or_python_text_is_hashed():
    few = _emails(10_000, repeats=0, nulls=0)
    assert encode_distinct(few) is None
    repeated = pd.Series(pa.chunked_array([pa.array([f"v{k % 1000}" for k in range(N)],
                                                    pa.large_string())]),
                         dtype=pd.ArrowDtype(pa.large_string())).astype("string[pyarrow]")
    assert encode_distinct(repeated) is None
    python = pd.Series([f"u{k}" for k in range(N)], dtype=object)
    assert encode_distinct(python) is None


def test_normalize_columns_skips_the_hash_only_for_a_column_only_its_step_reads(monkeypatch):
    """The run's wiring: `email` (normalized in place) takes the path without a hash table;
    `code`, read as it is, keeps its hashed encoding (equal values, equal codes); the
    normalized `email` is the hashed path's."""
    from linkage import pipeline
    from linkage.settings import Rules

    taken = []
    real = pipeline.encode_distinct

    def watched(values):
        column = real(values)
        taken.append((values.name, column is not None))
        return column

    monkeypatch.setattr(pipeline, "encode_distinct", watched)
    emails = _emails(N, repeats=500, nulls=100)
    records = pd.DataFrame({"id": np.arange(N).astype(str), "email": emails,
                            "code": pd.Series(emails, dtype="string[pyarrow]")})
    rules = Rules.from_dict({
        "id_column": "id",
        "normalize": [{"column": "email", "type": "email"}],
        "blocking": [{"keys": [["email"]]}],
        "comparisons": [{"type": "exact", "column": "email"},
                        {"type": "exact", "column": "code"}]})
    work, stats = pipeline.normalize_columns(rules, records, records["id"])
    assert taken == [("email", True)]  # code is not normalized: not even tried
    step = Normalize.from_dict({"column": "email", "type": "email"})
    want, want_stats = normalize_encoded(step, encode_series(emails))
    assert np.array_equal(work["email"].codes, want.codes)
    assert stats["email"]["changed"] == want_stats["changed"]
    assert work["code"].distinct == encode_series(emails).distinct
