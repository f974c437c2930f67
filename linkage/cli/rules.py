"""The verbs for rules files: `suggest` writes rules for a table by profiling it, `validate`
checks a rules file and says what it will do (`rules_lines`, in the order a run does it)."""

from __future__ import annotations

from pathlib import Path

import click

from linkage.cli.common import encoding_option, sep_option


@click.command()
@click.argument("inputs", metavar="INPUT [RIGHT]", nargs=-1, required=True,
                type=click.Path(path_type=Path))
@sep_option()
@encoding_option()
def suggest(inputs, sep, encoding):
    """Profile INPUT (or INPUT and RIGHT, to link) and print suggested rules as YAML.

    \b
    linkage suggest sample_data/households.csv > rules.yaml
    """
    from linkage.io import read
    from linkage.settings import Rules
    from linkage.suggest import suggest_rules

    if len(inputs) > 2:
        raise click.UsageError("give one table to deduplicate, or two to link")
    suggestion = suggest_rules([read(p, sep=sep, encoding=encoding) for p in inputs])
    Rules.from_dict(suggestion.rules, source="suggested rules")  # never print invalid rules
    click.echo(suggestion.to_yaml(), nl=False)


@click.command()
@click.argument("rules_path", metavar="FILE", type=click.Path(path_type=Path))
def validate(rules_path):
    """Check a rules FILE and print what it will do; exit 2 with the fix if it is invalid."""
    from linkage.settings import Rules

    rules = Rules.from_yaml(rules_path)
    click.echo(f"{rules_path}: valid")
    click.echo("\n".join(f"  {line}" for line in rules_lines(rules)))


def _settings(part, skip: tuple[str, ...] = ("type",)) -> str:
    """A part's every setting that is set, defaults too, as `key value, ...`."""
    from linkage._schema import explicit_defaults

    with explicit_defaults():
        data = part.to_dict()
    return ", ".join(f"{k} " + (f"[{', '.join(map(str, v))}]" if isinstance(v, list) else str(v))
                     for k, v in data.items() if k not in skip and v is not None)


def rules_lines(rules) -> list[str]:
    """What `linkage validate` says the rules will do, in the order a run does it."""
    from linkage.blocking import blocker_names
    from linkage.clustering import splits_non_matches
    from linkage.run.stages import stage_reasons

    lines = [f"id column: {rules.id_column or '(row numbers)'}"]
    for step in rules.normalize:
        options = _settings(step, skip=("type", "column"))
        lines.append(f"normalize {step.column} as {step.type}" + (f" ({options})" * bool(options)))
    if rules.url is not None:
        lines.append(f"url: records whose normalized `{rules.url.column}` is the same are "
                     "copies of one, linked before blocking")
    if rules.exact is not None:
        what = dict(stage_reasons(rules))["exact"].removesuffix(" (exact stage)")
        lines.append(f"exact: records with {what} are copies of one, linked before blocking")
    lines += [f"block {name}: {b.describe()}"
              for name, b in zip(blocker_names(rules.blocking), rules.blocking, strict=True)]
    if rules.semantic is not None:
        sem = rules.semantic
        where = "".join(f", where {c} in [{', '.join(map(str, v))}]"
                        for c, v in (sem.where or {}).items())
        lines.append(f"semantic: SemDeDup on {sem.column} with {sem.model}, epsilon "
                     f"{sem.epsilon:g} (duplicates above cosine {1 - sem.epsilon:g}), "
                     f"n_clusters {sem.n_clusters or 'auto (square root of the records)'}, "
                     f"seed {sem.seed}{where}")
    lines += [f"compare {c.output_name}: {c.kind} on {c.column} "
              f"(levels: {', '.join(c.level_labels)})" for c in rules.comparisons]
    lines.append(f"score: {rules.scoring.kind}, threshold {rules.scoring.threshold:g}")
    lines += [f"guard {g.kind}: {_settings(g)}" for g in rules.guards]
    lines.append("cluster: split clusters only weak links hold together" if rules.split_weak_links
                 else "cluster: connected components, kept whole (split_weak_links: false)")
    if splits_non_matches(rules, rules.scoring):
        lines.append("cluster: split clusters whose members score as non-matches, joining two "
                     "groups only where the pairs compared between them sum to a positive weight")
    lines.append(f"keep: {_settings(rules.keep).removeprefix('policy ')}")
    if rules.golden is not None:
        lines.append(f"golden: {_settings(rules.golden)}")
    group_by = getattr(rules, "group_by", None)  # per-group runs, where the rules have them
    if group_by:
        lines.append(f"group by: {group_by}")
    lines += [f"source column: {rules.source_column or '(none)'}",
              f"report columns: {', '.join(rules.report_columns) or '(none)'}",
              f"max removal rate: {rules.max_removal_rate:.0%}",
              f"limits: max_pairs {rules.max_pairs:,}, max_block_size {rules.max_block_size:,}"
              + (", one_to_one" if rules.one_to_one else "")
              + (" (threshold: a record's best candidate against its record prior)"
                 if rules.one_to_one and rules.one_to_one_threshold == "record_prior" else "")]
    return lines


COMMANDS = (suggest, validate)
