"""The Spark engine: the same rules and the same output contract as the local engine, with
blocking, comparing, scoring, clustering and keeping done by Spark (`--engine spark`).

pyspark is imported only when a run starts; see docs/SPARK.md for running on a cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

# The standard library only: pyspark is imported inside it.

if TYPE_CHECKING:
    from linkage.result import Result
    from linkage.run.state import Mode, Table
    from linkage.settings import Rules

__all__ = ["SparkEngine", "run_spark"]


def run_spark(
    mode: Mode,
    tables: list[Table],
    rules: Rules,
    *,
    id_column: str | None = None,
    master: str = "local[2]",
    progress: bool | None = None,
    model: str | Path | None = None,
    checkpoint: str | Path | None = None,
) -> Result:
    """Run `rules` over `tables` on Spark at `master` (`local[2]`, `spark://host:7077`,
    `yarn` ...) and return the same `Result` as the local engine's `run_local`.
    `checkpoint`: a folder (every executor can write) where the candidate and compared pairs
    are kept as Parquet; a rerun of the same rules and inputs starts after them."""
    from linkage.engines.spark._engine import run_spark as run

    return run(mode, tables, rules, id_column=id_column, master=master, progress=progress,
               model=model, checkpoint=checkpoint)


class SparkEngine:
    """The Spark engine in the registry (`linkage.engines`): `options["master"]` is the Spark
    master URL."""

    name = "spark"
    projects_columns = False  # Spark reads the tables whole

    def check(self, rules: Rules, *, labels=None, checkpoint=None) -> None:
        from linkage.engines.spark._support import check_supported
        from linkage.errors import EngineError

        if labels is not None:
            raise EngineError("--labels trains the scorer with the local engine only; leave "
                              "out --engine spark to learn from labels.")
        check_supported(rules)

    def run_sources(self, mode: Mode, sources: list, rules: Rules, *, id_column, sep,
                    encoding, progress, model, options, checkpoint=None) -> Result | None:
        """Run on the distributed route when the inputs (paths or Spark DataFrames) hold more
        records than the driver route's limit (`LINKAGE_SPARK_DRIVER_ROWS`), reading them with
        Spark; None where they are small enough for the driver route (`run`)."""
        from linkage.engines.spark._engine import run_distributed_sources

        return run_distributed_sources(mode, sources, rules, id_column=id_column, sep=sep,
                                       encoding=encoding, progress=progress, model=model,
                                       master=options.get("master", "local[2]"),
                                       checkpoint=checkpoint)

    def run(self, mode: Mode, tables: list[Table], rules: Rules, *, id_column, progress, model,
            checkpoint, chunk_rows, labels, options) -> Result:
        return run_spark(mode, tables, rules, id_column=id_column,
                         master=options.get("master", "local[2]"), progress=progress,
                         model=model, checkpoint=checkpoint)
