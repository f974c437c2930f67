"""Any table in (issue 16, item 2): a pandas DataFrame as a default `read_csv` types it, a
pyarrow Table, a polars DataFrame or LazyFrame, a dict of columns all give the links a file
gives; anything else is bad input that says what is read."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import linkage as lk
from linkage.errors import InputError
from tests.conftest import ROOT

RULES = ROOT / "rules" / "febrl.yaml"


@pytest.fixture(scope="module")
def febrl4(datasets):
    folder = datasets / "febrl"
    files = folder / "dataset4a.csv", folder / "dataset4b.csv"
    by_file = lk.link(*files, RULES).links
    # As a notebook user reads them: numbers typed (dates as float64 where a value is
    # missing, postcodes as int64), only the header's spaces dropped.
    frames = [pd.read_csv(f, skipinitialspace=True) for f in files]
    return frames, by_file, lk.link(*frames, RULES).links


def _true_links(links: pd.DataFrame) -> int:
    left = links["id_l"].astype(str).str.split("-").str[1]
    right = links["id_r"].astype(str).str.split("-").str[1]
    return int((left == right).sum())


def test_typed_pandas_columns_link_as_the_files_do(febrl4):
    """A float64 date (19560819.0) is the date the file wrote, not a null: the typed frames
    find the true links the files find (a default read_csv loses only the leading zeros of
    postcodes, so the weights may differ a little, the links hardly)."""
    (left, right), by_file, links = febrl4
    assert left["date_of_birth"].dtype == "float64" and left["postcode"].dtype == "int64"
    assert _true_links(links) == _true_links(by_file) >= 4_981
    assert len(links) <= len(by_file) + 5
    # Dates already parsed, and categories, say the same.
    typed = []
    for frame in (left, right):
        frame = frame.copy()
        frame["date_of_birth"] = pd.to_datetime(
            frame["date_of_birth"].astype("Int64").astype(str), format="%Y%m%d", errors="coerce")
        frame["state"] = frame["state"].astype("category")
        typed.append(frame)
    pd.testing.assert_frame_equal(lk.link(*typed, RULES).links, links)


@pytest.mark.parametrize("kind", ["pyarrow", "polars", "polars lazy", "dict"])
def test_other_tables_link_as_pandas_does(febrl4, kind):
    (left, right), _, by_pandas = febrl4
    if kind == "pyarrow":
        convert = pa.Table.from_pandas
    elif kind == "dict":
        def convert(frame):
            return frame.to_dict("list")
    else:
        pl = pytest.importorskip("polars")

        def convert(frame):
            frame = pl.from_pandas(frame)
            return frame.lazy() if kind == "polars lazy" else frame
    result = lk.link(convert(left), convert(right), RULES)
    pd.testing.assert_frame_equal(result.links, by_pandas)
    assert result.summary()["inputs"][0]["name"] == "DataFrame"


def test_what_is_not_a_table_is_bad_input_that_says_what_is_read():
    with pytest.raises(InputError, match=r"builtins\.list is not a table.*polars"):
        lk.dedupe([1, 2, 3], RULES)
    with pytest.raises(InputError, match="the right table: a dict is read as columns"):
        lk.link({"a": ["x"]}, {"a": ["x", "y"], "b": ["z"]}, RULES)
