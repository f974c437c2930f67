"""Shared fixtures: where the benchmark data lives, and running the real CLI."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATASETS = Path(os.environ.get("LINKAGE_DATASETS", ROOT.parent / "shared" / "datasets"))

# Every Spark the test run starts (the `spark` fixture's JVM, and the Spark of a test's
# subprocess, which inherits this environment) reads tests/spark_conf/spark-defaults.conf:
# its JVMs compile with C1 only, which the suite's many small jobs run faster on (the file
# says how much). A SPARK_CONF_DIR set outside the suite is kept.
os.environ.setdefault("SPARK_CONF_DIR", str(ROOT / "tests" / "spark_conf"))

# A pytest-xdist worker runs as `python -c`: its `__main__` has neither `__file__` nor
# `__spec__`, which pyspark.sql.connect (imported by Great Expectations) takes for a doctest
# run, and it exits the worker. The worker's `__main__` gets an empty file (a process started
# by `multiprocessing`'s spawn runs it, and nothing happens).
_MAIN = sys.modules["__main__"]
if os.environ.get("PYTEST_XDIST_WORKER") and getattr(_MAIN, "__spec__", None) is None \
        and not hasattr(_MAIN, "__file__"):
    _MAIN.__file__ = str(ROOT / "tests" / "_xdist_main.py")


def run_cli(*args: str, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run `python -m linkage ...` as a user would, capturing its output; in `env`, the whole
    environment of the run, if given (else this process's).

    Each run is a process of its own, forked from a server that has done the imports once
    (tests/_cli_server.py): the same exit code and output as a fresh `python -m linkage`,
    without a second of imports per run. `LINKAGE_TEST_FRESH_CLI=1` starts a fresh
    interpreter for every run instead."""
    command = [sys.executable, "-m", "linkage", *map(str, args)]
    env = {**(os.environ if env is None else env), "PYTHONIOENCODING": "utf-8"}
    server = _cli_server()
    if server is None:
        return subprocess.run(command, capture_output=True, text=True, cwd=cwd or ROOT,
                              env=env, timeout=600)
    import tempfile

    from tests._cli_server import client

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            open(os.devnull, "rb") as nothing:
        try:
            code = client(server, command[3:], str(cwd or ROOT), env,
                          (nothing.fileno(), out.fileno(), err.fileno()), timeout=600)
        except TimeoutError as late:
            raise subprocess.TimeoutExpired(command, 600) from late
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(
            command, code, _text(out.read()), _text(err.read()))


def _text(data: bytes) -> str:
    """Bytes as `subprocess.run(text=True)` gives them: decoded, newlines universal."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


_SERVER: dict = {}


def _cli_server() -> str | None:
    """The socket of the warm command-line server, started on first use (None under
    `LINKAGE_TEST_FRESH_CLI=1`, or if it could not start: then runs start fresh interpreters)."""
    if os.environ.get("LINKAGE_TEST_FRESH_CLI"):
        return None
    if "path" in _SERVER:
        return _SERVER["path"]
    import atexit
    import tempfile

    folder = tempfile.mkdtemp(prefix="lkcli")
    path = os.path.join(folder, "socket")
    process = subprocess.Popen([sys.executable, "-m", "tests._cli_server", path], cwd=ROOT,
                               env={**os.environ, "PYTHONIOENCODING": "utf-8"},
                               stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    ready = process.stdout.readline().strip() == b"ready"
    _SERVER["path"] = path if ready else None

    def stop() -> None:
        process.kill()
        process.wait()
        with contextlib.suppress(OSError):
            os.remove(path)
            os.rmdir(folder)

    atexit.register(stop)
    return _SERVER["path"]


def run_clis(*calls: tuple, cwd: Path | None = None) -> list[subprocess.CompletedProcess]:
    """Several independent `python -m linkage ...` runs at once (each call a tuple of
    arguments), each a process of its own as with `run_cli`; their results in the order given.
    For a test that checks what each of several runs says, not how they interleave: on a
    machine with spare cores the runs' start-up (importing pandas) overlaps."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(lambda args: run_cli(*args, cwd=cwd), calls))


