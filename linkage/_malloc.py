"""glibc's malloc told to keep the memory a run frees for its next arrays, and to hand it back
between stages (the command line only: `linkage.cli.common`).

glibc serves an allocation above its mmap threshold (at most 32 MiB where it sets the threshold
itself) by a fresh `mmap` and unmaps it when it is freed, so the next such array faults its pages
in again, 4 KiB at a time. A run makes and drops arrays of one element per record or pair over
and over: at 10M records about 12M page faults, a quarter of the run's CPU in the kernel
(bench/RESULTS_10M.md). `keep_freed_memory` raises the mmap threshold to 1 GiB and the trim
threshold to its largest (`mallopt`), so that a freed array's pages stay in the heap and the next
array takes them without a fault; `release_freed_memory`, called as each stage starts
(`linkage.progress.Clock.stage`), hands back what the last stage freed (`malloc_trim`), so that
one stage's leftovers do not add to the next stage's peak.

Arrays allocated on other threads come from glibc's per-thread arenas, whose heaps hold at most
64 MiB: larger ones are still mapped and unmapped there. The settings are the process's: the
library leaves them alone unless the command line (or a caller) asks."""

from __future__ import annotations

import os

M_TRIM_THRESHOLD = -1  # mallopt's parameters, from glibc's malloc.h
M_MMAP_THRESHOLD = -3
KEEP_BELOW = 1 << 30  # arrays up to this size come from the heap, not their own mapping
KEEP_FREE_TOP = (1 << 31) - 1  # the heap's free top is kept up to this (mallopt takes an int)
# The user's own malloc settings: where one is set, it stands.
USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                 "MALLOC_MMAP_MAX_")

_libc = None  # glibc, once `keep_freed_memory` has changed its settings


def keep_freed_memory() -> bool:
    """Keep freed memory in glibc's heap for the process's next arrays (see the module
    docstring). True where the settings changed; False where the C library is not glibc, the
    environment holds the user's own malloc settings (`MALLOC_*_`, `glibc.malloc` tunables),
    or they were already changed."""
    global _libc
    if _libc is not None or any(name in os.environ for name in USER_SETTINGS):
        return False
    if "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    import ctypes

    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return False
        libc = ctypes.CDLL(None)  # the C library this process runs on
        mallopt, _ = libc.mallopt, libc.malloc_trim  # both must exist
    except (ValueError, OSError, AttributeError, TypeError):  # not glibc, or no such names
        return False
    if not mallopt(M_MMAP_THRESHOLD, KEEP_BELOW):
        return False
    mallopt(M_TRIM_THRESHOLD, KEEP_FREE_TOP)
    _libc = libc
    return True


def release_freed_memory() -> None:
    """Hand the memory freed since the last call back to the system, where
    `keep_freed_memory` kept it (otherwise glibc does so itself: nothing to do)."""
    if _libc is not None:
        _libc.malloc_trim(0)
