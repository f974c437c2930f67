"""The Spark engine's distributed route in processes of their own (issue 17, item 3): a
Python driver with less memory than the data, and a `local-cluster` master of separate executor
JVMs. Each test starts its own Spark in a subprocess (a session's master and the driver's limits
cannot change in this process), so this file does not use the `spark` fixture and runs beside
the Spark files on the other pytest-xdist worker."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import linkage as lk
from tests.conftest import ROOT
from tests.test_spark_distributed import _febrl, _rules, _table

_SMALL_DRIVER = """
import gc, os, resource, sys
import linkage as lk
import linkage.engines.spark._distributed, linkage.engines.spark._engine, linkage.report
from linkage.engines.spark.session import quiet_pyspark, spark_session

path, rules, headroom = sys.argv[1], sys.argv[2], int(sys.argv[3])
with quiet_pyspark():
    spark_session("local[1]").range(1).count()  # the JVM runs before the limit is set

def data_size():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024

# One JVM for both routes: the distributed one first, then the driver one, which may end
# this process (a failed malloc in Arrow aborts it).
for route in ("distributed", "driver"):
    gc.collect()
    # The Python driver may grow by `headroom` bytes from here on (the JVM and the Python
    # workers are other processes, started before or by the JVM, without the limit).
    resource.setrlimit(resource.RLIMIT_DATA, (data_size() + headroom, resource.RLIM_INFINITY))
    os.environ["LINKAGE_SPARK_DRIVER_ROWS"] = "0" if route == "distributed" else "1000000000"
    try:
        run = lk.dedupe(path, rules, engine="spark", progress=False)
    except MemoryError as err:
        print(route, "MemoryError", type(err).__name__, flush=True)
        raise SystemExit(3)
    print(route, "ok", len(run.deduplicated), run.summary_data["stages"]["cluster"]["clusters"],
          flush=True)
    del run
"""


def test_a_driver_with_less_memory_than_the_data_runs_it_distributed(tmp_path):
    """The Python driver limited (RLIMIT_DATA) to 100 MB more than it holds once Spark runs,
    on a table of 250 MB (persons with a long text column no rule reads): the distributed
    route runs it and writes every kept record with its text; the driver route, which reads
    the table on the driver, cannot (given 100 MB more than it holds after the distributed
    run, in the same process: one Spark start for both)."""
    import os
    import subprocess
    import sys

    from linkage.synth import persons

    records, _ = persons(10_000, seed=11, dup_rate=0.2)
    noise = np.random.default_rng(3).integers(0, 2**63, size=(len(records), 1_600),
                                              dtype=np.int64)
    records["notes"] = [row.tobytes().hex() for row in noise]  # 25.6 kB of text a record
    path = tmp_path / "wide.parquet"
    records.to_parquet(path, index=False)
    size = int(records.memory_usage(deep=True).sum())
    assert size > 250e6
    del records, noise
    rules = ROOT / "bench" / "persons_scale.yaml"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LINKAGE_SPARK_DRIVER_MEMORY": "2g"}
    done = subprocess.run(
        [sys.executable, "-c", _SMALL_DRIVER, str(path), str(rules), str(100 << 20)],
        capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    said = done.stdout.splitlines()
    distributed = [line.split() for line in said if line.startswith("distributed ")]
    assert distributed and distributed[0][1] == "ok", done.stdout[-2000:] + done.stderr[-3000:]
    kept, clusters = distributed[0][2:]
    assert int(kept) == int(clusters) and 7_000 < int(kept) < 10_000
    # the driver route (reading the table into pandas) cannot allocate it
    assert not any(line.startswith("driver ok") for line in said), done.stdout[-2000:]
    assert done.returncode != 0
    assert "malloc" in done.stderr or "MemoryError" in done.stdout + done.stderr, \
        done.stdout[-2000:] + done.stderr[-2000:]


_LOCAL_CLUSTER = """
import os, signal, sys
from pathlib import Path
import linkage as lk
from linkage.engines.spark._frames import cluster_checkpoints, pinned
from linkage.engines.spark.session import quiet_pyspark

