"""The Spark session, and importing pyspark without its pandas-3 FutureWarning.

pyspark 4.x warns (FutureWarning) that it "does not yet fully support pandas >= 3.0.0" on
import and on every pandas conversion. Our tests turn FutureWarning into errors, and the
conversions we use are covered by our own tests, so that one warning is silenced wherever
pyspark runs: in this process (`quiet_pyspark`) and in the Python workers
(`PYTHONWARNINGS` in the executors' environment).
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from linkage import errors

PANDAS_WARNING = "PySpark does not yet fully support pandas"
INSTALL_HINT = 'pip install "linkage[spark]" (pyspark, with Java 17 on the PATH)'


@contextmanager
def quiet_pyspark() -> Iterator[None]:
    """Silence, inside the block, pyspark's pandas-version FutureWarning, the deprecation
    warnings pandas 3 raises about pyspark's own calls, and pyspark's warning that repeats a
    failed task's traceback."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=re.escape(PANDAS_WARNING),
                                category=FutureWarning)
        # pyspark's own pandas calls (`astype(copy=False)`) are deprecated in pandas 3.
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pyspark\.")
        # A task that fails inside `toPandas` is also told as a warning with the worker's
        # traceback; `task_errors` raises it as the error it was.
        warnings.filterwarnings("ignore", message="toPandas attempted Arrow optimization",
                                category=UserWarning)
        yield


def import_pyspark():
    """`pyspark.sql`, or an error that says how to install it."""
    try:
        with quiet_pyspark():
            import pyspark.sql
    except ImportError as err:
        msg = f"--engine spark needs pyspark, which is not installed ({err}): {INSTALL_HINT}."
        raise errors.LinkageError(msg) from None
    return pyspark.sql


def is_local(master: str) -> bool:
    """Whether `master` runs Spark inside this machine (`local`, `local[4]`, `local[*]`)."""
    return master == "local" or master.startswith("local[")


def local_cores(master: str) -> int:
    """The threads of a local master: `local` 1, `local[4]` 4, `local[*]` every core."""
    match = re.match(r"local\[(\*|\d+)", master)
    if match is None:
        return 1
    if match.group(1) == "*":
        return os.cpu_count() or 1
    return max(int(match.group(1)), 1)


MEMORY_SHARE = 0.5  # of this machine's memory that is free, for the JVM of a local session
MEMORY_VARIABLE = "LINKAGE_SPARK_DRIVER_MEMORY"  # e.g. "6g": the JVM heap of a local session


def machine_memory() -> tuple[int, int]:
    """This machine's memory and the part of it available now (`MemAvailable`), in bytes
    (0 where they cannot be read)."""
    total = available = 0
    try:
        with open("/proc/meminfo", encoding="ascii") as lines:
            for line in lines:
                key, value = line.split(":", 1)
                if key == "MemTotal":
                    total = int(value.split()[0]) * 1024
                elif key == "MemAvailable":
                    available = int(value.split()[0]) * 1024
    except (OSError, ValueError):  # not Linux
        with suppress(ValueError, OSError, AttributeError):
            total = available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return total, available or total


def driver_memory() -> tuple[str, str]:
    """The heap to give the JVM of a local session, and where it came from: the environment's
    `LINKAGE_SPARK_DRIVER_MEMORY`, else half of the memory this machine has available now
    (at least 1g, Spark's own default, and at most 64g). In local mode that one JVM runs the
    driver and every executor thread: Spark's 1g default dies of `OutOfMemoryError` on a
    million records, and a heap above what is free gets the JVM killed by the system when
    other programs hold the rest."""
    given = os.environ.get(MEMORY_VARIABLE, "").strip()
    if given:
        return given, f"from {MEMORY_VARIABLE}"
    total, available = machine_memory()
    gib = int(available * MEMORY_SHARE) >> 30
    size = f"{min(max(gib, 1), 64)}g"
    return size, (f"{MEMORY_SHARE:.0%} of the {available / 2**30:.0f} GiB available of this "
                  f"machine's {total / 2**30:.0f} GiB; set {MEMORY_VARIABLE} (e.g. 8g) to "
                  "change it")


