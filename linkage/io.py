"""Reading tables and writing a run's outputs.

CSV values are read as text (a postcode keeps its leading zero; an id stays an id); Parquet and
DataFrames keep their types. Outputs are written to a temporary folder beside `--out` and moved
into place only when every file is complete, so a failed run leaves `--out` as it was.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import errno
import glob
import hashlib
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.version import __version__

# A path (CSV, Parquet file or folder), or a table object: pandas, polars, pyarrow and every
# other DataFrame narwhals reads (eager or lazy), or a dict of columns (`as_frame`).
TableLike = str | os.PathLike | pd.DataFrame | Any

TABLES_READ = ("a CSV or Parquet path, a pandas, polars or pyarrow table (any DataFrame "
               "narwhals reads, eager or lazy) or a dict of columns")


def is_path(source: Any) -> bool:
    return isinstance(source, str | os.PathLike)


def as_frame(source: Any, what: str = "the table") -> pd.DataFrame:
    """A table given as an object, as a pandas DataFrame (pandas itself unchanged, not
    copied). Other DataFrames go through narwhals, the interchange layer polars, pyarrow,
    modin, cuDF, DuckDB and PySpark share, so that each converts as its own library does
    (a lazy frame is collected: the local engine holds the table in memory anyway); a dict
    is read as columns. Anything else is bad input, said with what is read."""
    if isinstance(source, pd.DataFrame):
        return source
    if isinstance(source, dict):
        try:
            return pd.DataFrame(source)
        except (ValueError, TypeError) as err:
            raise InputError(f"{what}: a dict is read as columns (name -> values of equal "
                             f"length), and this one is not: {err}. Fix the dict, or give "
                             f"{TABLES_READ}.") from None
    import narwhals as nw

    try:
        native = nw.from_native(source)
    except TypeError:
        raise InputError(f"{what}: a {type(source).__module__}.{type(source).__name__} is "
                         f"not a table linkage reads. Give {TABLES_READ}.") from None
    if type(source).__module__.startswith("pyspark"):
        # pyspark warns about pandas 3 on every conversion; the Spark engine quiets it too
        from linkage.engines.spark.session import quiet_pyspark

        with quiet_pyspark():
            return _collected(native)
    return _collected(native)


def arrow_data(values: pd.Series):
    """The Arrow data behind a column that pandas holds in Arrow (the `str` dtype of pandas 3,
    `string[pyarrow]`, an `ArrowDtype`): a `pyarrow.ChunkedArray`, the very one pandas holds
    (no copy), through the `__arrow_array__` protocol pyarrow defines for such arrays. None for
    a column held otherwise (NumPy, Python objects), which it would convert instead."""
    dtype = values.dtype
    if isinstance(dtype, pd.StringDtype):
        # "pyarrow", or pandas 2.2's "pyarrow_numpy"
        held = str(getattr(dtype, "storage", "")).startswith("pyarrow")
    else:
        held = isinstance(dtype, pd.ArrowDtype)
    if not held:
        return None
    import pyarrow as pa

    data = values.array.__arrow_array__()
    return data if isinstance(data, pa.ChunkedArray | pa.Array) else None


def few_rows(frame: pd.DataFrame, rows) -> pd.DataFrame:
    """`frame.iloc[rows]` for a few rows, as one-row slices put together: a take from
    columns of Arrow strings in many chunks (a table of ten million records) takes 0.1-0.6 s
    however few the rows; a slice takes none."""
    rows = [int(r) for r in rows]
    if not rows:
        return frame.iloc[:0]
    return pd.concat([frame.iloc[r:r + 1] for r in rows])


def _collected(native) -> pd.DataFrame:
    import narwhals as nw

    if isinstance(native, nw.LazyFrame):
        return native.collect("pandas").to_pandas()
    return native.to_pandas()


def _sniff_separator(path: Path, encoding: str) -> str:
    with open(path, encoding=encoding, newline="") as handle:
        sample = handle.read(65536)
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def _first_bad_line(path: Path, encoding: str) -> tuple[int, int, str]:
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode(encoding)
            except UnicodeDecodeError as err:
                return number, err.start + 1, raw[err.start : err.start + 1].hex()
    return 0, 0, ""


def _csv_options(path: Path, sep: str | None, encoding: str) -> dict[str, Any]:
    """How every CSV of a run is read: values as text, blank cells missing, spaces after a
    separator skipped (the whole file and its batches alike)."""
    return {"sep": sep or _sniff_separator(path, encoding), "dtype": str,
            "keep_default_na": False, "na_values": [""], "skipinitialspace": True,
            "encoding": encoding}


ALLOW_SHORT_ROWS = "LINKAGE_ALLOW_SHORT_ROWS"  # set to 1: a short row's missing fields are blank
_BLOCK_BYTES = 1 << 20  # of a CSV read at a time by the row check (its arrays: ~20 bytes a byte)
# Encodings in which an ASCII separator or line break is one byte that no other character
# contains, so the bytes can be counted without decoding.
_BYTE_SAFE = {"utf-8", "utf-8-sig", "ascii", "latin-1", "iso8859-15", "cp1252", "cp949",
              "euc_kr"}


def _check_row_lengths(path: Path, options: dict[str, Any]) -> None:
    """Raise InputError at the first row with more or fewer fields than the header: pandas
    pads a short row with blanks and, when every row is one longer, takes the first column
    for an index, both silently."""
    sep = options["sep"]
    if len(sep) != 1 or os.environ.get(ALLOW_SHORT_ROWS, "").strip() in ("1", "true", "yes"):
        return
    found = None
    if sep.isascii() and codecs.lookup(options["encoding"]).name in _BYTE_SAFE:
        found = _ragged_unquoted(path, ord(sep))
    if found is None:
        found = _ragged_quoted(path, sep, options)
    if found:
        line, fields, width = found
        msg = (
            f"{path}: line {line} has {fields} fields but the header has {width} (separator "
            f"{sep!r}), so its values would land in the wrong columns. Fix the row (a missing "
            "separator, or a value holding the separator without quotes), pass the right "
            f"`--sep`, or set {ALLOW_SHORT_ROWS}=1 to read missing trailing fields as blank."
        )
        raise InputError(msg)


def _ragged_unquoted(path: Path, sep: int) -> tuple[int, int, int] | bool | None:
    """(line, fields, header fields) of the first ragged row, False when every row fits, or
    None when the file has quotes (a quoted value may hold separators and line breaks).
    Separators are counted per line with numpy, `_BLOCK_BYTES` at a time."""
    width, lines, rest = None, 0, b""
    spaces = np.zeros(256, dtype=bool)
    spaces[[b for b in b" \t\r" if b != sep]] = True
    with open(path, "rb") as handle:
        for block in itertools.chain(iter(lambda: handle.read(_BLOCK_BYTES), b""), [None]):
            if block is None:  # the last line, without its line break
                block, rest = rest + b"\n" if rest else b"", b""
            else:
                block = rest + block
                cut = block.rfind(b"\n") + 1
                block, rest = block[:cut], block[cut:]
            if b'"' in block:
                return None
            data = np.frombuffer(block, dtype=np.uint8)
            ends = np.flatnonzero(data == 10)
            starts = np.concatenate([[0], ends[:-1] + 1])
            seps = np.flatnonzero(data == sep)
            fields = np.searchsorted(seps, ends) - np.searchsorted(seps, starts) + 1
            # pandas skips lines of nothing but spaces, tabs and "\r" (other than the separator).
            space = spaces[data]
            filled = np.concatenate([[0], np.cumsum(~space)])
            blank = filled[ends] == filled[starts]
            kept = np.flatnonzero(~blank)
            if width is None and len(kept):
                width = int(fields[kept[0]])
            bad = kept[fields[kept] != width]
            if len(bad):
                return lines + int(bad[0]) + 1, int(fields[bad[0]]), width
            lines += len(ends)
    return False


def _ragged_quoted(path: Path, sep: str, options: dict[str, Any]) -> tuple[int, int, int] | None:
    """`_ragged_unquoted` by Python's csv module, which reads quotes as pandas does; it also
    stops at a quote left open or followed by more text, which pandas reads on into the next
    records (two records become one, silently)."""
    with open(path, encoding=options["encoding"], newline="") as handle:
        reader = csv.reader(handle, delimiter=sep, strict=True,
                            skipinitialspace=options["skipinitialspace"])
        width, start = None, 1
        try:
            for row in reader:
                if len(row) > 1 or (row and row[0].strip()):  # pandas skips blank lines
                    width = width if width is not None else len(row)
                    if len(row) != width:
                        return start, len(row), width
                start = reader.line_num + 1
        except csv.Error as err:
            msg = (
                f"{path}: line {start}: a quoted value is not closed where it should be "
                f"({err}), so the records after it would be read into it. Close the quote "
                'right before the separator, write a quote inside a quoted value as "", or '
                "pass the right `--sep`."
            )
            raise InputError(msg) from None
    return None


@contextlib.contextmanager
def _csv_errors(path: Path, encoding: str):
    """A CSV reader's errors as `InputError`s that name the file, the line and the fix."""
    label = str(path)
    try:
        codecs.lookup(encoding)
    except LookupError:
        msg = (f"{label}: `--encoding` {encoding!r} is not a text encoding Python knows. Pass "
               "one that is, such as 'utf-8' or 'cp949' (Korean Windows exports).")
        raise InputError(msg) from None
    try:
        yield
    except UnicodeDecodeError:
        line, column, byte = _first_bad_line(path, encoding)
        msg = (
            f"{label}: line {line}, byte {column} (0x{byte}) is not valid {encoding}. "
            "Save the file as UTF-8, or pass its encoding (`--encoding cp949` for a Korean "
            "Windows export)."
        )
        raise InputError(msg) from None
    except pd.errors.EmptyDataError:
        raise InputError(f"{label}: the file is empty; it needs a header row and records.")\
            from None
    except pd.errors.ParserError as err:
        raise InputError(f"{label}: cannot parse as CSV ({err}). Check `--sep`.") from None


