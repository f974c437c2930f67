"""Incremental linking, as it was named before the run core: `update` lives in
`linkage.update`, `match` in `linkage.match`, the stable cluster ids and their lineage in
`linkage.run.disk`. The names stay importable from here."""

from linkage.match import MATCH_COLUMNS, match
from linkage.run.disk import (
    EVENTS,
    LINEAGE_COLUMNS,
    assign_ids,
    concat_lineage,
    event_counts,
    id_state,
    id_summary,
    lineage_frame,
    lineage_rows,
    parquet_bytes,
    read_lineage,
    run_records,
    sha256,
    write_lineage,
)
from linkage.update import Update, block_new, finish_run, still_proposed, update

__all__ = ["EVENTS", "LINEAGE_COLUMNS", "MATCH_COLUMNS", "Update", "assign_ids", "block_new",
           "concat_lineage", "event_counts", "finish_run", "id_state", "id_summary",
           "lineage_frame", "lineage_rows", "match", "parquet_bytes", "read_lineage",
           "run_records", "sha256", "still_proposed", "update", "write_lineage"]
