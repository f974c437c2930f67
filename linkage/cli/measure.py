"""`linkage evaluate`: score a written run against a truth table (record id → entity).

The truth is read here only, never by a run: pairwise and B-cubed precision/recall/F1, the share
of true entities reproduced exactly as one cluster, blocking recall and reduction ratio per
blocker, and pairwise scores at several thresholds (what the threshold alone decides).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from linkage.cli.common import json_option


def parse_thresholds(text: str | None) -> list[float] | None:
    """--thresholds a,b,c as sorted numbers; None when not given."""
    from linkage.errors import InputError

    if text is None:
        return None
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--thresholds takes match weights separated by commas, e.g. 2,4,6. "
                         f"Got {text!r} instead.") from None
    if not values:
        raise InputError("--thresholds names no threshold; give match weights such as 2,4,6.")
    return sorted(set(values))


def read_truth(path: Path, id_column: str, cluster_column: str, *, sep: str | None = None,
               encoding: str = "utf-8"):
    """The truth table as a Series entity by record id (both as text), checked: the columns
    exist, ids are unique, every id has an entity."""
    import pandas as pd

    from linkage._schema import did_you_mean
    from linkage.errors import InputError
    from linkage.io import read

    frame = read(path, sep=sep, encoding=encoding)
    columns = [str(c) for c in frame.columns]
    for option, column in (("--truth-id", id_column), ("--truth-cluster", cluster_column)):
        if column not in columns:
            raise InputError(f"{path}: column `{column}` (given as {option}) is not in the truth "
                             f"table. Its columns are: {', '.join(columns)}."
                             f"{did_you_mean(column, columns)} Fix {option}.")
    ids = frame[id_column]
    if ids.isna().any():
        raise InputError(f"{path}: `{id_column}` is empty in {int(ids.isna().sum())} row(s); "
                         "every truth row needs a record id. Fill them or drop those rows.")
    entity = frame[cluster_column]
    if entity.isna().any():
        raise InputError(f"{path}: `{cluster_column}` is empty in {int(entity.isna().sum())} "
                         "row(s); every truth row needs an entity. Fill them (a record alone "
                         "is an entity of its own), or drop those rows.")
    key = ids.astype(str)
    repeated = key[key.duplicated()]
    if len(repeated):
        examples = ", ".join(repr(v) for v in repeated.unique()[:3])
        raise InputError(f"{path}: `{id_column}` repeats {repeated.nunique()} id(s) (e.g. "
                         f"{examples}); the truth must name each record once.")
    return pd.Series(entity.astype(str).to_numpy(), index=key.to_numpy(), name="entity")


def evaluate_run(run_dir: str | Path, truth, thresholds: list[float] | None = None
                 ) -> dict[str, Any]:
    """Every figure of `linkage evaluate` for a run folder and a truth Series (entity by id),
    computed with `linkage.evaluate`. `thresholds`: match weights for the table by threshold;
    by default the run's threshold and two steps of 1 either side of it."""
    from linkage.result import Result

    run_dir = Path(run_dir)
    return evaluate_result(Result.load(run_dir), truth, thresholds, where=str(run_dir))


