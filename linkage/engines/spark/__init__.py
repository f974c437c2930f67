"""The Spark engine: the same rules and the same output contract as the local engine, with
blocking, comparing, scoring, clustering and keeping done by Spark (`--engine spark`).

pyspark is imported only when a run starts; see docs/SPARK.md for running on a cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from linkage.pipeline import Mode, Table
    from linkage.result import Result
    from linkage.settings import Rules

__all__ = ["run_spark"]


def run_spark(
    mode: Mode,
    tables: list[Table],
    rules: Rules,
    *,
    id_column: str | None = None,
    master: str = "local[2]",
    progress: bool | None = None,
    model: str | Path | None = None,
) -> Result:
    """Run `rules` over `tables` on Spark at `master` (`local[2]`, `spark://host:7077`,
    `yarn` ...) and return the same `Result` as the local engine's `run_local`."""
    from linkage.engines.spark._engine import run_spark as run

    return run(mode, tables, rules, id_column=id_column, master=master, progress=progress,
               model=model)