def spark_session(master: str):
    """The active SparkSession if there is one (tests share one; startup takes seconds),
    otherwise a new one on `master`.

    For local masters the driver binds to 127.0.0.1 (no network needed), shuffles use one
    partition per thread, adaptive execution is off and the JVM's heap
    (`spark.driver.memory`, which in local mode holds the executors too) is set from this
    machine's memory (`driver_memory`; told on standard error); on a cluster those are left
    to the cluster's configuration. The UI and the console progress bar are off.
    """
    sql = import_pyspark()
    active = sql.SparkSession.getActiveSession()
    if active is not None:
        return active
    local = is_local(master)
    if local:
        # The workers must run this interpreter, which has linkage and its dependencies.
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        sql.SparkSession.builder.master(master)
        .appName("linkage")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.executorEnv.PYTHONWARNINGS",
                f"ignore:{PANDAS_WARNING}:FutureWarning")
    )
    if local:
        builder = (
            builder.config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            # One shuffle partition per thread: with the default 200 (or even 4 on two
            # threads) every small join pays for idle tasks.
            .config("spark.sql.shuffle.partitions", str(local_cores(master)))
            .config("spark.default.parallelism", str(local_cores(master)))
            # Adaptive execution plans each shuffle as its own job: on one machine's small
            # partitions that costs more than it saves (measured on a 5,000-record run: a
            # third longer with it).
            .config("spark.sql.adaptive.enabled", "false")
        )
        memory, why = driver_memory()
        builder = builder.config("spark.driver.memory", memory)
        sys.stderr.write(f"linkage: starting Spark ({master}) with spark.driver.memory={memory} "
                         f"({why})\n")
    with quiet_pyspark():
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def out_of_memory(err: BaseException) -> bool:
    """Whether a Spark failure is the JVM running out of memory (a task's, or the driver's,
    whose connection then breaks)."""
    text = f"{type(err).__name__}: {err}"
    return "OutOfMemoryError" in text or "GC overhead limit exceeded" in text


def jvm_gone(err: BaseException) -> bool:
    """Whether a failure is the lost connection to a JVM that stopped (in local mode, most
    often killed by an `OutOfMemoryError` in an executor thread)."""
    names = {type(e).__name__ for e in (err, err.__cause__, err.__context__) if e is not None}
    return bool(names & {"Py4JNetworkError", "ConnectionRefusedError", "ConnectionResetError",
                         "BrokenPipeError"}) or "Answer from Java side is empty" in str(err)


def memory_error(err: BaseException, master: str) -> errors.LinkageError:
    """The error to raise for a Java `OutOfMemoryError`: which setting to raise."""
    if is_local(master):
        memory, _ = driver_memory()
        how = (f"It ran with spark.driver.memory={memory} (in local mode that one JVM holds "
               f"the driver and every executor thread). Set {MEMORY_VARIABLE} higher (e.g. "
               f"{MEMORY_VARIABLE}=16g), run fewer threads (--spark-master \"local[1]\"), or "
               "run on a cluster")
    else:
        how = ("Raise spark.executor.memory (and spark.driver.memory if the driver failed) "
               "in the cluster's configuration or with spark-submit --conf")
    return errors.EngineError(f"Spark ran out of memory (java.lang.OutOfMemoryError). {how}; "
                              "or run with --engine local.")


def jvm_stopped(master: str) -> errors.EngineError:
    """The error to raise when the JVM stopped under the run without a Java error: most often
    the system stopped it, the machine's memory being spent (other programs hold the rest)."""
    memory, _ = driver_memory() if is_local(master) else ("the cluster's setting", "")
    return errors.EngineError(
        "The Spark JVM stopped during the run. Most often the system stopped it because the "
        f"machine ran out of memory (`dmesg` says \"Out of memory: Killed process ... java\"): "
        f"it ran with spark.driver.memory={memory}. Set {MEMORY_VARIABLE} lower (e.g. "
        f"{MEMORY_VARIABLE}=4g) or stop other programs; if its log above says "
        "java.lang.OutOfMemoryError instead, set it higher. Or run with --engine local.")


@contextmanager
def java_memory_errors(master: str) -> Iterator[None]:
    """Raise a Java `OutOfMemoryError` inside the block as an `EngineError` that names the
    memory setting to raise, not as an internal error."""
    try:
        yield
    except errors.LinkageError:
        raise
    except Exception as err:
        if out_of_memory(err):
            raise memory_error(err, master) from None
        if jvm_gone(err):
            raise jvm_stopped(master) from None
        raise


_TASK_ERROR = re.compile(r"^linkage\.errors\.(\w+): (.+)$", re.MULTILINE)


@contextmanager
def task_errors() -> Iterator[None]:
    """Re-raise a linkage error raised inside a Spark task (a comparison that finds a value
    it cannot read, say) as that error, so the CLI prints its message, not a JVM trace."""
    try:
        yield
    except Exception as err:  # pyspark wraps task failures in several exception types
        found = _TASK_ERROR.findall(str(err))
        if not found:
            raise
        name, message = found[-1]
        kind = getattr(errors, name, errors.LinkageError)
        if not (isinstance(kind, type) and issubclass(kind, errors.LinkageError)):
            kind = errors.LinkageError
        raise kind(message) from None
