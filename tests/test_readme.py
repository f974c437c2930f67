"""Every example in README.md runs as written, on the files the repository ships (issue 16).

Each ```bash and ```python block is run from a temporary copy of `sample_data/` and `rules/`
(never the repository's own `out/`), its lines in order, with `linkage` and `python` on the PATH
being this checkout's `python -m linkage` and interpreter. What a fence's info string may say:

- `name=NAME`: other blocks may go on from this one;
- `after=NAME`: runs in a copy of the folder that the earlier block NAME left (its outputs);
- `no-run: REASON`: not run, and says why (a package install, Spark); kept to a few.

In a bash block every command must exit 0, unless its comment says `exits N`; a command whose
comment says `serves until Ctrl-C` (`linkage review`) is started, must serve its page, and is
then stopped with Ctrl-C (SIGINT). The files a block promises (`--out X`, `--write-rules X`,
`> X`; in Python `.write("X")`, `.report("X")`) must exist once it has run. Independent blocks
run at once, each a process of its own, as `run_clis` runs CLI calls.

The help texts (`linkage --help`, `linkage CMD --help`) are checked too: every file their
examples read is shipped, or written by an earlier example of the same text.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import _cli_server

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SHIPPED = ("sample_data", "rules")  # what a block's folder starts with
MAX_NO_RUN = 4  # blocks that may be left out, each with its reason (recordlinkage: pandas<3)
WORKERS = 4  # blocks at once: each is a chain of processes, mostly CPU-bound
FILE = re.compile(r"[\w./-]+\.(?:csv|parquet|ya?ml)\b")
URL = re.compile(r"http://127\.0\.0\.1:\d+/")

# `serve-then-stop CMD...`: start CMD, wait for the page it serves, fetch it, then Ctrl-C.
SERVE_THEN_STOP = r'''
import os, re, signal, subprocess, sys, urllib.request

env = {**os.environ, "PYTHONUNBUFFERED": "1"}
# SIGINT as in a terminal, even where the suite runs as a background job (which ignores it)
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        text=True, env=env,
                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
url = None
for line in proc.stdout:
    sys.stdout.write(line)
    found = re.search(r"http://127\.0\.0\.1:\d+/", line)
    if found:
        url = found.group(0)
        break
if url is None:
    sys.exit(proc.wait() or 97)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
with opener.open(url, timeout=60) as page:
    served = page.status == 200 and b"<html" in page.read().lower()
proc.send_signal(signal.SIGINT)
sys.stdout.write(proc.communicate(timeout=60)[0])
print(f"serve-then-stop: {url} {'served' if served else 'did not serve'} its page; "
      f"exit {proc.returncode} after Ctrl-C")
sys.exit(proc.returncode if served else 98)
'''


@dataclass
class Block:
    lang: str
    line: int  # of the opening fence, 1-based
    code: str
    name: str | None = None
    after: str | None = None
    no_run: str | None = None  # the reason
    attrs: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"README.md:{self.line}"


def parse(text: str) -> list[Block]:
    """The ```bash and ```python blocks of a Markdown text, with their info strings read."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = re.match(r"^```(\w+)(.*)$", lines[i])
        if not opening:
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        lang, info = opening.group(1), opening.group(2).strip()
        if lang not in ("bash", "python"):
            continue
        block = Block(lang, start + 1, "\n".join(body) + "\n")
        if info.startswith("no-run"):
            block.no_run = info.removeprefix("no-run").lstrip(":").strip()
        elif info:
            for word in info.split():
                key, _, value = word.partition("=")
                block.attrs[key] = value
            block.name, block.after = block.attrs.get("name"), block.attrs.get("after")
        blocks.append(block)
    return blocks


def commands(code: str) -> list[str]:
    """A bash block's commands: continued lines joined, comment-only and blank lines left out."""
    out, pending = [], ""
    for raw in code.splitlines():
        pending += raw
        if pending.rstrip().endswith("\\"):
            pending = pending.rstrip()[:-1] + " "
            continue
        if pending.strip() and not pending.lstrip().startswith("#"):
            out.append(pending)
        pending = ""
    return out


def _split_comment(command: str) -> tuple[str, str]:
    code, _, comment = command.partition(" #")
    return code, comment


def expected_exit(command: str) -> int:
    found = re.search(r"\bexits (\d)\b", _split_comment(command)[1])
    return int(found.group(1)) if found else 0


def serves(command: str) -> bool:
    return "serves until Ctrl-C" in _split_comment(command)[1]


def outputs(command: str) -> list[str]:
    """The files or folders a command line says it writes."""
    code = _split_comment(command)[0]
    found = re.findall(r"(?:--out|--write-rules)\s+(\S+)|(?<![\d&])>\s*([^\s&]\S*)", code)
    return [option or redirect for option, redirect in found]


def promised(block: Block) -> list[str]:
    if block.lang == "python":
        return re.findall(r"\.(?:write|report)\(\s*\"([^\"]+)\"", block.code)
    return [path for command in commands(block.code) for path in outputs(command)]


def bash_script(block: Block) -> str:
    """The block as a script that stops at the first command whose exit code is not the one
    its comment documents (0 unless it says `exits N`)."""
    lines = ["set -u"]
    for command in commands(block.code):
        want = expected_exit(command)
        lines.append(("serve-then-stop " if serves(command) else "") + command)
        text = command.strip().replace("'", "'\\''")
        lines.append(f"_rc=$?; if [ $_rc -ne {want} ]; then echo 'README.md:{block.line}: "
                     f"`{text}` exited '$_rc', expected {want}' >&2; exit 1; fi")
    return "\n".join(lines) + "\n"


def _tools(folder: Path) -> Path:
    """`linkage`, `python` and `serve-then-stop` on a PATH of their own: this checkout's."""
    folder.mkdir(parents=True, exist_ok=True)
    server = _cli_server()  # a warm process to fork each `linkage` from (tests/conftest.py)
    linkage = (f'#!/bin/sh\nexec "{sys.executable}" -S "{ROOT / "tests" / "_cli_server.py"}" '
               f'--client "{server}" "$@"\n') if server else \
        f'#!/bin/sh\nexec "{sys.executable}" -m linkage "$@"\n'
    scripts = {
        "linkage": linkage,
        "python": f'#!/bin/sh\nexec "{sys.executable}" "$@"\n',
        "serve-then-stop": f"#!{sys.executable}\n{SERVE_THEN_STOP}",
    }
    for name, text in scripts.items():
        (folder / name).write_text(text, encoding="utf-8")
        (folder / name).chmod(0o755)
    return folder


@dataclass
class Outcome:
    block: Block
    folder: Path | None
    returncode: int | None
    output: str
    seconds: float = 0.0


def _run(block: Block, folder: Path, env: dict) -> Outcome:
    if block.lang == "bash":
        argv = ["bash", "-c", bash_script(block)]
    else:
        argv = [sys.executable, "-c", block.code]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=600)
    return Outcome(block, folder, done.returncode, done.stdout + done.stderr,
                   time.perf_counter() - start)


@pytest.fixture(scope="module")
def blocks() -> list[Block]:
    return parse(README.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def outcomes(blocks, tmp_path_factory) -> dict[int, Outcome]:
    """Every runnable block run once: the chains (a block and those `after` it) at once, the
    blocks of a chain one after the other, each in a copy of its predecessor's folder."""
    base = tmp_path_factory.mktemp("readme")
    tools = _tools(base / "bin")
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                       os.environ.get("PYTHONPATH")])),
           "PYTHONIOENCODING": "utf-8"}
    runnable = [b for b in blocks if b.no_run is None]
    after = {}
    for b in runnable:
        after.setdefault(b.after, []).append(b)

    def chain(block: Block, start: Path | None) -> list[Outcome]:
        folder = base / f"block{block.line}"
        if start is None:
            folder.mkdir()
            for name in SHIPPED:
                shutil.copytree(ROOT / name, folder / name)
        else:
            shutil.copytree(start, folder)
        done = [_run(block, folder, env)]
        for child in after.get(block.name, []) if block.name else []:
            if done[0].returncode == 0:
                done += chain(child, folder)
            else:
                done.append(Outcome(child, None, None, f"not run: {block.id} failed"))
        return done

    def cost(block: Block) -> int:  # commands in the block and in those after it
        size = len(commands(block.code)) if block.lang == "bash" else 2
        return size + sum(cost(c) for c in after.get(block.name, [])) if block.name else size

    roots = sorted(after.get(None, []), key=cost, reverse=True)  # the longest chains first
    with ThreadPoolExecutor(max_workers=min(len(roots), WORKERS)) as pool:
        chains = list(pool.map(lambda b: chain(b, None), roots))
    return {o.block.line: o for done in chains for o in done}


def _runnable() -> list[Block]:
    return [b for b in parse(README.read_text(encoding="utf-8")) if b.no_run is None]


@pytest.mark.parametrize("block", _runnable(), ids=lambda b: b.id)
def test_readme_block_runs_as_written(block: Block, outcomes) -> None:
    outcome = outcomes.get(block.line)
    assert outcome is not None, f"{block.id} was not run: does its after= name an earlier block?"
    assert outcome.returncode == 0, f"{block.id} failed:\n{outcome.output[-6000:]}"
    for path in promised(block):
        assert (outcome.folder / path).exists(), f"{block.id} did not write {path}"


def test_blocks_are_parsed_and_their_order_is_true(blocks) -> None:
    """The blocks the test runs are the README's (a fence it cannot read would leave one out),
    and a block that goes on from another comes after it."""
    text = README.read_text(encoding="utf-8")
    fences = re.findall(r"^```(?:bash|python)\b", text, flags=re.M)
    assert len(blocks) == len(fences) >= 12
    names = {}
    for b in blocks:
        assert set(b.attrs) <= {"name", "after"}, f"{b.id}: unknown fence words {b.attrs}"
        if b.after is not None:
            assert b.after in names, f"{b.id}: after={b.after} names no earlier block"
        if b.name is not None:
            assert b.name not in names, f"{b.id}: name={b.name} given twice"
            names[b.name] = b
    # the README's own loops: labels answered, a gate that fails, the review page served
    runnable = "".join(b.code for b in blocks if b.no_run is None)
    assert "linkage.synth answer" in runnable
    assert any(expected_exit(c) == 1 for b in blocks for c in commands(b.code)
               if b.lang == "bash")
    assert any(serves(c) for b in blocks for c in commands(b.code) if b.lang == "bash")


