"""How much a run holds at a time: runs above these sizes work a chunk of records or pairs
at a time and stream their outputs to Parquet (docs/SCALING.md)."""

from __future__ import annotations

import os

from linkage.errors import InputError

# Above this many records or candidate pairs a run works in chunks by itself: the per-record
# and per-pair outputs then go to Parquet batch by batch instead of being held in memory.
AUTO_CHUNK_RECORDS = 2_000_000


AUTO_CHUNK_PAIRS = 10_000_000


DEFAULT_CHUNK_ROWS = 1_000_000


def resolve_chunk_rows(chunk_rows: int | None) -> int | None:
    """The chunk size asked for: the argument, else `LINKAGE_CHUNK_ROWS`, else None."""
    if chunk_rows is None:
        text = os.environ.get("LINKAGE_CHUNK_ROWS", "").strip()
        if not text:
            return None
        try:
            chunk_rows = int(text)
        except ValueError:
            chunk_rows = 0
        where = f"LINKAGE_CHUNK_ROWS={text!r}"
    else:
        where = f"chunk_rows={chunk_rows!r}"
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise InputError(f"{where}: must be a whole number of at least 1 (records or pairs "
                         "per chunk). Leave it unset to work in memory.")
    return chunk_rows


def auto_chunk_rows(records: int, candidate_pairs: int = 0) -> int | None:
    """Chunks of `DEFAULT_CHUNK_ROWS` for runs too big to hold their outputs in memory."""
    big = records > AUTO_CHUNK_RECORDS or candidate_pairs > AUTO_CHUNK_PAIRS
    return DEFAULT_CHUNK_ROWS if big else None
