"""The `linkage` command line.

Exit codes: 0 success; 1 only from `linkage check`, its gate failed; 2 bad input, rules or
environment (the user's or the machine's: the message names the file, the key and the fix);
3 an unreliable model (`linkage check`: a diagnostic in summary.json says so); 4 a bug in
linkage. A reader that closes the pipe early (`| head`) ends the command quietly with the
code it would have had.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
import warnings
from pathlib import Path

import click

from linkage.cli.common import JSON_ERRORS, json_option
from linkage.errors import LinkageError, LinkageWarning

GATE = "linkage.gate"  # `check`'s exit code, kept in the context before it prints anything

EXAMPLES = """
\b
Examples:
  linkage dedupe sample_data/customers.csv --rules rules/customers.yaml --out out/customers
  linkage link sample_data/link_left.csv sample_data/link_right.csv --rules rules/link.yaml \\
      --out out/link
  linkage validate rules/customers.yaml
  linkage explain out/customers C-000123
"""


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            done = super().invoke(ctx)
            sys.stdout.flush()  # a closed pipe fails here, not at exit
            return done
        except LinkageError as err:
            _error(ctx, str(err), 2)
        except click.ClickException as err:  # a usage error: click says it, exit 2
            _json_error(ctx, err.format_message(), err.exit_code)
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            _quiet_stdout()  # Python's documented way: nothing more goes to the closed pipe
            ctx.exit(ctx.meta.get(GATE, 0))
        except OSError as err:
            from linkage.io import write_fault

            message = write_fault(err, _stdout_or(err, "the output"))
            if message is None:
                _internal_error(ctx)
            if err.filename is not None:  # a file read or written outside `--out`
                message = (f"{err.filename}: {err.strerror.lower()}. Check that path: its "
                           "permissions, and the space left where it is.")
            _error(ctx, message, 2)
        except Exception:
            _internal_error(ctx)


# What each exit code means (`--json` errors name it as `kind`); 0 and 1 are results, not errors.
ERROR_KINDS = {2: "bad_input", 3: "unreliable_model", 4: "internal_error"}


def _error(ctx: click.Context, message: str, code: int):
    """Say what went wrong on standard error and exit with `code`; under `--json` also as one
    JSON object on standard output (`error`, `exit_code`, `kind`), the format the caller
    parses."""
    click.secho(f"error: {message}", fg="red", err=True)
    _json_error(ctx, message, code)
    ctx.exit(code)


def _json_error(ctx: click.Context, message: str, code: int) -> None:
    if not ctx.meta.get(JSON_ERRORS):
        return
    import json

    with contextlib.suppress(OSError):
        click.echo(json.dumps({"error": message, "exit_code": code,
                               "kind": ERROR_KINDS.get(code, "error")},
                              ensure_ascii=False))
        sys.stdout.flush()


def _internal_error(ctx: click.Context):
    traceback.print_exc()
    message = ("internal error: this is a bug in linkage, not in your data. Please report it "
               "with the traceback above.")
    click.secho(message, fg="red", err=True)
    _json_error(ctx, message.removeprefix("internal error: "), 4)
    ctx.exit(4)


def _quiet_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _stdout_or(err: OSError, other: str) -> str:
    """"standard output" when `err` came from printing (a full disk behind `> file`), whose
    unwritten rest is then dropped so that exiting does not fail again; else `other`."""
    if not any(frame.f_code is click.utils.echo.__code__
               for frame, _ in traceback.walk_tb(err.__traceback__)):
        return other
    _quiet_stdout()
    return "standard output"


def claim(out: Path | None, *inputs):
    """Hold `--out` for the whole command, checked and locked before any work (nothing
    without an `--out`); `inputs` are the files it reads, never inside `--out`."""
    if out is None:
        return contextlib.nullcontext()
    from linkage.io import claiming

    return claiming(out, [p for p in inputs if isinstance(p, str | os.PathLike)])


@click.group(cls=_Group, epilog=EXAMPLES)
@click.version_option(package_name="linkage")
def main() -> None:
    """Find records that describe the same thing: deduplicate one table or link two.

    Each run reads the rules (normalize, block, compare, score, keep), and writes to --out:
    clusters.parquet (every input record, with what happened to it and why), pairs.parquet
    (every scored candidate pair), deduplicated.parquet or links.parquet, and summary.json.
    """


def _common(func):
    options = [
        click.option("--rules", "rules_path", default=None,
                     type=click.Path(dir_okay=False, path_type=Path),
                     help="Rules YAML file (see rules/customers.yaml). Without it, the rules "
                          "that `linkage suggest` would write are used and saved in --out."),
        click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
                     help="Output folder: new, empty or an earlier run's; replaced only when "
                          "the run succeeds."),
        click.option("--id-column", default=None,
                     help="Column holding record ids (overrides `id_column` in the rules). "
                          "Without one, row numbers become ids in column `row_id`."),
        click.option("--sep", default=None,
                     help="CSV separator; sniffed from the file when not given."),
        click.option("--encoding", default="utf-8", show_default=True,
                     help="CSV text encoding, e.g. cp949 for Korean Windows exports."),
        click.option("--progress/--no-progress", default=None,
                     help="Progress bars (default: only on a terminal)."),
        click.option("--model", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="model.json of an earlier run: score with its trained weights "
                          "instead of training again."),
        click.option("--engine", type=click.Choice(["local", "spark"]), default="local",
                     show_default=True,
                     help="local: this machine (numpy, pandas, RapidFuzz). spark: the same rules "
                          "on Spark (pyspark; see --spark-master)."),
        click.option("--spark-master", default="local[2]", show_default=True,
                     help="Spark master URL for --engine spark, e.g. spark://host:7077."),
        click.option("--chunk-rows", type=click.IntRange(min=1), default=None,
                     help="Process records and pairs this many at a time, streaming pairs to "
                          "Parquet (out of core). Default: by itself above 2M records or 10M "
                          "candidate pairs."),
        click.option("--resume", is_flag=True,
                     help="Keep stage checkpoints in OUT.checkpoint/ and start after the last "
                          "finished stage of an interrupted run of the same rules and inputs; "
                          "removed when the run succeeds."),
        click.option("--labels", "labels_paths", multiple=True,
                     type=click.Path(dir_okay=False, path_type=Path),
                     help="Labelled pairs to learn from (CSV: id_l, id_r, label 1 or 0, as "
                          "`linkage sample` writes it); repeat for several files. When --out "
                          "holds an earlier run made with labels, its labels.csv is read first "
                          "and these add to it. See LABELS below."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _checkpoint(out: Path, resume: bool) -> Path | None:
    return out.with_name(out.name + ".checkpoint") if resume else None


def _labels_loop(run: str, truth: str) -> str:
    """The active-learning loop as a help epilog, on a shipped sample (`run`: the command and
    its tables) whose truth file can stand in for the person who labels."""
    return f"""