def _not_parquet(path: Path, err: Exception) -> Exception:
    """The error to raise for a Parquet file pyarrow could not read: the memory running out
    (pyarrow's `ArrowMemoryError` is a `MemoryError`) as it is, which the CLI tells as such,
    not as a damaged file; anything else as a file to write again."""
    if isinstance(err, MemoryError):
        return err
    return InputError(f"{path}: cannot read as Parquet ({err}). Write the file again (it may "
                      "be cut short), or give a .csv name if it is CSV.")


def _is_parquet(path: Path) -> bool:
    return path.is_dir() or path.suffix.lower() in (".parquet", ".pq")


def is_parquet(path: Path) -> bool:
    """Whether a local path is read as Parquet (a folder, or a .parquet / .pq file); anything
    else is read as CSV."""
    return _is_parquet(Path(path))


def sniff_separator(path: Path, encoding: str = "utf-8") -> str:
    """The separator of a CSV file, as the reader guesses it when none is given."""
    return _sniff_separator(Path(path), encoding)


def _parquet_files(path: Path) -> list[Path]:
    """The data files of a Parquet file or folder, in sorted order; as pyarrow does, names
    starting with `_` or `.` (`_SUCCESS`, checksums) are not data."""
    if not path.is_dir():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and not any(
        part.startswith(("_", ".")) for part in p.relative_to(path).parts))