def test_blocks_left_out_are_few_say_why_and_name_shipped_files(blocks) -> None:
    left_out = [b for b in blocks if b.no_run is not None]
    assert len(left_out) <= MAX_NO_RUN, [b.id for b in left_out]
    for b in left_out:
        assert len(b.no_run) > 10, f"{b.id}: no-run needs a reason"
        for path in FILE.findall(b.code):
            assert (ROOT / path).is_file(), f"{b.id} names {path}, which is not shipped"


def test_the_harness_reads_what_a_line_documents() -> None:
    """The conventions above, on lines of the kinds the README holds."""
    check = ("linkage check sample_data/customers.csv --rules rules/customers.yaml "
             "--max-duplicate-rate 0.01 --json  # ETL gate: exits 1 (30% are duplicates)")
    assert expected_exit(check) == 1 and outputs(check) == []
    assert expected_exit("linkage dedupe a.csv --out out/x  # no --rules") == 0
    assert outputs("linkage suggest t.csv > rules.yaml   # to edit") == ["rules.yaml"]
    assert outputs("linkage calibrate out/new todo.csv --target 0.95 --write-rules r.yaml") == [
        "r.yaml"]
    assert serves("linkage review out/customers  # label pairs; serves until Ctrl-C")
    assert commands("# a comment\nlinkage dedupe a.csv \\\n    --out out/a\n\n") == [
        "linkage dedupe a.csv      --out out/a"]
    fence = "```bash no-run: needs a cluster\nx\n```\n```python after=one\ny\n```\n"
    first, second = parse(fence)
    assert first.no_run == "needs a cluster" and second.after == "one"


def _help_texts() -> dict[str, str]:
    from linkage.cli import main

    runner = CliRunner()
    texts = {"linkage": runner.invoke(main, ["--help"]).output}
    for name in main.commands:
        done = runner.invoke(main, [name, "--help"])
        assert done.exit_code == 0, (name, done.output)
        texts[f"linkage {name}"] = done.output
    return texts


def test_help_examples_name_shipped_files() -> None:
    """Every file an example in `--help` reads is shipped, or written by an earlier example of
    the same help text (`--out todo.csv`, `> rules.yaml`) or under a run's `out/` folder."""
    unshipped = []
    for command, text in _help_texts().items():
        written: set[str] = set()
        for line in commands(text):
            example = line.strip()
            if not example.startswith(("linkage ", "python -m linkage")):
                continue
            made = outputs(example)
            for path in FILE.findall(_split_comment(example)[0]):
                if path in made or path in written or path.startswith("out/"):
                    continue
                if not (ROOT / path).is_file():
                    unshipped.append(f"`{command} --help` names {path}: {example}")
            written.update(made)
    assert not unshipped, "\n".join(unshipped)