@pytest.fixture(scope="session")
def datasets() -> Path:
    if not DATASETS.exists():
        pytest.fail(f"benchmark data not found at {DATASETS}; set LINKAGE_DATASETS")
    return DATASETS


def pairs_of_clusters(frame: pd.DataFrame, id_column: str, cluster_column: str) -> set:
    """Every unordered pair of ids that share a cluster."""
    merged = frame[[id_column, cluster_column]].merge(
        frame[[id_column, cluster_column]], on=cluster_column
    )
    merged = merged[merged[f"{id_column}_x"] < merged[f"{id_column}_y"]]
    return set(zip(merged[f"{id_column}_x"], merged[f"{id_column}_y"], strict=True))


def f1_score(predicted: set, truth: set) -> tuple[float, float, float]:
    tp = len(predicted & truth)
    precision = tp / len(predicted) if predicted else 0.0
    recall = tp / len(truth) if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


@pytest.fixture(scope="session")
def spark():
    """A local Spark session (`local[2]`) for every test that asks for one, started once: the
    engine reuses the active session, and starting one takes seconds."""
    from linkage.engines.spark.session import quiet_pyspark, spark_session

    with quiet_pyspark():
        session = spark_session("local[2]")
    yield session
    with quiet_pyspark():
        session.stop()


def nulls_as_none(frame: pd.DataFrame) -> pd.DataFrame:
    """Object columns with every missing value as None (other columns as they are): on pandas
    2.2 a missing text is NaN when read from a CSV and None when read back from Parquet, and
    both are null once written."""
    frame = frame.copy()
    for column in frame.columns:
        if frame[column].dtype == object:
            frame[column] = frame[column].where(frame[column].notna(), None)
    return frame



# pytest-xdist (`make test` runs the suite on two workers, `-n 2`): the files whose tests use
# the `spark` fixture all go to one worker, so the suite starts one Spark JVM, not one per
# worker; every other file goes whole to one worker (its module fixtures are set up once).
SPARK_FILES = frozenset({"test_spark.py", "test_spark_distributed.py", "test_spark_text.py",
                         "test_spark_guards.py", "test_families.py", "test_gx_docs.py"})


# Files of few tests that take long (serial seconds on 2 cores, measured): xdist sends units
# out by their number of tests, which would leave these for last, one worker running them
# while the other has nothing left to do. They go out next after the Spark unit instead.
LONG_FEW = ("test_spark_processes.py",  # 115-150 s in 2 tests: Spark JVMs in subprocesses
            "test_labels_trees.py")  # 23 s in 1 test


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Work units of whole files, the Spark files one unit. Units go out largest first (the
    Spark unit is the largest: it starts at once), then the `LONG_FEW` files, then the rest by
    their number of tests."""
    from xdist.scheduler import LoadScopeScheduling

    class FilesAndSpark(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "spark" if Path(path).name in SPARK_FILES else path

        def _assign_work_unit(self, node) -> None:
            for scope in [s for s in self.workqueue if Path(s).name in LONG_FEW][::-1]:
                self.workqueue.move_to_end(scope, last=False)
            if "spark" in self.workqueue:
                self.workqueue.move_to_end("spark", last=False)
            super()._assign_work_unit(node)

    return FilesAndSpark(config, log)


def pytest_collection_modifyitems(config, items):
    """A test file that uses the `spark` fixture must be in `SPARK_FILES`, or two workers
    would each start a Spark JVM."""
    missing = sorted({item.path.name for item in items
                      if "spark" in getattr(item, "fixturenames", ())} - SPARK_FILES)
    if missing:
        raise pytest.UsageError(f"tests/conftest.py: add {', '.join(missing)} to SPARK_FILES "
                                "(its tests use the `spark` fixture)")