def _existing(source: str | os.PathLike) -> Path:
    path = Path(source)
    if not path.exists():
        raise InputError(f"{path}: no such file. Check the path.")
    return path


def read(
    source: TableLike,
    *,
    sep: str | None = None,
    encoding: str = "utf-8",
    name: str | None = None,
    columns: list[str] | None = None,
) -> pd.DataFrame:
    """Read a CSV or Parquet file, or take a DataFrame, as a table of records.

    CSV: the separator is sniffed unless `sep` is given; every value is read as text, blank
    cells are missing, and spaces after a separator are skipped.

    `columns`: read only those of these columns the file has (in the file's order), for a run
    that needs a few columns of a wide table; `read_batches` gives the whole rows later.
    """
    if not is_path(source):
        frame = as_frame(source).copy()
        frame.attrs["linkage_source"] = name or "DataFrame"
        return frame
    path = _existing(source)
    label = str(path)
    if _is_parquet(path):
        wanted = None if columns is None else [c for c in header(path) if c in set(columns)]
        try:
            frame = pd.read_parquet(path, columns=wanted)
        except Exception as err:  # pyarrow raises several types for a damaged file
            raise _not_parquet(path, err) from None
    else:
        with _csv_errors(path, encoding):
            options = _csv_options(path, sep, encoding)
            usecols = None
            _check_row_lengths(path, options)
            if columns is not None:
                raw = pd.read_csv(path, nrows=0, **options).columns
                usecols = [c for c in raw if str(c).strip() in set(columns)]
            frame = pd.read_csv(path, usecols=usecols, **options)
        frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs["linkage_source"] = name or label
    return frame


def header(source: str | os.PathLike, *, sep: str | None = None,
           encoding: str = "utf-8") -> list[str]:
    """The column names of a CSV or Parquet file, read from its header alone."""
    path = _existing(source)
    if _is_parquet(path):
        import pyarrow.dataset as ds

        try:
            schema = ds.dataset(path, format="parquet").schema
        except Exception as err:
            raise _not_parquet(path, err) from None
        names = schema.names
        index = json.loads((schema.metadata or {}).get(b"pandas", b"{}")).get(
            "index_columns", [])
        return [c for c in names if c not in index]
    with _csv_errors(path, encoding):
        raw = pd.read_csv(path, nrows=0, **_csv_options(path, sep, encoding)).columns
    return [str(c).strip() for c in raw]


def count_records(source: str | os.PathLike) -> int:
    """Records in a file, cheaply: Parquet's metadata, or a CSV's line breaks less its
    header (an upper bound when quoted values hold line breaks)."""
    path = _existing(source)
    if _is_parquet(path):
        import pyarrow.dataset as ds

        try:
            return ds.dataset(path, format="parquet").count_rows()
        except Exception as err:  # pyarrow raises several types for a damaged file
            raise _not_parquet(path, err) from None
    lines, last = 0, b"\n"
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            lines += block.count(b"\n")
            last = block[-1:]
    return max(lines + (last != b"\n") - 1, 0)


