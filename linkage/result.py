"""The result of a run: DataFrames in memory, and the files of the output contract."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from linkage.diagnostics import format_diagnostics
from linkage.errors import InputError
from linkage.explain import contributions_table, explain_text
from linkage.io import write_atomically, write_json, write_parquet
from linkage.run.disk import read_run

if TYPE_CHECKING:
    from linkage.settings import Rules


@dataclass
class Result:
    """What a `dedupe` or `link` run produced.

    - `clusters`: every input record exactly once, with `cluster_id`, `action`, `reason` and
      `representative_id`.
    - `pairs`: every scored candidate pair, with each comparison's level and similarity.
    - `deduplicated` (dedupe): the kept records with their input columns.
    - `links` (link): the linked pairs with their match weight and cluster.
    """

    mode: str
    rules: Rules
    clusters: pd.DataFrame
    pairs: pd.DataFrame
    deduplicated: pd.DataFrame | None = None
    links: pd.DataFrame | None = None
    golden: pd.DataFrame | None = None
    review: pd.DataFrame | None = None  # records a guard sent to a person, by group
    guard_decisions: pd.DataFrame | None = None  # guard, record_id, decision, detail
    summary_data: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    scorer: Any = None  # the fitted scorer
    labels: pd.DataFrame | None = None  # the labelled pairs the scorer learned from
    # A bounded sample of input records (the columns the rules read, as text) that the report
    # shows: removed records, pairs near the threshold, the largest and weakest clusters.
    records: pd.DataFrame | None = None

    def explain(self, record_id: Any, other_id: Any = None) -> str:
        """Why a record is in its cluster, or why two records were or were not linked."""
        return explain_text(self.clusters, self.pairs, self.rules, self.scorer, record_id,
                            other_id, self.guard_decisions, self.labels)

    def to_spark(self, name: str, spark=None):
        """The output table `name` (clusters, pairs, deduplicated, links, golden, review,
        guard_decisions) as a Spark DataFrame: a table held as Parquet (a distributed Spark
        run's folders, a run in chunks) is read by Spark from its files, which the DataFrame
        keeps alive; a table in memory is handed over as Arrow. `spark`: the session (the
        active one, else a new one)."""
        from pyspark.sql import SparkSession

        from linkage.io import ParquetFrame

        tables = ("clusters", "pairs", "deduplicated", "links", "golden", "review",
                  "guard_decisions")
        table = getattr(self, name, None) if name in tables else None
        if table is None:
            held = [t for t in tables if getattr(self, t, None) is not None]
            raise InputError(f"to_spark({name!r}): this run has no such table. Its tables: "
                             f"{', '.join(held)}.")
        spark = spark or SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
        if isinstance(table, ParquetFrame):
            frame = spark.read.parquet(str(table.path))
            frame._linkage_table = table  # its files go with the last object that holds it
            return frame
        import pyarrow as pa

        return spark.createDataFrame(pa.Table.from_pandas(table, preserve_index=False))

    def waterfall(self, id_l: Any, id_r: Any):
        """The waterfall chart (SVG, shown inline in notebooks) of one scored pair's match
        weight: each comparison's contribution, the prior, and the threshold."""
        from linkage.report.charts import waterfall_svg

        a, b = str(id_l), str(id_r)
        left, right = self.pairs["id_l"].astype(str), self.pairs["id_r"].astype(str)
        pair = self.pairs[((left == a) & (right == b)) | ((left == b) & (right == a))]
        if pair.empty:
            raise InputError(f"records {id_l!r} and {id_r!r} were never compared: no blocker "
                             "proposed the pair. `explain` says which clusters they are in.")
        table = contributions_table(pair, self.rules, self.scorer)[0]
        return waterfall_svg(table, title=f"{id_l} ~ {id_r}", threshold=self.scorer.threshold)

    @classmethod
    def from_outputs(cls, mode: str, rules: Rules, outputs: dict[str, Any],
                     summary: dict[str, Any], timings: dict[str, float], scorer: Any) -> Result:
        """A Result from the tables an engine built (`clusters`, `pairs`, and whichever of
        `deduplicated`, `links`, `golden`, `review`, `guards` the run has)."""
        return cls(mode=mode, rules=rules, clusters=outputs["clusters"], pairs=outputs["pairs"],
                   deduplicated=outputs.get("deduplicated"), links=outputs.get("links"),
                   golden=outputs.get("golden"), review=outputs.get("review"),
                   guard_decisions=outputs.get("guards"), summary_data=summary,
                   timings=timings, scorer=scorer, labels=outputs.get("labels"),
                   records=outputs.get("report_records"))

    @classmethod
    def load(cls, run_dir: str | Path) -> Result:
        """A run written by `write` (the --out folder of `linkage dedupe` or `link`), read back:
        the tables, the rules, the summary and, when the run saved one, the trained scorer."""
        return cls(**read_run(run_dir))

    def report(self, path: str | Path | None = None, **options):
        """The run's report (the page written as report.html), shown inline in a notebook;
        with `path`, also saved there. `options`: those of `linkage.report.render_html`
        (`labels=`, `redact=["email", "phone"]`, `redact_mode="mask"`, ...)."""
        from linkage.report import inline

        page = inline(self, **options)
        if path is not None:
            page.save(path)
        return page

    def match(self, records: Any, *, top: int = 3) -> pd.DataFrame:
        """The best candidate clusters for each of `records` (a DataFrame with the input
        columns), with scores, without changing the run: "is this customer already known?"."""
        from linkage.match import match

        return match(self, records, top=top)

    def summary(self) -> dict[str, Any]:
        """Counts per stage and action, the removal rate, versions and checksums."""
        return self.summary_data

    def report_view(self) -> Result:
        """What report.html is built from: this result (an engine whose tables stay on disk
        gives one without them, so the page is made from summary.json's counts)."""
        return self

    def write(self, out: str | Path) -> Path:
        """Write the output contract into `out`, atomically (all files or none), with the
        run's report.html."""

        def fill(folder: Path) -> None:
            from concurrent.futures import ThreadPoolExecutor

            start = time.perf_counter()
            tables = {"clusters": self.clusters, "pairs": self.pairs,
                      "deduplicated": self.deduplicated, "links": self.links,
                      "golden": self.golden, "review": self.review,
                      "guards": self.guard_decisions,
                      "report_records": self.records}  # the records report.html shows
            # Two files at a time: Arrow encodes and compresses one while Python builds the
            # other's columns (each file's bytes are its own either way).
            with ThreadPoolExecutor(max_workers=2, thread_name_prefix="write") as pool:
                writing = [pool.submit(write_parquet, table, folder / f"{name}.parquet")
                           for name, table in tables.items() if table is not None]
                for done in writing:
                    done.result()
            self.rules.to_yaml(folder / "rules.yaml", explicit=True)  # defaults too
            if self.labels is not None:  # the next round's labels add to these
                self.labels.to_csv(folder / "labels.csv", index=False, lineterminator="\n")
            if self.scorer is not None and hasattr(self.scorer, "save"):
                self.scorer.save(folder / "model.json")
            write_json(self.summary_data, folder / "summary.json")
            # The page is built only from what this folder keeps, so it repeats byte for byte
            # and `linkage report` rebuilds it from the folder.
            from linkage.report import write_report

            write_report(self.report_view(), folder / "report.html")
            # Timings vary run to run; they live apart so the other files repeat byte for byte.
            seconds = {**self.timings, "write": round(time.perf_counter() - start, 4)}
            write_json({"seconds": seconds}, folder / "timings.json")

        inputs = [i["name"] for i in self.summary_data.get("inputs", [])
                  if Path(i["name"]).exists()]  # not a DataFrame's name
        return write_atomically(out, fill, what=self.mode, inputs=inputs)

    def format_summary(self, run_dir: str | Path | None = None) -> str:
        """A short human summary for the terminal; `run_dir`, where the run was written, is
        named in the diagnostics' commands."""
        s = self.summary_data
        stages = s["stages"]
        score = stages["score"]
        matched = score.get("matched_pairs", score["pairs_at_or_above_threshold"])
        by_stage = "".join(f", {k:,} below it by the {name} stage"
                           for name, k in score.get("matched_by_stage", {}).items() if k)
        lines = [
            f"linkage {s['mode']}: {stages['read']['records']:,} records",
            f"  candidate pairs   {stages['block']['candidate_pairs']:,} "
            f"(reduction ratio {stages['block']['reduction_ratio']:.6f})",
            f"  matched pairs     {matched:,} "
            f"({score['pairs_at_or_above_threshold']:,} at or above the threshold "
            f"{score['threshold']:g}{by_stage})",
            f"  clusters          {stages['cluster']['clusters']:,} "
            f"({stages['cluster']['clusters_with_several_records']:,} with several records, "
            f"largest {stages['cluster']['largest_cluster']})",
        ]
        if s["mode"] == "dedupe":
            actions = s["actions"]
            # Every action, so that the counts add up to the records read: `preserved` (a
            # guard rule keeps the repeat, e.g. two purchases) and `review` (a person decides).
            lines.append(
                f"  kept {actions['keep']:,}, duplicates {actions['duplicate']:,}, "
                f"preserved {actions.get('preserved', 0):,}, review {actions.get('review', 0):,} "
                f"(removal rate {s['removal_rate']:.2%})"
            )
        else:
            lines.append(
                f"  links {s['links']:,} (left {s['linked_records']['left']:,} and right "
                f"{s['linked_records']['right']:,} records linked)"
            )
        codes = {d["code"] for d in s.get("diagnostics") or []}
        for warning in s.get("warnings", []):
            if "removal_rate" in codes and warning.startswith(
                    f"{s['removal_rate']:.1%} of the records were removed as duplicates"):
                continue  # the removal_rate diagnostic below says it, with what to do
            lines.append(f"  warning: {warning}")

        lines += format_diagnostics(s, run_dir)
        return "\n".join(lines)

    def readable_pairs(self) -> pd.DataFrame:
        """`pairs` with each comparison's `*_level` as its label: an ordered categorical
        (`null`, then the levels from least to most alike, as the comparison names them:
        `else`, `>=0.85`, `exact`, `within_30_days`, ...) instead of an integer code."""
        pairs = self.pairs if isinstance(self.pairs, pd.DataFrame) else self.pairs.to_pandas()
        pairs = pairs.copy()
        for comparison in self.rules.comparisons:
            column = f"{comparison.output_name}_level"
            if column not in pairs:
                continue
            labels = ["null", *comparison.level_labels]
            codes = pairs[column].to_numpy().astype("int64") + 1  # null (-1) is the first
            pairs[column] = pd.Categorical.from_codes(codes, categories=labels, ordered=True)
        return pairs

    def __repr__(self) -> str:
        return f"<linkage.Result {self.mode}: {len(self.clusters):,} records>"

    def _repr_html_(self) -> str:
        """A notebook's view: the counts of the terminal summary, the diagnostics with what
        to do, and the first records with their action and reason."""
        import html

        s = self.summary_data
        stages = s.get("stages", {})
        rows = [("records", f"{stages.get('read', {}).get('records', len(self.clusters)):,}")]
        if "block" in stages:
            rows.append(("candidate pairs", f"{stages['block']['candidate_pairs']:,}"))
        if "score" in stages:
            score = stages["score"]
            matched = score.get("matched_pairs", score.get("pairs_at_or_above_threshold", 0))
            rows.append(("matched pairs", f"{matched:,} (threshold {score['threshold']:g})"))
        if "cluster" in stages:
            rows.append(("clusters", f"{stages['cluster']['clusters']:,} (largest "
                                     f"{stages['cluster']['largest_cluster']:,})"))
        actions = s.get("actions", {})
        if self.mode == "dedupe" and actions:
            rows.append(("actions", ", ".join(f"{k} {v:,}" for k, v in actions.items())
                         + f" (removal rate {s.get('removal_rate', 0):.2%})"))
        elif "links" in s:
            rows.append(("links", f"{s['links']:,}"))
        table = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                        f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                        for k, v in rows)
        notes = ""
        diagnostics = s.get("diagnostics") or []
        if diagnostics:
            items = "".join(f"<li><b>{html.escape(str(d.get('code', '')))}</b>: "
                            f"{html.escape(str(d.get('message', '')))} "
                            f"<i>{html.escape(str(d.get('what_to_do', '')))}</i></li>"
                            for d in diagnostics)
            reliable = "" if s.get("model_reliable", True) is not False else (
                "<p style='color:#b00020'><b>The model is unreliable</b>: do not use this "
                "result as it is.</p>")
            notes = f"{reliable}<ul>{items}</ul>"
        head = self.clusters.head(10)
        records = head.to_html(index=False, max_cols=12, border=0) if len(head) else ""
        return (f"<div><b>linkage.Result</b> {html.escape(self.mode)}<table>{table}</table>"
                f"{notes}{records}</div>")
