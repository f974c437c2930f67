"""Reading tables and writing a run's outputs.

CSV values are read as text (a postcode keeps its leading zero; an id stays an id); Parquet and
DataFrames keep their types. Outputs are written to a temporary folder beside `--out` and moved
into place only when every file is complete, so a failed run leaves `--out` as it was.
"""

from __future__ import annotations

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


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Parquet without the pandas index, so the same frame gives the same bytes."""
    frame.to_parquet(path, index=False, compression="zstd")


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