def read_batches(source: str | os.PathLike, rows: int, *, sep: str | None = None,
                 encoding: str = "utf-8", name: str | None = None):
    """The whole rows of a CSV or Parquet file, `rows` records at a time, each batch with the
    columns, types and values `read` gives for those rows (index 0..len-1 in every batch)."""
    path = _existing(source)
    label = name or str(path)
    rows = max(1, min(rows, int(BATCH_BYTES / _bytes_per_record(path))))
    if _is_parquet(path):
        batches = _parquet_batches(path, rows)
    else:
        batches = _csv_batches(path, rows, sep, encoding)
    for batch in batches:
        batch = batch.reset_index(drop=True)
        batch.attrs["linkage_source"] = label
        yield batch


BATCH_BYTES = 16 * 1024 * 1024  # of a file's records read at a time by `read_batches`


def _bytes_per_record(path: Path) -> float:
    """About how many bytes a record takes: Parquet's uncompressed size by its metadata, or
    a CSV's first 1 MiB by its lines (a wide table is read in fewer records at a time)."""
    if _is_parquet(path):
        import pyarrow.parquet as pq

        if path.is_dir():
            return 1.0
        meta = pq.read_metadata(path)
        size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        return max(size / max(meta.num_rows, 1), 1.0)
    with open(path, "rb") as handle:
        sample = handle.read(1 << 20)
    return max(len(sample) / max(sample.count(b"\n"), 1), 1.0)


def _csv_batches(path: Path, rows: int, sep: str | None, encoding: str):
    with _csv_errors(path, encoding):
        options = _csv_options(path, sep, encoding)
        _check_row_lengths(path, options)
        with pd.read_csv(path, chunksize=rows, **options) as reader:
            for batch in reader:
                batch.columns = [str(c).strip() for c in batch.columns]
                yield batch


