"""The `linkage` command line: the group `main` (the entry point `linkage`, and `python -m
linkage`) and its verbs, one module per group of verbs, by what the verb does to a run:

    run.py      dedupe, link, update, forget    write a run folder (make one, add to it,
                                                remove a person from it)
    show.py     explain, report                 show a finished run to a person
    measure.py  evaluate, recall                measure a run's accuracy: against a truth
                                                table, or by injected copies without one
    labels.py   sample, review, calibrate       the labelling loop: pick pairs, label them,
                                                precision per score band
    gate.py     check, drift                    verdicts for a pipeline: exit 1 = failed
    rules.py    suggest, validate               write and check rules files
    text.py     decontaminate, lsh-params,      text corpora, beside the record runs
                strip-boilerplate

What several verbs share is declared once in common.py (public names): the group that turns
each failure into its exit code and message (the codes are listed there), `--json`, the options
several verbs take, `claim` (holding `--out`), warnings on standard error, the suggested rules
when `--rules` is left out, `--bands`, and the help texts several verbs show. A verb module
imports from common.py and from the library, never from another verb module. Each verb module
lists its verbs in `COMMANDS`; heavy imports stay inside the verbs, so `linkage --help` is fast.
"""

from __future__ import annotations

import click

from linkage.cli import gate, labels, measure, rules, run, show, text
from linkage.cli.common import EXAMPLES, LinkageGroup


@click.group(cls=LinkageGroup, epilog=EXAMPLES)
@click.version_option(package_name="linkage")
def main() -> None:
    """Find records that describe the same thing: deduplicate one table or link two.

    Each run reads the rules (normalize, block, compare, score, keep), and writes to --out:
    clusters.parquet (every input record, with what happened to it and why), pairs.parquet
    (every scored candidate pair), deduplicated.parquet or links.parquet, and summary.json.
    """


for _module in (run, show, measure, labels, gate, rules, text):
    for _command in _module.COMMANDS:
        main.add_command(_command)

