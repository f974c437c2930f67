"""Work spread over the cores (`linkage.parallel`) gives what the serial code gives, byte for
byte: the hash tables split over threads, the columns encoded and normalized side by side,
the comparisons and blocking keys in threads, the output tables of a streamed run."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import linkage as lk
from linkage.errors import InputError
from linkage.normalize import renumbered
from linkage.parallel import (
    PARALLEL_VALUES,
    beside,
    dependent_map,
    factorize,
    thread_map,
    threads,
)


@pytest.mark.parametrize("distinct", [1, 7, 5_000, 2_000_000])
@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_factorize_in_threads_numbers_as_pandas(monkeypatch, distinct, dtype):
    monkeypatch.setenv("LINKAGE_THREADS", "4")
    rng = np.random.default_rng(distinct)
    values = (rng.integers(0, distinct, PARALLEL_VALUES + 12_345) * 7_919).astype(dtype)
    if dtype == np.int64:
        values[::97] = -1  # -1 is a value like any other
        values[5] = np.iinfo(np.int64).min
    assert np.array_equal(factorize(values), pd.factorize(values)[0])


def test_renumbered_of_compound_codes_in_threads_as_serially(monkeypatch):
    rng = np.random.default_rng(3)
    codes = rng.integers(-1, 400_000, PARALLEL_VALUES * 2) * 1_000_003  # not in order
    monkeypatch.setenv("LINKAGE_THREADS", "1")
    serial = renumbered(codes)
    monkeypatch.setenv("LINKAGE_THREADS", "2")
    assert np.array_equal(renumbered(codes), serial)
    assert serial[codes < 0].tolist() == [-1] * int((codes < 0).sum())


def test_thread_map_keeps_order_and_raises_the_first_error(monkeypatch):
    import threading

    monkeypatch.setenv("LINKAGE_THREADS", "3")
    assert thread_map(lambda x: x * x, range(50)) == [x * x for x in range(50)]
    names = thread_map(lambda _: threading.current_thread().name, range(6))
    assert all(name.startswith("linkage") for name in names), names  # the pool's threads
    monkeypatch.setenv("LINKAGE_THREADS", "1")
    assert set(thread_map(lambda _: threading.current_thread().name, range(3))) == {
        threading.current_thread().name}  # one thread: the caller's own
    monkeypatch.setenv("LINKAGE_THREADS", "3")

    def fail(x):
        if x in (3, 7):
            raise ValueError(f"item {x}")
        return x

    with pytest.raises(ValueError, match="item 3"):
        thread_map(fail, range(10))
    # inside a worker, work runs serially (a worker never waits on its own pool)
    assert thread_map(lambda x: thread_map(lambda y: x + y, range(3)), range(4)) == [
        [x, x + 1, x + 2] for x in range(4)]


def test_linkage_threads_is_read_and_checked(monkeypatch):
    monkeypatch.setenv("LINKAGE_THREADS", "3")
    assert threads() == 3
    for bad in ("many", "0", "-2", "1.5"):
        monkeypatch.setenv("LINKAGE_THREADS", bad)
        with pytest.raises(InputError, match="LINKAGE_THREADS must be a whole number"):
            threads()
    monkeypatch.delenv("LINKAGE_THREADS")
    assert 1 <= threads() <= 8


def test_dependent_tasks_see_their_inputs_as_the_serial_loop_left_them(monkeypatch):
    """A column's steps in a chain; a step reads what the steps before it wrote, even where a
    later step writes the same column again (each task is handed its inputs' results)."""
    import time

    def slow(value, seconds=0.0):
        time.sleep(seconds)
        return value

    tasks = [(lambda: slow("first", 0.05), []),               # 0: column first
             (lambda: slow("last"), []),                       # 1: column last
             (lambda a: slow(a + ">name", 0.05), [0]),         # 2: first normalized
             (lambda a: a + ">raw", [0]),                      # 3: reads first before step 2
             (lambda a, b: a + "+" + b, [2, 1]),                # 4: joins two columns
             (lambda a: a + ">again", [2])]                    # 5: first normalized again
    for count in ("1", "2", "4"):
        monkeypatch.setenv("LINKAGE_THREADS", count)
        assert dependent_map(tasks) == ["first", "last", "first>name", "first>raw",
                                        "first>name+last", "first>name>again"]

    def fail(message):
        raise ValueError(message)

    broken = [(lambda: 1, []), (lambda a: fail("step 1"), [0]), (lambda a: a, [1]),
              (lambda: fail("step 3"), [])]
    monkeypatch.setenv("LINKAGE_THREADS", "2")
    with pytest.raises(ValueError, match="step 1"):  # the first in order, as serially
        dependent_map(broken)
    with pytest.raises(ValueError, match="only earlier tasks"):
        dependent_map([(lambda a: a, [0])])


def test_dependent_tasks_let_go_of_what_no_task_left_needs(monkeypatch):
    """`keep`: a result no kept task needs is let go once the last task reading it is done
    (normalize holds each column's last form only, not every form it went through), while
    every task still sees its inputs."""
    import gc
    import weakref

    class Column:
        def __init__(self, text):
            self.text = text

    seen: list = []  # weak references to every result, made as each task ends

    def made(value):
        seen.append(weakref.ref(value))
        return value

    for count in ("1", "2", "4"):
        monkeypatch.setenv("LINKAGE_THREADS", count)
        seen.clear()
        tasks = [(lambda: made(Column("raw")), []),                           # 0
                 (lambda: made(Column("other")), []),                         # 1
                 (lambda a: made(Column(a.text + ">name")), [0]),             # 2
                 (lambda a, b: made(Column(a.text + "+" + b.text)), [2, 1]),  # 3
                 (lambda a: made(Column(a.text + ">raw")), [0])]              # 4
        done = dependent_map(tasks, keep={1, 3, 4})
        gc.collect()
        assert [None if c is None else c.text for c in done] == [
            None, "other", None, "raw>name+other", "raw>raw"]
        alive = sorted(r().text for r in seen if r() is not None)
        assert alive == ["other", "raw>name+other", "raw>raw"]  # 0 and 2 are gone


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir())
            if p.suffix == ".parquet" or p.name in ("model.json", "rules.yaml")}