\b
LABELS (active learning: a few labels fix what the model cannot learn alone):
  linkage {run} --out out/run
  linkage sample out/run --active --n 25 --out todo.csv   # or: linkage review out/run --active
  # fill the `label` column of todo.csv: 1 match, 0 non-match (blank: unsure); on the
  # sample its truth can: python -m linkage.synth answer todo.csv --truth {truth}
  linkage {run} --labels todo.csv --out out/run
  linkage sample out/run --active --n 25 --out todo2.csv  # new pairs only
  linkage {run} --labels todo2.csv --out out/run  # adds to out/run/labels.csv
\b
Each rerun into the same --out adds its labels to the ones that run used (kept in
labels.csv there). The labels pin Fellegi-Sunter's m and prior (semi-supervised EM); the
supervised scorer is trained on them too and used instead where it misclassifies fewer of
them in cross-validation. The threshold comes from the labels; summary.json says how they
were used (`labels`).
"""


LABELS_LOOP = _labels_loop("dedupe sample_data/households.csv", "sample_data/households_truth.csv")


def _labels(paths: tuple[Path, ...], out: Path) -> list[Path] | None:
    """The labels files of a run: the earlier run's in --out first (when it kept some), then
    those given; None without --labels."""
    if not paths:
        return None
    from linkage.active import LABELS_FILE

    earlier = out / LABELS_FILE
    if earlier.is_file():
        click.echo(f"--labels: adding to the {LABELS_FILE} of the run in {out}/", err=True)
        return [earlier, *paths]
    return list(paths)


def _finish(result, out: Path, checkpoint: Path | None = None,
            progress: bool | None = None) -> None:
    from linkage.progress import stage_line

    with stage_line("writing the outputs", progress):
        result.write(out)
    if checkpoint is not None:
        import shutil

        shutil.rmtree(checkpoint, ignore_errors=True)
    click.echo(result.format_summary(out))
    used = result.summary().get("labels")
    if used:
        click.echo(f"  labels            {used['pairs']:,} ({used['matches']:,} matches, "
                   f"{used['non_matches']:,} non-matches): {used['mode']}, threshold "
                   f"{used['threshold']:.4g} from {used['threshold_source']}")
    click.echo(f"  wrote {out}/")


def _warnings_to_stderr() -> None:
    def show(message, category, filename, lineno, file=None, line=None):
        click.secho(f"warning: {message}", fg="yellow", err=True)

    warnings.showwarning = show
    warnings.simplefilter("always", LinkageWarning)


@main.command(epilog=LABELS_LOOP + EXAMPLES)
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@_common
def dedupe(input_path, rules_path, out, id_column, sep, encoding, progress, model, engine,
           spark_master, chunk_rows, resume, labels_paths):
    """Find duplicate records inside INPUT (CSV or Parquet)."""
    from linkage.api import dedupe as run

    _warnings_to_stderr()
    with claim(out, input_path, rules_path, model, *labels_paths):
        labels = _labels(labels_paths, out)
        rules = rules_path or _suggested([input_path], sep, encoding, progress)
        result = run(input_path, rules, id_column=id_column, sep=sep, encoding=encoding,
                     progress=progress, model=model, checkpoint=_checkpoint(out, resume),
                     engine=engine, spark_master=spark_master, chunk_rows=chunk_rows,
                     labels=labels)
        _finish(result, out, _checkpoint(out, resume), progress)


@main.command(epilog=_labels_loop("link sample_data/link_left.csv sample_data/link_right.csv "
                                  "--rules rules/link.yaml", "sample_data/link_truth.csv")
              + EXAMPLES)
@click.argument("left", type=click.Path(path_type=Path))
@click.argument("right", type=click.Path(path_type=Path))
@_common
def link(left, right, rules_path, out, id_column, sep, encoding, progress, model, engine,
         spark_master, chunk_rows, resume, labels_paths):
    """Link the records of LEFT and RIGHT that describe the same thing."""
    from linkage.api import link as run

    _warnings_to_stderr()
    with claim(out, left, right, rules_path, model, *labels_paths):
        labels = _labels(labels_paths, out)
        rules = rules_path or _suggested([left, right], sep, encoding, progress)
        result = run(left, right, rules, id_column=id_column, sep=sep, encoding=encoding,
                     progress=progress, model=model, checkpoint=_checkpoint(out, resume),
                     engine=engine, spark_master=spark_master, chunk_rows=chunk_rows,
                     labels=labels)
        _finish(result, out, _checkpoint(out, resume), progress)


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("record_id", required=False)
@click.option("--column", default=None, help="Find the records by this column's value instead.")
@click.option("--value", default=None, help="The value to look for in --column.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the new run; the original run is never changed.")
@click.option("--only-record", is_flag=True,
              help="Remove only the matching record(s), not their whole clusters; a new "
                   "representative is chosen by the keeper policy where needed.")
def forget(run_dir, record_id, column, value, out, only_record):
    """Remove every copy of a person from a run: RECORD_ID's whole cluster (or the records
    whose --column equals --value), written as a new run in --out.

    \b
    linkage forget out/customers C-000019 --out out/customers-forgotten
    linkage forget out/customers --column email --value kim@example.kr --out out/f
    """
    from linkage.forget import forget as run_forget

    if (record_id is None) == (column is None):
        raise click.UsageError("give a RECORD_ID, or --column and --value (not both)")
    if column is not None and value is None:
        raise click.UsageError("--column needs --value")
    with claim(out, run_dir):
        plan = run_forget(run_dir, out, record_id, column=column, value=value,
                          only_record=only_record)
    click.echo(plan.describe())
    click.echo(f"  wrote {out}/ ({run_dir}/ is unchanged)")


@main.command()
@click.argument("train_path", metavar="TRAIN", type=click.Path(path_type=Path))
@click.option("--eval", "eval_path", required=True, type=click.Path(path_type=Path),
              help="The evaluation set whose items must not leak into TRAIN.")
@click.option("--text-column", default="text", show_default=True)
@click.option("--ngram", default=13, show_default=True, type=int,
              help="Words in a shared passage that counts as contamination.")
@click.option("--char-ngram", default=None, type=int,
              help="Characters per n-gram for Hangul/CJK text (default 3 x --ngram).")
@click.option("--train-id", default=None, help="Id column of TRAIN (row numbers otherwise).")
@click.option("--eval-id", default=None, help="Id column of --eval (row numbers otherwise).")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--sep", default=None, help="CSV separator; sniffed when not given.")
@click.option("--encoding", default="utf-8", show_default=True)
def decontaminate(train_path, eval_path, text_column, ngram, char_ngram, train_id, eval_id,
                  out, sep, encoding):
    """Flag TRAIN records that share a --ngram-word passage (or their whole normalized text)
    with an item of --eval, naming the eval item; writes contamination.parquet."""
    from linkage.io import read
    from linkage.text.contamination import contamination_summary, write_contamination_report
    from linkage.text.contamination import decontaminate as run

    with claim(out, train_path, eval_path):
        train = read(train_path, sep=sep, encoding=encoding)
        evaluation = read(eval_path, sep=sep, encoding=encoding)
        result = run(train, evaluation, text_column=text_column, ngram=ngram,
                     char_ngram=char_ngram, train_id=train_id, eval_id=eval_id)
        write_contamination_report(result, out)
    s = contamination_summary(result)
    click.echo(f"{s['contaminated']:,} of {s['train_records']:,} train records contaminated "
               f"({s['contamination_rate']:.2%}; {s['exact_matches']:,} exact copies)")
    click.echo(f"  wrote {out}/")


@main.command("lsh-params")
@click.option("--threshold", required=True, type=float, help="Jaccard similarity to catch.")
@click.option("--num-perm", default=128, show_default=True, type=int)
@click.option("--bands", default=None, type=int, help="Override the derived bands...")
@click.option("--rows", default=None, type=int, help="...and rows per band.")
def lsh_params(threshold, num_perm, bands, rows):
    """Print the LSH bands and rows for a Jaccard threshold, the threshold they really give,
    (1/b)^(1/r), and the S-curve P(candidate | J) = 1 - (1 - J^r)^b for J from 0.5 to 0.95."""
    from linkage.errors import RulesError
    from linkage.text.lsh import format_lsh_params

    if not 0 < threshold < 1:
        raise RulesError(f"--threshold must be in (0, 1). Got {threshold!r} instead.")
    click.echo(format_lsh_params(threshold, num_perm, bands, rows))


@main.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("--rules", "rules_path", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Rules YAML file; suggested rules when left out.")
@click.option("--max-duplicate-rate", required=True, type=float,
              help="Fail when more than this share of the records are duplicates (0.01 = 1%).")
@click.option("--id-column", default=None)
@click.option("--sep", default=None)
@click.option("--encoding", default="utf-8", show_default=True)
@json_option
def check(input_path, rules_path, max_duplicate_rate, id_column, sep, encoding, as_json):
    """A data-quality gate for ETL: exit 0 when INPUT's duplicate rate is at most
    --max-duplicate-rate, 1 when it is above, 2 on bad input or rules (the message says what
    to fix), 3 when the model is unreliable (a diagnostic, e.g. one giant cluster, says the
    duplicate rate cannot be trusted; it is printed with what to do), 4 on a bug in linkage:
    1 always means the gate failed.

    \b
    linkage check sample_data/customers.csv --rules rules/customers.yaml \\
        --max-duplicate-rate 0.01 --json
    """
    import json as json_module

    from linkage.gate import check as gate
    from linkage.gate import check_rate

    check_rate(max_duplicate_rate)
    if rules_path is None:  # suggested with the command's own notice
        rules_path = _suggested([input_path], sep, encoding, False)
    verdict = gate(input_path, rules_path, max_duplicate_rate=max_duplicate_rate,
                   id_column=id_column, sep=sep, encoding=encoding)
    code, report = verdict.code, {**verdict.report, "input": str(input_path)}
    click.get_current_context().meta[GATE] = code  # also when stdout is closed
    if as_json:
        click.echo(json_module.dumps(report, ensure_ascii=False))
    else:
        click.echo(verdict.format())
    sys.stdout.flush()
    sys.exit(code)


def _bands(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"--bands takes numbers separated by commas, e.g. "
                                 f"0.6,0.7,0.8,0.9. Got {text!r}.") from None


@main.command(epilog=LABELS_LOOP)
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--active", is_flag=True,
              help="Pick the pairs whose labels would change the model most (uncertain pairs, "
                   "spread over level patterns and score bands), leaving out the pairs the "
                   "run was made with (its labels.csv), instead of sampling per band.")
@click.option("--n", "n_pairs", default=25, show_default=True, type=click.IntRange(min=1),
              help="With --active: how many pairs to pick.")
@click.option("--bands", default="0.6,0.7,0.8,0.9", show_default=True,
              help="Band edges: match probabilities (or match weights with --on weight).")
@click.option("--per-band", default=100, show_default=True, type=int)
@click.option("--on", type=click.Choice(["probability", "weight"]), default="probability",
              show_default=True)
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="CSV to write: the pairs with both records side by side and a `label` column.")
def sample(run_dir, active, n_pairs, bands, per_band, on, seed, out_path):
    """Sample scored pairs per score band for a person to label (1 match, 0 non-match), or
    with --active the --n pairs a label would teach the model most (then rerun with --labels).
    """
    if active:
        from linkage.active import active_pairs

        table = active_pairs(run_dir, n_pairs, seed=seed)
        column = "picked"
    else:
        from linkage.calibrate import sample_pairs

        table = sample_pairs(run_dir, _bands(bands), per_band, on=on, seed=seed)
        column = "band"
    table.to_csv(out_path, index=False)
    counts = table[column].str.split(":").str[0].value_counts(sort=False) if active else (
        table[column].value_counts(sort=False))
    click.echo(f"wrote {len(table):,} pairs to label to {out_path} ("
               + ", ".join(f"{band}: {n}" for band, n in counts.items()) + ")")


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("labels_path", metavar="LABELS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--bands", default="0.6,0.7,0.8,0.9", show_default=True)
@click.option("--on", type=click.Choice(["probability", "weight"]), default="probability",
              show_default=True)
@click.option("--target", default=0.95, show_default=True, type=float,
              help="The precision the recommended threshold must reach in every band above it.")
@click.option("--write-rules", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the run's rules with the recommended threshold to this file.")
def calibrate(run_dir, labels_path, bands, on, target, write_rules):
    """Precision per band (95% Wilson interval) from labelled pairs, and the threshold that
    reaches --target precision."""
    import math

    import pandas as pd

    from linkage.calibrate import calibrate as measure
    from linkage.settings import Rules

    labels = pd.read_csv(labels_path, dtype={"label": str}, keep_default_na=False)
    table, recommended = measure(labels, _bands(bands), on=on, target=target)
    for _, row in table.iterrows():
        precision = "   n/a" if row["labelled"] == 0 else f"{row['precision']:.3f}"
        click.echo(f"  [{row['band_from']:g}, {row['band_to']:g}): {int(row['labelled'])} "
                   f"labelled, precision {precision} "
                   f"(95% CI {row['ci_low']:.3f}-{row['ci_high']:.3f})")
    if recommended is None:
        click.echo(f"no band reaches precision {target:g}: keep the threshold, or label more")
        return
    threshold = recommended
    if on == "probability":  # the scorers' thresholds are match weights (log2 odds)
        p = min(max(recommended, 1e-9), 1 - 1e-9)
        threshold = math.log2(p / (1 - p))
    click.echo(f"recommended threshold: {recommended:g} ({on}) = match weight {threshold:.3f}")
    if write_rules is not None:
        rules = Rules.from_yaml(Path(run_dir) / "rules.yaml")
        data = rules.to_dict()
        data.setdefault("scoring", {})["threshold"] = round(threshold, 4)
        Rules.from_dict(data).to_yaml(write_rules)
        click.echo(f"  wrote {write_rules}")


def _suggested(paths, sep, encoding, progress: bool | None = None):
    from linkage.io import read
    from linkage.progress import stage_line
    from linkage.settings import Rules
    from linkage.suggest import suggest_rules

    click.echo("no --rules given: using suggested rules (see rules.yaml in --out)", err=True)
    with stage_line("suggesting rules (profiling the columns, measuring keys)", progress):
        frames = [read(p, sep=sep, encoding=encoding) for p in paths]
        return Rules.from_dict(suggest_rules(frames).rules, source="suggested rules")


@main.command()
@click.argument("inputs", metavar="INPUT [RIGHT]", nargs=-1, required=True,
                type=click.Path(path_type=Path))
@click.option("--sep", default=None, help="CSV separator; sniffed when not given.")
@click.option("--encoding", default="utf-8", show_default=True, help="CSV text encoding.")
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


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("record_id")
@click.argument("other_id", required=False)
def explain(run_dir, record_id, other_id):
    """Why RECORD_ID is in its cluster, or why it and OTHER_ID were or were not linked.

    RUN_DIR is the --out folder of a dedupe or link run. Each pair is shown with every
    comparison's level, similarity and contribution to the match weight.
    """
    from linkage.explain import explain_run

    click.echo(explain_run(run_dir, record_id, other_id))


@main.command()
@click.argument("rules_path", metavar="FILE", type=click.Path(path_type=Path))
def validate(rules_path):
    """Check a rules FILE and print what it will do; exit 2 with the fix if it is invalid."""
    from linkage.settings import Rules

    rules = Rules.from_yaml(rules_path)
    click.echo(f"{rules_path}: valid")
    click.echo("\n".join(f"  {line}" for line in _rules_lines(rules)))


def _settings(part, skip: tuple[str, ...] = ("type",)) -> str:
    """A part's every setting that is set, defaults too, as `key value, ...`."""
    from linkage._schema import explicit_defaults

    with explicit_defaults():
        data = part.to_dict()
    return ", ".join(f"{k} " + (f"[{', '.join(map(str, v))}]" if isinstance(v, list) else str(v))
                     for k, v in data.items() if k not in skip and v is not None)


def _rules_lines(rules) -> list[str]:
    """What `linkage validate` says the rules will do, in the order a run does it."""
    from linkage.blocking import blocker_names
    from linkage.clustering import splits_non_matches
    from linkage.pipeline import stage_reasons

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


def _register() -> None:
    from linkage.cli import gate, labels, measure, recall, run, show, text

    for module in (gate, labels, measure, recall, run, show, text):
        main.add_command(module.command)


_register()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