def evaluate_result(run, truth, thresholds: list[float] | None = None, *, where: str = "the run"
                    ) -> dict[str, Any]:
    """`evaluate_run` for a `Result` in memory (`where` names it in messages and as `run`)."""
    from linkage.blocking import blocker_names
    from linkage.errors import InputError
    from linkage.evaluate import blocking_report, score_clusters, scores_by_threshold

    run_dir = where
    id_column = run.summary_data.get("id_column", run.clusters.columns[0])
    ids = run.clusters[id_column].astype(str)
    if ids.duplicated().any():
        examples = ", ".join(repr(v) for v in ids[ids.duplicated()].unique()[:3])
        raise InputError(f"{run_dir}: ids repeat across the two tables of this link run (e.g. "
                         f"{examples}), so a truth of id → entity cannot say which record it "
                         "means. Give the tables distinct ids and run the link again.")
    unknown = truth.index[~truth.index.isin(ids)]
    if len(unknown):
        examples = ", ".join(repr(v) for v in unknown[:3])
        raise InputError(f"{len(unknown)} id(s) of the truth are not records of {run_dir} (e.g. "
                         f"{examples}). Check --truth-id, and that the truth belongs to the "
                         "input of this run.")
    predicted = run.clusters["cluster_id"].set_axis(ids.to_numpy())
    pairs = run.pairs.assign(id_l=run.pairs["id_l"].astype(str),
                             id_r=run.pairs["id_r"].astype(str))
    scores = score_clusters(predicted, truth)
    n = len(ids)
    blocking = blocking_report(pairs, truth, blocker_names(run.rules.blocking), n_records=n)
    out: dict[str, Any] = {"run": where, "mode": run.mode, "records": n,
                           "records_in_truth": len(truth), "scores": scores.as_dict()}
    if run.mode == "link":
        # A link compares left with right only: its pair space is n_left x n_right.
        left = int((run.clusters["source"] == "left").sum())
        space = left * (n - left)
        blocking["reduction_ratio"] = 1 - blocking["pairs"] / space if space else 0.0
        side = run.clusters["source"].set_axis(ids.to_numpy())
        per_side = truth.groupby([side.reindex(truth.index).to_numpy(), truth.to_numpy()]).size()
        out["true_pairs_within_one_side"] = int((per_side * (per_side - 1) // 2).sum())
    out["blocking"] = _rows(blocking)
    out["threshold"] = float(run.scorer.threshold)
    if thresholds is None:
        thresholds = [out["threshold"] + step for step in (-2.0, -1.0, 0.0, 1.0, 2.0)]
    out["by_threshold"] = _rows(scores_by_threshold(pairs, truth, thresholds))
    return out


def _rows(frame) -> list[dict[str, Any]]:
    return [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]


def _format(report: dict[str, Any], truth_path: Path) -> str:
    s = report["scores"]
    lines = [
        f"evaluate {report['run']} ({report['mode']}, {report['records']:,} records) against "
        f"{truth_path} ({report['records_in_truth']:,} records)",
        f"  pairwise   precision {s['precision']:.4f}  recall {s['recall']:.4f}  "
        f"F1 {s['f1']:.4f}",
        f"  B-cubed    precision {s['bcubed_precision']:.4f}  recall {s['bcubed_recall']:.4f}  "
        f"F1 {s['bcubed_f1']:.4f}",
        f"  true entities reproduced exactly as one cluster: {s['exact_clusters']:.4f}",
        "  blocking: pairs proposed, share of true pairs proposed (recall), reduction ratio",
    ]
    for b in report["blocking"]:
        lines.append(f"    {b['blocker']:<20} {b['pairs']:>12,}  recall {b['recall']:.4f}  "
                     f"reduction ratio {b['reduction_ratio']:.6f}")
    lines.append("  by threshold (scored pairs at or above it, before clustering):")
    lines.append(f"    {'threshold':>10} {'pairs':>10} {'precision':>10} {'recall':>8} {'F1':>8}")
    for t in report["by_threshold"]:
        mark = "  <- the run's threshold" if t["threshold"] == report["threshold"] else ""
        lines.append(f"    {t['threshold']:>10g} {t['pairs']:>10,} {t['precision']:>10.4f} "
                     f"{t['recall']:>8.4f} {t['f1']:>8.4f}{mark}")
    within = report.get("true_pairs_within_one_side", 0)
    if within:
        lines.append(f"  note: the truth has {within:,} true pairs inside one table; a link "
                     "never proposes them, so they count as missed in pairwise recall")
    return "\n".join(lines)


@click.command("evaluate")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--truth", "truth_path", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="CSV or Parquet table with a record id and its true entity.")
@click.option("--truth-id", required=True, help="Column of --truth holding the record ids.")
@click.option("--truth-cluster", required=True,
              help="Column of --truth naming the entity: records with the same value are the "
                   "same thing.")
@click.option("--thresholds", default=None,
              help="Match weights at which to score the pairs, separated by commas (default: "
                   "the run's threshold and two steps of 1 either side).")
@click.option("--sep", default=None, help="CSV separator of --truth; sniffed when not given.")
@click.option("--encoding", default="utf-8", show_default=True, help="Text encoding of --truth.")
@json_option
def command(run_dir, truth_path, truth_id, truth_cluster, thresholds, sep, encoding, as_json):
    """Score the run in RUN_DIR (the --out folder of `linkage dedupe` or `link`) against a
    truth table: pairwise and B-cubed precision/recall/F1, true entities reproduced exactly,
    blocking recall and reduction ratio per blocker, and pairwise scores by threshold.

    \b
    linkage evaluate out/customers --truth sample_data/customers_truth.csv \\
        --truth-id customer_id --truth-cluster person_id --thresholds 2,4,6
    """
    import json

    chosen = parse_thresholds(thresholds)  # a bad --thresholds fails before any reading
    truth = read_truth(truth_path, truth_id, truth_cluster, sep=sep, encoding=encoding)
    report = {**evaluate_run(run_dir, truth, chosen), "truth": str(truth_path)}
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False))
    else:
        click.echo(_format(report, truth_path))
