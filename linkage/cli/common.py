"""What every verb of the command line shares, declared once: the group that turns failures
into exit codes and messages, `--json`, the options several verbs take, holding `--out`
(`claim`), warnings on standard error, the suggested rules when `--rules` is left out, `--bands`,
and the help texts that several verbs show.

Exit codes: 0 success; 1 only from a gate (`linkage check`, `linkage drift --max-drop`), it
failed; 2 bad input, rules or environment (the user's or the machine's: the message names the
file, the key and the fix); 3 an unreliable model (`linkage check`: a diagnostic in summary.json
says so); 4 a bug in linkage. A reader that closes the pipe early (`| head`) ends the command
quietly with the code it would have had. Heavy imports stay inside functions, so that
`linkage --help` stays fast.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
import warnings
from pathlib import Path

import click

from linkage.errors import LinkageError, LinkageWarning

JSON_ERRORS = "linkage.json_errors"  # ctx.meta: the command was asked for JSON (`--json`)

GATE = "linkage.gate"  # a gate's exit code (`check`, `drift`), kept before it prints anything

EXAMPLES = """
\b
Examples:
  linkage dedupe sample_data/customers.csv --rules rules/customers.yaml --out out/customers
  linkage link sample_data/link_left.csv sample_data/link_right.csv --rules rules/link.yaml \\
      --out out/link
  linkage validate rules/customers.yaml
  linkage explain out/customers C-000123
"""


INPUT_PARAMS = ("input_path", "inputs", "left", "right", "new_input", "train_path")
_COMMAND = "linkage.command"  # ctx.meta: the verb and its arguments, for error messages


def _inputs(ctx: click.Context) -> list[str]:
    """The input files the verb was given (its arguments parsed again, nothing run)."""
    name, cmd, args = ctx.meta.get(_COMMAND, (None, None, None))
    if cmd is None:
        return []
    try:
        params = cmd.make_context(name, list(args), parent=ctx, resilient_parsing=True).params
    except Exception:  # the message goes without the names
        return []
    given = []
    for key in INPUT_PARAMS:
        value = params.get(key)
        given += [str(v) for v in (value if isinstance(value, tuple | list) else [value])
                  if v is not None]
    return given


class LinkageGroup(click.Group):
    """The verbs' group: turns every way a command can fail into its exit code and message
    (see the module docstring), under `--json` also as one JSON object on standard output."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name, cmd, rest = super().resolve_command(ctx, args)
        ctx.meta[_COMMAND] = (name, cmd, list(rest))
        return name, cmd, rest

    def invoke(self, ctx: click.Context):
        avoid_hugepage_stalls()
        prefer_jemalloc()
        if not _asks_for_chunks(ctx):
            keep_freed_memory()
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
        except MemoryError:  # Python's, or pyarrow's ArrowMemoryError ("malloc ... failed")
            inputs = ", ".join(_inputs(ctx))
            _error(ctx, (f"{inputs}: " if inputs else "") + OUT_OF_MEMORY, 2)
        except Exception:
            _internal_error(ctx)


def avoid_hugepage_stalls() -> bool:
    """Stop numpy from asking Linux for transparent huge pages on its large arrays, for this
    process and the processes it starts (Spark's workers), unless `NUMPY_MADVISE_HUGEPAGE` is
    already set (the user's choice stands). True where the setting changed.

    numpy marks every array of 4 MB or more `madvise(MADV_HUGEPAGE)`. Where the kernel's
    `transparent_hugepage/defrag` is `madvise` or `defer+madvise` (the usual default), a page
    fault in such memory while no free huge page is at hand stalls in synchronous reclaim and
    compaction instead of taking small pages (numpy/numpy#31590), and memory freed back to the
    system, or handed back to a virtual machine's host, is fragmented by the time a run asks
    for it again. A run allocates and frees many large arrays: 10M records on a quiet 2-core
    VM (bench/RESULTS_10M.md, alternated) took 150-155 s with numpy's default and 111-126 s
    without, system CPU 108-123 s against 69-86 s, the same peak memory and output bytes.
    Without the advice a kernel whose THP is `always` still gives huge pages where they are
    free, without the stall; where THP is `madvise`, the run takes small pages, a few seconds
    more of page faults at most. Only the command line does this: the library leaves an
    importer's numpy as it found it."""
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        return False
    os.environ["NUMPY_MADVISE_HUGEPAGE"] = "0"  # read by numpy when it is imported
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # already imported (`import linkage` imports it): tell it now
        try:
            from numpy._core import multiarray
        except ImportError:  # numpy < 2 keeps it at numpy.core
            multiarray = getattr(getattr(numpy, "core", None), "multiarray", None)
        setter = getattr(multiarray, "_set_madvise_hugepage", None)
        if setter is not None:
            setter(False)
    return True


def _asks_for_chunks(ctx: click.Context) -> bool:
    """The command line asks a run to hold less: records and pairs a chunk at a time
    (`--chunk-rows`, `LINKAGE_CHUNK_ROWS`)."""
    args = ctx.args  # the verb's own arguments, not yet parsed
    return bool(os.environ.get("LINKAGE_CHUNK_ROWS", "").strip()) or any(
        a == "--chunk-rows" or a.startswith("--chunk-rows=") for a in args)


