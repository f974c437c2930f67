"""The run state: what one run carries from stage to stage, whatever engine runs it.

An engine reads the tables (`Table`), prepares them (`linkage.pipeline.start_run`), and fills
a `RunState` as its stages finish: the normalize and exact statistics, the candidate pairs, the
fitted scorer and every pair's weight. `linkage.run.finish.finish` takes it from there (guard,
cluster, keep, outputs, summary, report), the same for every engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from linkage.blocking import CandidatePairs
    from linkage.progress import Clock
    from linkage.scoring import ComparisonMatrix
    from linkage.settings import Rules

Mode = Literal["dedupe", "link"]
ROW_ID = "row_id"



@dataclass
class Table:
    """One input table as the pipeline sees it.

    A table read for a run in chunks may hold only the columns its rules read (`frame`), with
    the file's column names in `all_columns` and its whole rows given again, batch by batch,
    by `rows(batch_rows)` when the outputs need them (deduplicated and review records).
    """

    frame: pd.DataFrame
    name: str
    checksum: str
    read_seconds: float = 0.0
    all_columns: list[str] | None = None
    rows: Callable[[int], Iterator[pd.DataFrame]] | None = None

    @property
    def columns(self) -> list[str]:
        """Every column of the input, whether `frame` holds it or not."""
        return self.all_columns or [str(c) for c in self.frame.columns]


@dataclass
class RunState:
    """One run between its stages: the inputs as prepared, and each stage's output as it is
    made. Engines fill it; `finish` reads it.

    `frames`: the input tables (with `row_id` when there is no id column); `combined`: all
    records, left rows first when linking; `ids`, `source` (each record's table number) and
    `sizes` describe them. `pairs`: the candidate pairs (row numbers into `combined`);
    `weight` and `probability`: each pair's score by `scorer`; `matrix`: their comparison
    levels where they are held in memory; `tally`: pairs per comparison level
    (`linkage.run.summary.LevelTally`), kept where the matrix is not held whole (None: counted
    from `matrix`)."""

    mode: Mode
    tables: list[Table]
    rules: Rules
    id_column: str | None
    clock: Clock
    frames: list[pd.DataFrame]
    id_name: str
    sizes: list[int]
    source: np.ndarray
    ids: pd.Series
    combined: pd.DataFrame
    normalize_stats: dict = field(default_factory=dict)
    exact_stats: dict = field(default_factory=dict)
    pairs: CandidatePairs | None = None
    centroid_distance: np.ndarray | None = None
    scorer: Any = None
    weight: np.ndarray | None = None
    probability: np.ndarray | None = None
    matrix: ComparisonMatrix | None = None
    tally: Any = None
    labels_report: dict | None = None
    kept_labels: pd.DataFrame | None = None

    @property
    def n(self) -> int:
        """Records in the run."""
        return len(self.combined)
