"""The command line stops numpy's huge-page advice (`linkage.cli.common.avoid_hugepage_stalls`):
a run's page faults stalled in the kernel's compaction on a 2-core VM (bench/RESULTS_10M.md).
Each case is a fresh interpreter, as a run is: numpy reads its setting once per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import json, os, sys
from numpy._core import multiarray
numpy_default = multiarray._get_madvise_hugepage()
import linkage
after_import = multiarray._get_madvise_hugepage()
import pyarrow as pa
pool_after_import = pa.default_memory_pool().backend_name
try:
    jemalloc = pa.jemalloc_memory_pool().backend_name
except NotImplementedError:
    jemalloc = None
from click.testing import CliRunner
from linkage.cli import main
result = CliRunner().invoke(main, ["validate", sys.argv[1]])
print(json.dumps({"numpy_default": numpy_default, "after_import": after_import,
                  "after_cli": multiarray._get_madvise_hugepage(), "exit": result.exit_code,
                  "env": os.environ.get("NUMPY_MADVISE_HUGEPAGE"),
                  "pool_after_import": pool_after_import,
                  "pool_after_cli": pa.default_memory_pool().backend_name,
                  "jemalloc": jemalloc}))
"""


def _probe(**env: str) -> dict:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("NUMPY_MADVISE_HUGEPAGE", "ARROW_DEFAULT_MEMORY_POOL")}
    done = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "rules" / "customers.yaml")],
                          capture_output=True, text=True, env={**environ, **env}, cwd=ROOT,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_command_turns_numpy_hugepage_advice_off_and_importing_linkage_does_not():
    seen = _probe()
    assert seen["exit"] == 0
    assert seen["after_import"] == seen["numpy_default"]  # the library leaves numpy alone
    assert seen["after_cli"] is False
    assert seen["env"] == "0"  # and the processes a run starts (Spark's workers) inherit it


def test_the_users_own_numpy_setting_stands():
    seen = _probe(NUMPY_MADVISE_HUGEPAGE="1")
    assert seen["exit"] == 0
    assert seen["numpy_default"] is True and seen["after_cli"] is True
    assert seen["env"] == "1"


def test_a_command_allocates_arrow_memory_with_jemalloc_and_importing_linkage_does_not():
    """`linkage.cli.common.prefer_jemalloc`: a run's Arrow arrays come from jemalloc's pool
    (a lower peak than mimalloc's at 3M and 10M, bench/RESULTS_10M.md), the library alone
    leaves pyarrow's default as it was."""
    seen = _probe()
    assert seen["exit"] == 0
    assert seen["jemalloc"] == "jemalloc"  # the pyarrow wheels this project installs have it
    assert seen["pool_after_import"] != "jemalloc"
    assert seen["pool_after_cli"] == "jemalloc"


def test_the_users_own_arrow_pool_stands():
    seen = _probe(ARROW_DEFAULT_MEMORY_POOL="system")
    assert seen["exit"] == 0
    assert seen["pool_after_import"] == "system" and seen["pool_after_cli"] == "system"


MALLOC_PROBE = """
import json, resource, sys
import numpy as np
from click.testing import CliRunner
from linkage.cli import main
from linkage.progress import Clock


def faults():  # minor page faults of making and dropping eight 64 MiB arrays on this thread
    start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(8):
        array = np.ones(8_000_000)
        del array
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start


def rss_mib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 >> 20


before = faults()
result = CliRunner().invoke(main, sys.argv[1:])
after = faults()
array = np.ones(16_000_000)  # 128 MiB
held = rss_mib()
del array
freed = rss_mib()
with Clock().stage("next"):
    next_stage = rss_mib()
print(json.dumps({"exit": result.exit_code, "before": before, "after": after, "held": held,
                  "freed": freed, "next_stage": next_stage}))
"""


def _malloc_probe(*args: str, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    environ["NUMPY_MADVISE_HUGEPAGE"] = "0"  # small pages before the command as after it
    args = args or ("validate", str(ROOT / "rules" / "customers.yaml"))
    done = subprocess.run([sys.executable, "-c", MALLOC_PROBE, *args],
                          capture_output=True, text=True, env={**environ, **env}, cwd=ROOT,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError, TypeError):  # not a glibc system
        return False


glibc_only = pytest.mark.skipif(not _glibc(), reason="glibc's malloc settings")


@glibc_only
def test_a_command_keeps_freed_arrays_for_the_next_and_hands_them_back_as_a_stage_starts():
    """`linkage.cli.common.keep_freed_memory`: once a command runs, a freed 64 MiB array's pages
    serve the next one (glibc alone unmaps each and faults the next one's pages in again: 10M
    records spent a quarter of their CPU in the kernel), and what a stage freed is handed back as
    the next stage starts, so that it does not add to that stage's peak."""
    seen = _malloc_probe()
    assert seen["exit"] == 0
    pages = 8 * (64 << 20) // 4096
    assert seen["before"] >= pages * 0.9  # glibc's own way: every array faulted in anew
    assert seen["after"] < pages * 0.25  # kept: at most the first array's pages
    assert seen["freed"] >= seen["held"] - 16  # the freed 128 MiB stays in the process...
    assert seen["next_stage"] <= seen["held"] - 100  # ...until the next stage starts


@glibc_only
def test_the_users_own_malloc_settings_stand():
    seen = _malloc_probe(MALLOC_MMAP_THRESHOLD_="131072")
    assert seen["exit"] == 0
    pages = 8 * (64 << 20) // 4096
    assert seen["after"] >= pages * 0.9  # the user's threshold: each array mapped anew
    assert seen["freed"] <= seen["held"] - 100  # and unmapped when freed


@glibc_only
def test_a_run_asked_to_work_in_chunks_leaves_glibc_to_hand_memory_back_at_once(tmp_path):
    """`--chunk-rows` or `LINKAGE_CHUNK_ROWS` asks a run to hold less: glibc's own way, which
    unmaps each large array as it is freed, holds less than keeping it for the next
    (tests/test_outofcore.py holds a chunked run of a wide table to 0.8 of one in memory)."""
    pages = 8 * (64 << 20) // 4096
    asked = [_malloc_probe(LINKAGE_CHUNK_ROWS="1000"),
             _malloc_probe("dedupe", str(ROOT / "sample_data" / "customers.csv"), "--rules",
                           str(ROOT / "rules" / "customers.yaml"), "--chunk-rows", "1000",
                           "--out", str(tmp_path / "chunked"), "--no-progress")]
    for seen in asked:
        assert seen["exit"] == 0
        assert seen["after"] >= pages * 0.9
        assert seen["freed"] <= seen["held"] - 100
