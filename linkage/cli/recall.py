"""`linkage recall`: recall by injection. Copies of clean records, each with one controlled
perturbation, are added to the input; the share found in their source's cluster is recall."""

from __future__ import annotations

from pathlib import Path

import click

from linkage.cli.common import json_option


@click.command("recall")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("--rules", "rules_path", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Rules YAML file; suggested rules when left out.")
@click.option("--inject", "n", default=500, show_default=True, type=int,
              help="Copies to inject, each made from a different clean record.")
@click.option("--kinds", default=None,
              help="Perturbation kinds, separated by commas (default all): exact, spaces, "
                   "punctuation, word, typo, format.")
@click.option("--fields", "fields_per_copy", default=1, show_default=True, type=int,
              help="Compared fields changed in each copy (more makes a harder test).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--id-column", default=None,
              help="Column holding record ids (overrides `id_column` in the rules).")
@click.option("--sep", default=None, help="CSV separator; sniffed when not given.")
@click.option("--encoding", default="utf-8", show_default=True, help="CSV text encoding.")
@json_option
@click.option("--out", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the injected copies, the outcome of each copy (outcomes.csv), "
                   "recall.json and the run with the copies (run/), to look at the misses.")
def command(input_path, rules_path, n, kinds, fields_per_copy, seed, id_column, sep, encoding,
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

    from linkage.cli import _suggested, claim
    from linkage.inject import measure_recall, parse_kinds

    chosen = parse_kinds(kinds)  # a bad --kinds fails before any run
    with claim(out, input_path, rules_path):
        if rules_path is None:
            rules_path = _suggested([input_path], sep, encoding)
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