def test_a_run_in_threads_writes_the_bytes_of_a_run_in_one(tmp_path, monkeypatch):
    """Comparisons in threads from `PARALLEL_PAIRS` pairs; set to 0 here so that a generator
    table of 6,000 records takes every threaded path (columns and their normalize steps,
    keys, comparisons, the split hash tables, a streamed run's tables) and the serial one."""
    import linkage.parallel as parallel
    import linkage.run.compare as compare
    from linkage.suggest import suggest_rules
    from linkage.synth import traps

    _, (table,), _ = traps(6_000, trap="persons", seed=7)
    path = tmp_path / "persons.parquet"
    table.to_parquet(path, index=False)
    rules = suggest_rules([table]).rules
    assert len(rules["normalize"]) > 1 and len(rules["comparisons"]) > 1
    monkeypatch.setattr(compare, "PARALLEL_PAIRS", 0)
    monkeypatch.setattr(parallel, "PARALLEL_VALUES", 1_000)
    for chunk_rows in (None, 3_000):  # in memory; streamed (the output tables in threads)
        digests = []
        for count in ("1", "2"):
            monkeypatch.setenv("LINKAGE_THREADS", count)
            out = tmp_path / f"out{count}_{chunk_rows}"
            lk.dedupe(str(path), rules, progress=False, chunk_rows=chunk_rows).write(out)
            digests.append(_digests(out))
        assert digests[0] == digests[1], chunk_rows
        assert {"clusters.parquet", "pairs.parquet", "deduplicated.parquet"} <= set(digests[0])


def test_work_beside_gives_its_value_or_its_error_when_asked(monkeypatch):
    for count in ("1", "2"):
        monkeypatch.setenv("LINKAGE_THREADS", count)
        assert beside(sum, [1, 2, 3]).result() == 6
        failed = beside(int, "not a number")
        failed.wait()  # quiet: the caller has an error of its own
        with pytest.raises(ValueError, match="not a number"):
            failed.result()



def test_normalize_lets_go_of_a_column_as_it_was_once_its_step_is_done(monkeypatch):
    """`normalize_columns` keeps each column's last form only: by the time the second column's
    step runs, the first column's encoding from before its step is gone (the 10M peak was 80
    MiB higher when every raw encoding stayed to the end of the stage); and every column's
    normalized form is what the run gets."""
    import gc
    import weakref

    from linkage import pipeline
    from linkage.settings import Rules

    real = pipeline.normalize_encoded
    sources: list = []  # (column, weak reference to what its step read)
    alive_at_each_step: list = []

    def watched(step, source, *args, **kwargs):
        gc.collect()
        alive_at_each_step.append([name for name, ref in sources if ref() is not None])
        sources.append((step.column, weakref.ref(source)))
        return real(step, source, *args, **kwargs)

    monkeypatch.setattr(pipeline, "normalize_encoded", watched)
    monkeypatch.setenv("LINKAGE_THREADS", "1")  # the steps in rule order, one at a time
    rules = Rules.from_dict({
        "id_column": "id",
        "normalize": [{"column": "first", "type": "name"}, {"column": "last", "type": "name"}],
        "blocking": [{"keys": [["last"]]}],
        "comparisons": [{"type": "exact", "column": "first"},
                        {"type": "exact", "column": "last"}]})
    records = pd.DataFrame({"id": ["a", "b", "c"], "first": [" Ann", "ann", "Bo "],
                            "last": ["LEE", "Lee ", "kim"]})
    work, stats = pipeline.normalize_columns(rules, records, records["id"])
    assert alive_at_each_step == [[], []]  # first's raw encoding gone before last's step
    assert set(stats) == {"first", "last"}
    assert work["first"].codes[0] == work["first"].codes[1] != work["first"].codes[2]
    assert work["last"].codes[0] == work["last"].codes[1] != work["last"].codes[2]