def _parquet_batches(path: Path, rows: int):
    """Batches converted by `pd.read_parquet` itself (each written to a small buffer and read
    back), so that their types are those of the whole file read at once."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    for schema, batch in _arrow_batches(path, rows):
        buffer = io.BytesIO()
        pq.write_table(pa.Table.from_batches([batch], schema=schema), buffer)
        buffer.seek(0)
        yield pd.read_parquet(buffer)


def _arrow_batches(path: Path, rows: int):
    """(schema, record batch) pairs of a Parquet file or folder, one row group or file decoded
    at a time (a scanner left to itself reads many ahead)."""
    if path.is_dir():
        import pyarrow.dataset as ds

        dataset = ds.dataset(path, format="parquet")
        for batch in dataset.to_batches(batch_size=rows, batch_readahead=0,
                                        fragment_readahead=0, use_threads=False):
            yield dataset.schema, batch
        return
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as handle:
        for batch in handle.iter_batches(batch_size=rows, use_threads=False):
            yield handle.schema_arrow, batch


def as_text(values: pd.Series) -> np.ndarray:
    """Object array of str or None, what normalizers and comparisons read; numbers from Parquet
    become their text, a float holding an integer that integer's (19651013.0 is "19651013", as
    the CSV it was read from wrote it)."""
    from linkage.normalize import as_text as cell_text

    out = np.full(len(values), None, dtype=object)
    present = values.notna().to_numpy()
    kept = values[present]
    if pd.api.types.is_float_dtype(kept.dtype):
        numbers = kept.to_numpy(dtype=np.float64)
        text = kept.astype(str).to_numpy(dtype=object)
        # Beyond 2**63 a float is not an int64; its own text ("1e+20") is kept.
        whole = np.isfinite(numbers) & (numbers == np.floor(numbers)) & (np.abs(numbers) < 2**63)
        text[whole] = numbers[whole].astype(np.int64).astype(str).tolist()
        out[present] = text
    elif kept.dtype == object:
        out[present] = [cell_text(v) for v in kept.to_numpy()]
    else:
        out[present] = kept.astype(str).to_numpy()
    return out


def checksum(source: TableLike, frame: pd.DataFrame) -> str:
    """sha256 of the input file's bytes (a Parquet folder's data files one after another, in
    sorted order), or of a DataFrame's contents."""
    if not is_path(source):
        hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
        return "sha256:" + hashlib.sha256(hashed).hexdigest()
    digest = hashlib.sha256()
    path = Path(source)
    for part in _parquet_files(path) if _is_parquet(path) else [path]:
        with open(part, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return "sha256:" + digest.hexdigest()


ROW_GROUP_ROWS = 1024 * 1024  # pyarrow's own default, so files repeat what earlier runs wrote
ROW_GROUP_BYTES = 128 * 1024 * 1024  # wide rows: fewer per group, so a writer holds ~this much
SAMPLE_ROWS = 1024  # the first rows of a table, whose size sets its row groups


def row_group_rows(table=None) -> int:
    """Rows per Parquet row group of a written table: `LINKAGE_ROW_GROUP_ROWS`, else 1,048,576,
    or fewer for wide rows: as many as fit in `ROW_GROUP_BYTES` by the size of the table's
    first `SAMPLE_ROWS` rows (an Arrow table; whole or in batches, the same rows give the same
    groups). A writer holds one group, so this bounds the memory of a streamed table; smaller
    groups also let readers with little memory read a big file."""
    text = os.environ.get("LINKAGE_ROW_GROUP_ROWS", "").strip()
    if not text:
        if table is None:
            return ROW_GROUP_ROWS
        per_row = max(_content_bytes(table.slice(0, SAMPLE_ROWS)) / max(
            min(len(table), SAMPLE_ROWS), 1), 1.0)
        fit = int(ROW_GROUP_BYTES / per_row) // SAMPLE_ROWS * SAMPLE_ROWS
        return min(ROW_GROUP_ROWS, max(SAMPLE_ROWS, fit))
    try:
        rows = int(text)
    except ValueError:
        rows = 0
    if rows < 1:
        raise InputError(f"LINKAGE_ROW_GROUP_ROWS={text!r}: must be a whole number of rows of "
                         "at least 1. Unset it to use 1048576.")
    return rows


def _content_bytes(table) -> int:
    """Bytes of a table's values, counted from the values alone (not from how its buffers
    happen to be laid out): text and binary by length, fixed-width types by width, 8 a value
    for anything else."""
    import pyarrow as pa
    import pyarrow.compute as pc

    total = 0
    for column in table.columns:
        kind = column.type
        if pa.types.is_dictionary(kind):
            column, kind = column.cast(kind.value_type), kind.value_type
        if (pa.types.is_string(kind) or pa.types.is_large_string(kind)
                or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
            total += int(pc.sum(pc.binary_length(column)).as_py() or 0) + 8 * len(column)
        else:
            try:
                width = max(kind.bit_width // 8, 1)
            except ValueError:  # nested and other variable-width types
                width = 8
            total += width * len(column)
    return total


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Parquet without the pandas index, so the same frame gives the same bytes. A table
    already kept in a Parquet file (`ParquetFrame`) is copied as it is."""
    if isinstance(frame, ParquetFrame):
        frame.copy_to(Path(path))
        return
    sink = ParquetSink(path, frame)
    sink.write(frame)
    sink.close()


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """The bytes `write_parquet` writes for `frame` (to checksum a table before writing it)."""
    import io

    buffer = io.BytesIO()
    sink = ParquetSink(buffer, frame)
    sink.write(frame)
    sink.close(keep=False)
    return buffer.getvalue()


def _arrow_table(frame: pd.DataFrame):
    """The Arrow table `DataFrame.to_parquet` writes: no index, and `frame.attrs` kept as
    pandas keeps them (its `PANDAS_ATTRS` metadata key)."""
    import pyarrow as pa

    table = pa.Table.from_pandas(frame, preserve_index=False)
    if frame.attrs:
        metadata = {**(table.schema.metadata or {}), b"PANDAS_ATTRS": json.dumps(frame.attrs)}
        table = table.replace_schema_metadata(metadata)
    return table


class ParquetSink:
    """Write a table batch by batch into one Parquet file, with the bytes `write_parquet` gives
    for the whole table: batches are regrouped into row groups of exactly `row_group_rows()`
    rows (set by the first rows, so a wide table gets fewer rows a group), each written from
    one contiguous array per column (so where a column's dictionary encoding gives up does
    not depend on how the rows arrived), and every batch takes the
    first batch's schema (types and pandas metadata), or that of `like`: a few rows whose
    columns have the types of the whole table (a text column that is empty in the first
    batch but not later).

    `close()` returns the file as a `ParquetFrame`; a sink that got no rows writes `empty`.
    """

    def __init__(self, path, empty: pd.DataFrame, *, like: pd.DataFrame | None = None):
        self.path = path if hasattr(path, "write") else Path(path)
        self.empty = empty
        self._like = like
        self.rows = 0
        self._group: int | None = None  # set by the first SAMPLE_ROWS rows
        self._writer = None
        self._schema = None
        self._pending: list = []
        self._pending_rows = 0
        # Each row group is encoded and compressed on a thread of its own (Arrow lets go of
        # the GIL there) while the caller builds the next batch; one at a time, in order.
        self._thread = None
        self._writing = None

    def write(self, frame) -> None:
        """Add rows: a DataFrame, or an Arrow table with the columns `_arrow_table` gives of
        the DataFrame they would be (its types and metadata become the file's)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if len(frame) == 0:
            return
        table = frame if isinstance(frame, pa.Table) else _arrow_table(frame)
        if self._writer is None:
            self._schema = table.schema if self._like is None else _arrow_table(self._like).schema
            self._writer = pq.ParquetWriter(self.path, self._schema, compression="zstd")
        if not table.schema.equals(self._schema, check_metadata=True):
            table = table.cast(self._schema.remove_metadata()).replace_schema_metadata(
                self._schema.metadata)
        self._pending.append(table)
        self._pending_rows += len(table)
        self.rows += len(table)
        if self._group is None and self._pending_rows >= SAMPLE_ROWS:
            self._group = row_group_rows(self._sample())
        while self._group is not None and self._pending_rows >= self._group:
            self._flush(self._group)

    def _sample(self):
        """The first `SAMPLE_ROWS` rows written (all of them, when fewer)."""
        import pyarrow as pa

        return pa.concat_tables(self._pending).slice(0, SAMPLE_ROWS)

    def _flush(self, rows: int) -> None:
        import pyarrow as pa

        table = pa.concat_tables(self._pending)
        group = table.slice(0, rows).combine_chunks()
        self._wait()
        if self._thread is None:
            from concurrent.futures import ThreadPoolExecutor

            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parquet-sink")
        self._writing = self._thread.submit(self._writer.write_table, group,
                                            row_group_size=self._group)
        rest = table.slice(rows)
        self._pending = [rest] if len(rest) else []
        self._pending_rows = len(rest)

    def close(self, *, keep: bool = True) -> ParquetFrame | None:
        """Finish the file; return it as a `ParquetFrame` (None with `keep=False`)."""
        import pyarrow.parquet as pq

        if self._writer is None:
            table = _arrow_table(self.empty)
            with pq.ParquetWriter(self.path, table.schema, compression="zstd") as writer:
                writer.write_table(table, row_group_size=row_group_rows())
        else:
            if self._group is None:
                self._group = row_group_rows(self._sample())
            if self._pending_rows:
                self._flush(self._pending_rows)
            try:
                self._wait()
            finally:
                self._writer.close()
                if self._thread is not None:
                    self._thread.shutdown()
        return ParquetFrame(self.path) if keep else None

    def _wait(self) -> None:
        """Wait for the row group being written; its error, if any, is raised here."""
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.result()


def remove_temporary(*paths: Path) -> None:
    """Delete temporary files, then their folder once nothing else is left in it."""
    for path in paths:
        Path(path).unlink(missing_ok=True)
    for folder in {Path(p).parent for p in paths}:
        # Fails while another temporary table still lives there (or when it is gone).
        with contextlib.suppress(OSError):
            folder.rmdir()


class ParquetFrame:
    """A table kept in a Parquet file rather than in memory (the pairs of a run processed in
    chunks). It reads like a DataFrame: `len`, `columns`, `frame["col"]` (that column only);
    anything else loads the whole table once. `write_parquet` copies the file as it is.

    `temporary`: the file is deleted when this object is, and its folder with the last one.
    """

    def __init__(self, path: Path, *, temporary: bool = False):
        import pyarrow.parquet as pq

        self.path = Path(path)
        self._metadata = pq.read_metadata(self.path)
        self._frame: pd.DataFrame | None = None
        if temporary:
            import weakref

            weakref.finalize(self, remove_temporary, self.path)

    @property
    def columns(self) -> pd.Index:
        return pd.Index(self._metadata.schema.to_arrow_schema().names)

    @property
    def num_row_groups(self) -> int:
        return self._metadata.num_row_groups

    def __len__(self) -> int:
        return self._metadata.num_rows

    @property
    def shape(self) -> tuple[int, int]:
        return len(self), len(self.columns)

    @property
    def empty(self) -> bool:
        return len(self) == 0 or len(self.columns) == 0

    def __contains__(self, column: object) -> bool:
        return column in self.columns

    def __iter__(self):
        return iter(self.columns)

    def __getitem__(self, key):
        if self._frame is None and isinstance(key, str) and key in self.columns:
            return pd.read_parquet(self.path, columns=[key])[key]
        if self._frame is None and isinstance(key, list) and all(
                isinstance(k, str) and k in self.columns for k in key):
            return pd.read_parquet(self.path, columns=key)
        return self.to_pandas()[key]

    def to_pandas(self) -> pd.DataFrame:
        """The whole table (read once, then kept)."""
        if self._frame is None:
            self._frame = pd.read_parquet(self.path)
        return self._frame

    def copy_to(self, path: Path) -> None:
        """The file's bytes at `path` (a hard link where the file system allows)."""
        try:
            os.link(self.path, path)
        except OSError:
            shutil.copyfile(self.path, path)

    def to_parquet(self, path, *args, **kwargs) -> None:
        self.copy_to(Path(path))

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.to_pandas(), name)

    def __repr__(self) -> str:
        return f"<ParquetFrame {self.path.name}: {len(self):,} rows x {len(self.columns)} columns>"


def write_json(data: dict[str, Any], path: Path) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    path.write_text(text + "\n", encoding="utf-8")


# In every folder a run writes, listing what it wrote: the next run replaces those and carries
# anything else over.
MARKER = ".linkage"

_HELD: dict[Path, int] = {}  # `--out` folders this process has claimed, and how many times


def check_out(out: str | os.PathLike, inputs=()) -> Path:
    """Raise `InputError` unless `out` may be replaced by a run reading `inputs`: it is new,
    empty, or a folder a run wrote (its `.linkage` marker says so), holds no input and is not
    inside an input folder (a Parquet folder would read it as more records)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder. Choose another `--out`.")
    where = Path(os.path.abspath(out))
    for source in inputs:
        path = Path(os.path.abspath(source))
        if path == where or where in path.parents:
            msg = (f"{out}: holds the input {source}, and `--out` is replaced by the run's "
                   "outputs. Choose another `--out`.")
            raise InputError(msg)
        if path.is_dir() and path in where.parents:
            msg = (f"{out}: is inside the input folder {source}. Choose another `--out`, "
                   "outside it.")
            raise InputError(msg)
    if out.is_dir() and not (out / MARKER).is_file() and any(out.iterdir()):
        msg = (f"{out}: holds files no linkage run wrote (it has no `{MARKER}` marker), and "
               "`--out` is replaced by the run's outputs. Choose another `--out`, or empty "
               "the folder.")
        raise InputError(msg)
    return out


# What the machine, not linkage, gets wrong when a run writes: (what happened, the fix).
_WRITE_FAULTS = {
    errno.ENOSPC: ("no space left on device", "free space or choose another `--out`"),
    errno.EDQUOT: ("disk quota exceeded", "free space or choose another `--out`"),
    errno.EFBIG: ("file too large", "raise the file-size limit (`ulimit -f`) or choose "
                  "another `--out`"),
    errno.EROFS: ("read-only file system", "choose another `--out`"),
    errno.EACCES: ("permission denied", "choose another `--out`, or fix its permissions"),
    errno.EPERM: ("operation not permitted", "choose another `--out`, or fix its "
                  "permissions"),
}


def write_fault(err: OSError, where: str | os.PathLike) -> str | None:
    """The message for an `OSError` the machine caused while writing `where` (None for any
    other error, which may be linkage's)."""
    if err.errno not in _WRITE_FAULTS:
        return None
    what, fix = _WRITE_FAULTS[err.errno]
    return f"{what} writing {where}: {fix}."


@contextlib.contextmanager
def _writing(out: Path):
    """Errors of the machine while writing `out` as `InputError`s naming it and the fix."""
    try:
        yield
    except OSError as err:
        msg = write_fault(err, out)
        if msg is None:
            raise
        raise InputError(msg) from None


@contextlib.contextmanager
def claiming(out: str | os.PathLike, inputs=()):
    """Hold `out` for this process while a run computes and writes it: check that it may be
    replaced (`check_out`), take the lock `.OUT.lock` beside it or refuse when another run
    holds it, and remove what killed runs left beside it. The OS releases the lock of a run
    that dies (`flock`); the lock file goes when the claim ends. Claims nest."""
    out = check_out(out, inputs)
    key = Path(os.path.abspath(out))
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield out
        finally:
            _HELD[key] -= 1
        return
    with _writing(out.parent):
        out.parent.mkdir(parents=True, exist_ok=True)
        handle = _lock(out)
    _HELD[key] = 1
    try:
        _remove_abandoned_staging(out)
        yield out
    finally:
        del _HELD[key]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(_lock_path(out))  # still locked, so no run can have opened it since
        os.close(handle)


def _lock_path(out: Path) -> Path:
    return out.parent / f".{out.name}.lock"


def _lock(out: Path) -> int:
    import fcntl

    path = _lock_path(out)
    while True:
        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(handle, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(handle)
            msg = (f"another linkage run (pid {owner}) is writing {out}; wait for it or "
                   "choose another `--out`.")
            raise InputError(msg) from None
        # Its last owner may have removed the file between our open and our lock.
        with contextlib.suppress(FileNotFoundError):
            if os.stat(path).st_ino == os.fstat(handle).st_ino:
                break
        os.close(handle)
    os.ftruncate(handle, 0)
    os.write(handle, f"{os.getpid()}\n".encode())
    return handle


def owned_prefix(prefix: str) -> str:
    """`prefix` with this process's id, for a temporary folder `remove_abandoned` may clean."""
    return f"{prefix}{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _abandoned(path: Path, prefix: str, unowned: bool) -> bool:
    """Whether the process named in `path`'s name after `prefix` is gone (`unowned` when the
    name has no pid: written before names had one)."""
    pid = path.name[len(prefix):].split("-", 1)[0]
    return not _alive(int(pid)) if pid.isdigit() else unowned


def remove_abandoned(folder: Path, prefix: str, *, unowned: bool = False) -> None:
    """Delete the folders `folder/prefix<pid>-*` of processes that are gone (a killed run's);
    with `unowned`, also those with no pid in the name."""
    for path in sorted(folder.glob(glob.escape(prefix) + "*")):
        if path.is_dir() and _abandoned(path, prefix, unowned):
            shutil.rmtree(path, ignore_errors=True)


def _remove_abandoned_staging(out: Path) -> None:
    """A killed run's staging folders beside `out`. One killed between its two renames kept
    the previous run in `.OUT.old-*`: that goes back into place first. The claim's lock
    means no live run of this `out` owns any of them."""
    retired = f".{out.name}.old-"
    for folder in sorted(out.parent.glob(glob.escape(retired) + "*")):
        if (not out.exists() and (folder / out.name).is_dir()
                and _abandoned(folder, retired, True)):
            os.replace(folder / out.name, out)
    # One killed after it carried a person's files into its staging folder (its marker does
    # not list them) gives them back before that folder goes.
    staged = f".{out.name}.tmp-"
    for folder in sorted(out.parent.glob(glob.escape(staged) + "*")):
        if out.is_dir() and folder.is_dir() and _abandoned(folder, staged, True):
            for name in _not_written_by_a_run(folder):
                if not (out / name).exists():
                    os.replace(folder / name, out / name)
    for prefix in (staged, retired):
        remove_abandoned(out.parent, prefix, unowned=True)


def _not_written_by_a_run(out: Path) -> list[str]:
    """The entries of a run's folder `out` that its run did not write: those its marker does not
    list. A marker of an older linkage lists none; all of that folder is taken as the run's."""
    try:
        marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(marker, dict) or not isinstance(marker.get("files"), list):
        return []
    ours = {*map(str, marker["files"]), MARKER}
    return sorted(entry.name for entry in out.iterdir() if entry.name not in ours)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(out: str | os.PathLike, fill: Callable[[Path], None], *,
                     what: str = "linkage", inputs=()) -> Path:
    """Let `fill` write into a fresh temporary folder, mark it as a run's (`MARKER`, naming
    `what` wrote it), then swap it in as `out`.

    `out` must be new, empty or an earlier run's folder, hold none of `inputs`, and not be
    written by another run at the same time (`claiming`). The old `out` (if any) is replaced
    only after `fill` returns, and only what runs wrote there (the marker lists it): anything
    else in it is carried into the new folder. If `fill` raises, the temporary folder is
    removed and `out` is untouched. The machine's write errors (disk full, a file-size limit,
    no permission) become `InputError`s naming `out`.
    """
    with claiming(out, inputs) as out, _writing(out):
        staging = Path(tempfile.mkdtemp(prefix=owned_prefix(f".{out.name}.tmp-"),
                                        dir=out.parent))
        carried: list[str] = []
        try:
            # mkdtemp's folder is private (0700); a run folder is as readable as any new one.
            staging.chmod(0o777 & ~_umask())
            fill(staging)
            written = sorted(entry.name for entry in staging.iterdir())
            write_json({"written_by": what, "linkage": __version__, "files": written},
                       staging / MARKER)
            # What a person put into the earlier run's folder goes on into the new one: a run
            # replaces only what runs wrote, as their markers list it.
            theirs = _not_written_by_a_run(out) if out.exists() else []
            clash = [name for name in theirs if (staging / name).exists()]
            if clash:
                raise InputError(
                    f"{out}: holds {', '.join(clash)}, which no linkage run wrote there, under "
                    "a name this run writes. Move it out of the folder, or choose another "
                    "`--out`.")
            for name in theirs:
                os.replace(out / name, staging / name)
                carried.append(name)
            if out.exists():
                retired = Path(tempfile.mkdtemp(prefix=owned_prefix(f".{out.name}.old-"),
                                                dir=out.parent))
                os.replace(out, retired / out.name)
                os.replace(staging, out)
                shutil.rmtree(retired, ignore_errors=True)
            else:
                os.replace(staging, out)
        except BaseException:
            for name in carried:  # back where the person left them
                with contextlib.suppress(OSError):
                    os.replace(staging / name, out / name)
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return out