febrl, rules, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
os.environ["LINKAGE_SPARK_DRIVER_ROWS"] = "0"

def executor():
    # The executor JVM that runs this Python worker: the nearest ancestor that is one.
    pid = os.getpid()
    while pid > 1:
        with open(f"/proc/{pid}/cmdline", "rb") as cmd:
            if b"CoarseGrainedExecutorBackend" in cmd.read():
                return pid
        with open(f"/proc/{pid}/status") as status:
            pid = next(int(line.split()[1]) for line in status if line.startswith("PPid:"))
    return None

with quiet_pyspark():
    from pyspark.sql import SparkSession, functions as F
    # Spark's own multi-process master: a driver JVM and two executor JVMs (one core,
    # 512 MB each) under a standalone master and worker, all on this machine. Small heaps:
    # 1,500 records need no more, and fresh JVM memory is slow to touch on some hosts. No
    # locality wait: no task here gains from waiting for the executor that holds its blocks.
    spark = (SparkSession.builder.master("local-cluster[2,1,512]")
             .config("spark.executor.memory", "512m")
             .config("spark.driver.memory", "512m")
             .config("spark.locality.wait", "0")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.default.parallelism", "2")
             .config("spark.sql.adaptive.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("OFF")
    context = spark.sparkContext
    print("application", context.applicationId, flush=True)
    executors = set(context.parallelize(range(8), 8).map(lambda _: executor()).collect())
    assert len(executors) == 2 and None not in executors, executors
    print("executors", len(executors))

    # A pinned result outlives the executor that computed it (a local checkpoint's blocks
    # die with it, and reading them fails).
    with cluster_checkpoints(spark, work / "staging"):
        assert str(work / "staging" / "checkpoints") in context.getCheckpointDir()
        frame = (spark.range(0, 20_000, 1, 4).withColumn("x", F.col("id") % 7)
                 .transform(pinned))
        os.kill(min(executors), signal.SIGKILL)
        print("after a lost executor", frame.count(), frame.agg(F.sum("x")).first()[0])

    run = lk.dedupe(febrl, lk.Rules.from_yaml(rules), engine="spark", progress=False)
    run.write(work / "out")
    print("route", run.summary_data["spark"]["route"])
    spark.stop()
"""


def test_on_a_local_cluster_of_executor_processes_as_the_local_engine(datasets, tmp_path):
    """The distributed route on Spark's `local-cluster` master (a standalone master and
    worker, two executor JVMs, the driver a third, each executor with its own Python
    workers), in a subprocess, since a session's master cannot change: the clusters and kept
    records of 1,500 FEBRL3 records as the local engine's, after a result pinned by `pinned`
    outlived the executor that computed it (killed), as a cluster's checkpoints must."""
    import os
    import subprocess
    import sys

    frame = _febrl(datasets, "dataset3.csv", "d3").head(1_500)
    path = tmp_path / "febrl3.parquet"
    frame.to_parquet(path, index=False)
    rules = ROOT / "rules" / "febrl.yaml"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _LOCAL_CLUSTER, str(path), str(rules), str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    # The standalone worker keeps its executors' logs under pyspark's installation (`work/`
    # of SPARK_HOME, which a local-cluster cannot move); nothing of this test stays there.
    import shutil

    import pyspark

    for line in done.stdout.splitlines():
        if line.startswith("application "):
            shutil.rmtree(Path(pyspark.__file__).parent / "work" / line.split()[1],
                          ignore_errors=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-5000:]
    assert "executors 2" in done.stdout
    assert f"after a lost executor 20000 {sum(i % 7 for i in range(20_000))}" in done.stdout
    assert "route distributed" in done.stdout
    local = lk.dedupe(frame, _rules(rules), progress=False)
    for name, expected in (("clusters", local.clusters), ("deduplicated", local.deduplicated)):
        got = _table(pd.read_parquet(tmp_path / "out" / f"{name}.parquet"))
        expected = _table(expected)
        assert list(got.columns) == list(expected.columns), name
        pd.testing.assert_frame_equal(got.astype(str), expected.astype(str), obj=name)
