"""The verbs that measure how good a run is: `evaluate` against a truth table (record id →
entity: pairwise and B-cubed precision/recall/F1, the share of true entities reproduced exactly
as one cluster, blocking recall and reduction ratio per blocker, and pairwise scores at several
thresholds), and `recall` without one, by injecting perturbed copies of clean records.

The truth is read only by `evaluate` (`linkage.measure.evaluate.read_truth`), never by a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from linkage.cli.common import (
    claim,
    encoding_option,
    id_column_option,
    json_option,
    rules_option,
    seed_option,
    sep_option,
    suggested_rules,
)


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
@sep_option("CSV separator of --truth; sniffed when not given.")
@encoding_option("Text encoding of --truth.")
@json_option
def evaluate(run_dir, truth_path, truth_id, truth_cluster, thresholds, sep, encoding, as_json):
    """Score the run in RUN_DIR (the --out folder of `linkage dedupe` or `link`) against a
    truth table: pairwise and B-cubed precision/recall/F1, true entities reproduced exactly,
    blocking recall and reduction ratio per blocker, and pairwise scores by threshold.

    \b
    linkage evaluate out/customers --truth sample_data/customers_truth.csv \\
        --truth-id customer_id --truth-cluster person_id --thresholds 2,4,6
    """
    import json

    from linkage.measure.evaluate import evaluate_run, read_truth

    chosen = parse_thresholds(thresholds)  # a bad --thresholds fails before any reading
    truth = read_truth(truth_path, truth_id, truth_cluster, sep=sep, encoding=encoding)
    report = {**evaluate_run(run_dir, truth, chosen), "truth": str(truth_path)}
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False))
    else:
        click.echo(_format(report, truth_path))


@click.command("recall")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@rules_option()
@click.option("--inject", "n", default=500, show_default=True, type=int,
              help="Copies to inject, each made from a different clean record.")
@click.option("--kinds", default=None,
              help="Perturbation kinds, separated by commas (default all): exact, spaces, "
                   "punctuation, word, typo, format.")
@click.option("--fields", "fields_per_copy", default=1, show_default=True, type=int,
              help="Compared fields changed in each copy (more makes a harder test).")
@seed_option
@id_column_option("Column holding record ids (overrides `id_column` in the rules).")
@sep_option()
@encoding_option()
@json_option
@click.option("--out", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the injected copies, the outcome of each copy (outcomes.csv), "
                   "recall.json and the run with the copies (run/), to look at the misses.")
def recall(input_path, rules_path, n, kinds, fields_per_copy, seed, id_column, sep, encoding,
            as_json, out):
    """Measure recall by injection: copy --inject clean records of INPUT (records the rules
    leave alone) with one controlled perturbation each, run the rules on INPUT with the copies,
    and report per kind of perturbation the share of copies found in their source's cluster,
    with a 95% Wilson interval and the copies merged with other records instead.

    \b
    linkage recall sample_data/customers.csv --rules rules/customers.yaml --inject 500
    linkage recall sample_data/customers.csv --rules rules/customers.yaml --kinds typo,format \\
        --json --out out/recall
    """
    import json

    from linkage.measure.recall import measure_recall, parse_kinds

    chosen = parse_kinds(kinds)  # a bad --kinds fails before any run
    with claim(out, input_path, rules_path):
        if rules_path is None:
            rules_path = suggested_rules([input_path], sep, encoding)
        report = measure_recall(input_path, rules_path, n, kinds=chosen, seed=seed,
                                id_column=id_column, fields_per_copy=fields_per_copy, sep=sep,
                                encoding=encoding)
        if out is not None:
            report.write(out)
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False))
    else:
        click.echo(report.format())
        if out is not None:
            click.echo(f"  wrote {out}/ (outcomes.csv: one row per copy; explain a miss with "
                       f"`linkage explain {out}/run INJECTED_ID SOURCE_ID`)")


COMMANDS = (evaluate, recall)