def keep_freed_memory() -> bool:
    """glibc's malloc keeps the memory a run frees for its next arrays and hands it back as
    each stage starts (`linkage._malloc`): a run makes and drops arrays of one element per
    record or pair over and over, and glibc otherwise unmaps each on free and faults its pages
    in again on the next. 10M persons on a 2-core VM (bench/RESULTS_10M.md, alternated): 70-72
    s -> 63-67 s, system CPU 28 s -> 19-21 s, the same output bytes, the peak (normalize's)
    4,762-5,109 -> 5,064-5,210 MiB. Not where the command asks to work in chunks
    (`--chunk-rows`, `LINKAGE_CHUNK_ROWS`): that asks to hold less, and glibc's own way, which
    hands each freed array back at once, holds less (a 20,000-record wide table in chunks of
    5,000: 355-363 MiB against 392 kept). The user's own `MALLOC_*_` or `glibc.malloc` settings
    stand. Only the command line does this: the library leaves an importer's malloc as it found
    it. True where the settings changed."""
    from linkage._malloc import keep_freed_memory as keep

    return keep()


def prefer_jemalloc() -> bool:
    """Arrow's jemalloc pool for this process's Arrow memory (pyarrow's default pool), where
    pyarrow has it and `ARROW_DEFAULT_MEMORY_POOL` does not name another (the user's choice
    stands). True where the pool changed.

    pyarrow's default pool is mimalloc (in the wheels this project installs). A run makes and
    drops many large Arrow arrays (strings read, normalized, taken for the outputs); jemalloc,
    as Arrow configures it, keeps freed memory for about a second before handing it back, and
    held less at the peak in our runs: 10M records on a quiet 2-core VM (bench/RESULTS_10M.md,
    alternated) peaked at 5.6 GiB against 5.9-6.0 with mimalloc, in 124-130 s against 130-139
    (system CPU 50-51 s against 60-66), the same output bytes; 3M at 2.1-2.2 GiB against 2.3.
    Only the command line does this: the library leaves an importer's pool as it found it.
    Arrays made before the switch stay in the pool that made them."""
    if "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
        return False
    try:
        import pyarrow as pa

        pool = pa.jemalloc_memory_pool()
    except (ImportError, NotImplementedError, AttributeError):  # a build without jemalloc
        return False
    if pa.default_memory_pool().backend_name == pool.backend_name:
        return False
    pa.set_memory_pool(pool)
    return True


OUT_OF_MEMORY = (
    "this machine ran out of memory (MemoryError) during the run: the table, or its "
    "candidate pairs, did not fit. Process it in parts with "
    "--chunk-rows 1000000 (streams records and pairs through Parquet files), make the "
    "blocking keys narrower or lower `max_pairs` in the rules (fewer candidate pairs), run it "
    "on Spark (--engine spark), or free memory for it.")

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


def _remember_json(ctx: click.Context, _param, value: bool) -> bool:
    if value:
        ctx.meta[JSON_ERRORS] = True  # meta is shared by the whole context chain
    return value


def json_option(function):
    """`--json`: the result as one JSON object on standard output, and errors too (an object
    with `error`, `exit_code` and `kind`), so that a pipeline parses one format whatever
    happens. Eager, so that it is known before the other options are checked."""
    return click.option("--json", "as_json", is_flag=True, is_eager=True,
                        callback=_remember_json,
                        help="Print the result as one JSON object (errors too).")(function)


# Options that several verbs take, each declared once; `help` is the verb's own text where it
# says more (the help texts are part of the command line's contract).

def rules_option(help: str = "Rules YAML file; suggested rules when left out."):
    """`--rules` (as `rules_path`): a rules file, or None for the suggested rules."""
    return click.option("--rules", "rules_path", default=None,
                        type=click.Path(dir_okay=False, path_type=Path), help=help)


def out_folder_option(help: str | None = None):
    """`--out`, required: the folder a verb writes."""
    return click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
                        help=help)


def id_column_option(help: str | None = None):
    return click.option("--id-column", default=None, help=help)


def sep_option(help: str | None = "CSV separator; sniffed when not given."):
    return click.option("--sep", default=None, help=help)


def encoding_option(help: str | None = "CSV text encoding."):
    return click.option("--encoding", default="utf-8", show_default=True, help=help)


def seed_option(function):
    return click.option("--seed", default=0, show_default=True, type=int)(function)


def parse_bands(text: str | None) -> list[float] | None:
    """`--bands a,b,c` as numbers; None when not given (the verb's default bands). Text that
    names no number, or something else than numbers, is a usage error (exit 2)."""
    if text is None:
        return None
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"--bands takes numbers separated by commas, e.g. "
                                 f"0.6,0.7,0.8,0.9. Got {text!r}.") from None
    if not values:
        raise click.BadParameter("--bands needs at least one number, e.g. 0.6,0.7,0.8,0.9.")
    return values


def warnings_to_stderr() -> None:
    """Show each `LinkageWarning` as `warning: ...` on standard error, every time it is given."""
    def show(message, category, filename, lineno, file=None, line=None):
        click.secho(f"warning: {message}", fg="yellow", err=True)

    warnings.showwarning = show
    warnings.simplefilter("always", LinkageWarning)


def suggested_rules(paths, sep, encoding, progress: bool | None = None):
    """The rules `linkage suggest` would write for the tables at `paths`, for a verb given no
    `--rules`; says so on standard error."""
    from linkage.io import read
    from linkage.progress import stage_line
    from linkage.suggest import suggest_rules

    click.echo("no --rules given: using suggested rules (see rules.yaml in --out)", err=True)
    with stage_line("suggesting rules (profiling the columns, measuring keys)", progress):
        frames = [read(p, sep=sep, encoding=encoding) for p in paths]
        return suggest_rules(frames).as_rules()


def labels_loop(run: str, truth: str) -> str:
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


LABELS_LOOP = labels_loop("dedupe sample_data/households.csv", "sample_data/households_truth.csv")

