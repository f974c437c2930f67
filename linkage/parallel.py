"""The machine's cores for work that releases the GIL: Arrow's and pandas' hash tables over
millions of values, Arrow's take and Parquet. A run is otherwise one thread, so on two cores it
used one (measured at 10M records: 86 s of user time in 114 s).

Everything here gives the same result as the serial code, in the same order: work is split
into independent pieces, and the pieces' results are put together in a fixed order, whatever
order the threads finish in. Nothing here changes an output byte; `threads() == 1` (one core,
or `LINKAGE_THREADS=1`) runs the serial code itself.

`LINKAGE_THREADS` caps the threads (default: the cores this process may run on, at most 8).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

MAX_THREADS = 8  # hash tables and gathers are memory-bound: more threads than this gain little
# Values from which one hash table may be built by several threads (`factorize`): below, the
# split's passes over the values cost more than they save.
PARALLEL_VALUES = 1_000_000
# The split pays where the table of distinct values is far larger than the CPU's caches
# (every lookup a cache miss), not where few values repeat (measured, best of 3, 2 cores:
# 10M values of 1M-8M distinct 1.4-1.6x, 3M of 2M 1.7x; 10M of 50,000 0.86x, 3M of 20,000
# 0.64x). Told apart on a strided sample: split when nearly all of it is distinct.
DISTINCT_SAMPLE = 1 << 16
SPLIT_DISTINCT_SHARE = 0.9

_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_LOCK = threading.Lock()
_WORKER = threading.local()


def threads() -> int:
    """Threads a run may use: `LINKAGE_THREADS` if set, else the cores this process may run
    on, at most `MAX_THREADS`."""
    given = os.environ.get("LINKAGE_THREADS", "").strip()
    if given:
        try:
            count = int(given)
        except ValueError:
            count = 0
        if count < 1:
            from linkage.errors import InputError

            raise InputError(f"LINKAGE_THREADS must be a whole number of threads, 1 or more "
                             f"(1 runs everything on one thread; unset, the machine's cores). "
                             f"Got {given!r} instead.")
        return count
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


def _pool(size: int) -> ThreadPoolExecutor:
    global _POOL, _POOL_SIZE
    with _LOCK:
        if _POOL is None or size != _POOL_SIZE:
            if _POOL is not None:
                _POOL.shutdown(wait=False)
            _POOL = ThreadPoolExecutor(max_workers=size, thread_name_prefix="linkage",
                                       initializer=_mark_worker)
            _POOL_SIZE = size
        return _POOL


def _mark_worker() -> None:
    _WORKER.inside = True


def in_worker() -> bool:
    """Whether this code runs in one of the pool's threads (work there runs serially: a
    piece of parallel work never waits on the pool it runs in)."""
    return bool(getattr(_WORKER, "inside", False))


def thread_map(function: Callable[[Any], Any], items: Iterable[Any]) -> list:
    """`[function(item) for item in items]`, the items spread over `threads()` threads; the
    results in the items' order. An exception is raised as the serial loop would raise it:
    that of the first item (in order) that failed."""
    items = list(items)
    size = min(threads(), len(items))
    if size <= 1 or in_worker():
        return [function(item) for item in items]
    futures = [_pool(threads()).submit(function, item) for item in items]
    return [future.result() for future in futures]


def dependent_map(tasks: list[tuple[Callable[..., Any], list[int]]],
                  keep: Collection[int] | None = None) -> list:
    """Run `tasks`, each `(function, deps)`: `function(*results of the tasks deps names)`,
    where `deps` are positions of earlier tasks. A task starts on the pool as soon as a thread
    is free and runs once its dependencies are done, so independent chains (a column's
    encoding and its normalize steps) go side by side. The results in task order; an error
    is raised as the serial loop would raise it: that of the first task (in order) that
    failed. (Tasks are queued in order and each waits only on earlier ones, which a thread
    has already taken: no thread ever waits on a task still queued behind it.)

    `keep`, where given, names the tasks whose results the caller wants: any other result is
    let go as soon as the last task that reads it is done (None in its place), so that a
    chain's intermediate values (a column as it was before a normalize step) are not all
    held until the end."""
    for k, (_, deps) in enumerate(tasks):
        if any(not 0 <= d < k for d in deps):
            raise ValueError(f"task {k} depends on {deps}: only earlier tasks may be named")
    wanted = set(range(len(tasks)) if keep is None else keep)
    readers = [0] * len(tasks)  # per task, the tasks still to read its result
    for _, deps in tasks:
        for d in set(deps):
            readers[d] += 1
    results: list = [None] * len(tasks)
    lock = threading.Lock()

    def read_by(deps: list[int]) -> None:  # a task that read `deps` is done with them
        with lock:
            for d in set(deps):
                readers[d] -= 1
                if readers[d] == 0 and d not in wanted:
                    results[d] = None

    if min(threads(), len(tasks)) <= 1 or in_worker():
        for k, (function, deps) in enumerate(tasks):
            results[k] = function(*(results[d] for d in deps))
            read_by(deps)
            if readers[k] == 0 and k not in wanted:
                results[k] = None
        return results
    pool = _pool(threads())
    futures: list = []

    def run(k, function, deps, dep_futures):
        for f in dep_futures:
            f.result()  # raises a dependency's error
        try:
            value = function(*(results[d] for d in deps))
        finally:
            read_by(deps)
        with lock:
            if readers[k] or k in wanted:
                results[k] = value

    for k, (function, deps) in enumerate(tasks):
        futures.append(pool.submit(run, k, function, deps, [futures[d] for d in deps]))
    for future in futures:
        future.result()
    return results


class Pending:
    """Work started by `beside`: `result()` waits for it and gives its value or raises its
    error; `wait()` waits and keeps quiet (for a caller that is raising an error of its own,
    so that nothing it started goes on writing after it)."""

    def __init__(self, future=None, value: Any = None, error: BaseException | None = None):
        self._future, self._value, self._error = future, value, error

    def result(self) -> Any:
        if self._future is not None:
            return self._future.result()
        if self._error is not None:
            raise self._error
        return self._value

    def wait(self) -> None:
        if self._future is not None:
            with contextlib.suppress(BaseException):  # the caller's own error is on its way
                self._future.result()


def beside(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Pending:
    """`function(*args, **kwargs)` on a thread of the pool, beside the caller's own work;
    run at once (its error kept for `result()`) where there is one thread, or inside a
    worker."""
    if threads() <= 1 or in_worker():
        try:
            return Pending(value=function(*args, **kwargs))
        except Exception as error:  # raised by `result()`, as a thread's is
            return Pending(error=error)
    return Pending(future=_pool(threads()).submit(function, *args, **kwargs))


def _mostly_distinct(values: np.ndarray) -> bool:
    """Whether nearly all of a strided sample of `values` is distinct (`SPLIT_DISTINCT_SHARE`
    of `DISTINCT_SAMPLE` values): the sign of a hash table too large for the caches."""
    from linkage.ordering import distinct_share

    return distinct_share(values, DISTINCT_SAMPLE) >= SPLIT_DISTINCT_SHARE


def factorize(values: np.ndarray) -> np.ndarray:
    """`pd.factorize(values)[0]` of an integer array (codes numbered in order of each value's
    first appearance, every value a value), with its hash table split over the threads: each
    thread numbers the values whose hash falls in its share (every copy of a value lies in
    one share, in order), and the shares' numbers are merged by where each value first
    appears. The same codes as pandas', 1.4-1.9x faster on two cores where most values are
    distinct; where they repeat (a small table, in cache) pandas' own pass is kept."""
    import pandas as pd

    values = np.asarray(values)
    parts = threads()
    if parts <= 1 or len(values) < PARALLEL_VALUES or values.dtype.kind not in "iu" \
            or values.dtype.itemsize != 8 or in_worker() or not _mostly_distinct(values):
        return pd.factorize(values)[0].astype(np.int64, copy=False)
    bits = max(1, int(parts - 1).bit_length())
    # Fibonacci hashing: the top bits of value * 2^64/phi spread any set of integers evenly
    share = ((values.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
             >> np.uint64(64 - bits)).astype(np.uint8)

    def number(part: int):
        rows = np.flatnonzero(share == part)
        local = pd.factorize(values[rows])[0].astype(np.int64, copy=False)
        first = np.empty(len(local), dtype=bool)  # where each local code first appears
        if len(local):
            first[0] = True
            np.greater(local[1:], np.maximum.accumulate(local[:-1]), out=first[1:])
        return rows, local, rows[first]

    pieces = thread_map(number, range(1 << bits))
    share = None
    appears = np.zeros(len(values), dtype=bool)
    for _, _, firsts in pieces:
        appears[firsts] = True
    rank = np.cumsum(appears, dtype=np.int64)
    rank -= 1
    del appears
    out = np.empty(len(values), dtype=np.int64)

    def place(piece) -> None:
        rows, local, firsts = piece
        out[rows] = rank[firsts][local]

    thread_map(place, pieces)
    return out
