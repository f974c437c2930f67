"""Reading tables and writing a run's outputs.

CSV values are read as text (a postcode keeps its leading zero; an id stays an id); Parquet and
DataFrames keep their types. Outputs are written to a temporary folder beside `--out` and moved
into place only when every file is complete, so a failed run leaves `--out` as it was.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
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

TableLike = str | os.PathLike | pd.DataFrame


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


def read(
    source: TableLike,
    *,
    sep: str | None = None,
    encoding: str = "utf-8",
    name: str | None = None,
) -> pd.DataFrame:
    """Read a CSV or Parquet file, or take a DataFrame, as a table of records.

    CSV: the separator is sniffed unless `sep` is given; every value is read as text, blank
    cells are missing, and spaces after a separator are skipped.
    """
    if isinstance(source, pd.DataFrame):
        frame = source.copy()
        frame.attrs["linkage_source"] = name or "DataFrame"
        return frame
    path = Path(source)
    label = str(path)
    if not path.exists():
        raise InputError(f"{label}: no such file. Check the path.")
    if path.is_dir() or path.suffix.lower() in (".parquet", ".pq"):
        try:
            frame = pd.read_parquet(path)
        except Exception as err:  # pyarrow raises several types for a damaged file
            raise InputError(f"{label}: cannot read as Parquet ({err}).") from None
    else:
        try:
            separator = sep or _sniff_separator(path, encoding)
            frame = pd.read_csv(
                path,
                sep=separator,
                dtype=str,
                keep_default_na=False,
                na_values=[""],
                skipinitialspace=True,
                encoding=encoding,
            )
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
        frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs["linkage_source"] = name or label
    return frame


def as_text(values: pd.Series) -> np.ndarray:
    """Object array of str or None, what normalizers and comparisons read; numbers from Parquet
    become their text."""
    out = np.full(len(values), None, dtype=object)
    present = values.notna().to_numpy()
    out[present] = values[present].astype(str).to_numpy()
    return out


def checksum(source: TableLike, frame: pd.DataFrame) -> str:
    """sha256 of the input file's bytes, or of a DataFrame's contents."""
    if isinstance(source, pd.DataFrame):
        hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
        return "sha256:" + hashlib.sha256(hashed).hexdigest()
    digest = hashlib.sha256()
    with open(source, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


ROW_GROUP_ROWS = 1024 * 1024  # pyarrow's own default, so files repeat what earlier runs wrote


def row_group_rows() -> int:
    """Rows per Parquet row group of every written table: `LINKAGE_ROW_GROUP_ROWS`, else
    1,048,576. Smaller groups let readers with little memory read a big pairs file."""
    text = os.environ.get("LINKAGE_ROW_GROUP_ROWS", "").strip()
    if not text:
        return ROW_GROUP_ROWS
    try:
        rows = int(text)
    except ValueError:
        rows = 0
    if rows < 1:
        raise InputError(f"LINKAGE_ROW_GROUP_ROWS={text!r}: must be a whole number of rows of "
                         "at least 1. Unset it to use 1048576.")
    return rows


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
    rows, each written from one contiguous array per column (so where a column's dictionary
    encoding gives up does not depend on how the rows arrived), and every batch takes the
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
        self._group = row_group_rows()
        self._writer = None
        self._schema = None
        self._pending: list = []
        self._pending_rows = 0

    def write(self, frame: pd.DataFrame) -> None:
        import pyarrow.parquet as pq

        if len(frame) == 0:
            return
        table = _arrow_table(frame)
        if self._writer is None:
            self._schema = table.schema if self._like is None else _arrow_table(self._like).schema
            self._writer = pq.ParquetWriter(self.path, self._schema, compression="zstd")
        if not table.schema.equals(self._schema, check_metadata=True):
            table = table.cast(self._schema.remove_metadata()).replace_schema_metadata(
                self._schema.metadata)
        self._pending.append(table)
        self._pending_rows += len(table)
        self.rows += len(table)
        while self._pending_rows >= self._group:
            self._flush(self._group)

    def _flush(self, rows: int) -> None:
        import pyarrow as pa

        table = pa.concat_tables(self._pending)
        self._writer.write_table(table.slice(0, rows).combine_chunks(),
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
                writer.write_table(table, row_group_size=self._group)
        else:
            if self._pending_rows:
                self._flush(self._pending_rows)
            self._writer.close()
        return ParquetFrame(self.path) if keep else None


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


def write_atomically(out: str | os.PathLike, fill: Callable[[Path], None]) -> Path:
    """Let `fill` write into a fresh temporary folder, then swap it in as `out`.

    The old `out` (if any) is replaced only after `fill` returns; if `fill` raises, the
    temporary folder is removed and `out` is untouched.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder. Choose another `--out`.")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        fill(staging)
        if out.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, retired / out.name)
            os.replace(staging, out)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out
