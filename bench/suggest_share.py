"""How much of a run suggesting rules takes (issue 18, target 2: at most 5%).

    python bench/suggest_share.py --rows 1000000            # suggest, then the whole run
    python bench/suggest_share.py --rows 10000000 --no-run  # suggest only (memory)
    python bench/suggest_share.py --rows 1000000 --parts    # and the time of each part

Builds the persons table (`linkage.synth.traps(rows, seed=2, trap="persons")`), writes it to
Parquet, and times in one process: reading it, `suggest_rules` on it, and (unless --no-run) the
run `linkage.api.dedupe` with the rules it suggested. Wall and CPU seconds of this process are
printed; the share is the suggestion's wall time over the run's plus the suggestion's (a run
without rules is read, suggest, run). The machine's load average is printed with each figure:
on a shared machine only figures from one invocation compare.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def _timed(what: str, fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{what:10s} wall {wall:7.2f} s  cpu {cpu:7.2f} s  load {os.getloadavg()[0]:.2f}",
          flush=True)
    return out, wall


# The parts of `suggest_rules` timed with --parts: (module, function), where the checkout has
# them (before and after a change, the names may differ).
PARTS = [("linkage.suggest", "_profiles"), ("linkage.suggest", "profile_table"),
         ("linkage.suggest", "sample_table"),
         ("linkage.suggest", "_id_column"), ("linkage.suggest", "_phone_step"),
         ("linkage.suggest", "_normalized"), ("linkage.suggest", "_coded"),
         ("linkage.suggest", "choose_keys"), ("linkage.suggest", "_derived_columns"),
         ("linkage.suggest_text", "text_rules")]


def _time_parts() -> dict[str, float]:
    """Wrap the PARTS this checkout has so that each adds its wall seconds to the dict."""
    import functools
    import importlib

    spent: dict[str, float] = {}
    for module_name, name in PARTS:
        module = importlib.import_module(module_name)
        fn = getattr(module, name, None)
        if fn is None:
            continue

        def timed(*args, _fn=fn, _name=name, **kwargs):
            start = time.perf_counter()
            try:
                return _fn(*args, **kwargs)
            finally:
                spent[_name] = spent.get(_name, 0.0) + time.perf_counter() - start

        setattr(module, name, functools.wraps(fn)(timed))
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--no-run", action="store_true", help="time suggest only")
    parser.add_argument("--repeat", type=int, default=2, help="suggest this many times (best)")
    parser.add_argument("--work", type=Path, default=None, help="folder for the Parquet file")
    parser.add_argument("--parts", action="store_true",
                        help="also print the wall time of each part of the fastest suggestion")
    args = parser.parse_args()

    import linkage
    from linkage.io import read
    from linkage.suggest import suggest_rules

    print(f"linkage from {Path(linkage.__file__).parent}")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _versions import packages_line

    print(packages_line())
    work = args.work or Path(tempfile.mkdtemp(prefix="suggest_share_"))
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"persons_{args.rows}.parquet"
    if not path.exists():
        from linkage.synth import traps

        _, frames, _ = traps(args.rows, seed=2, trap="persons")
        frames[0].to_parquet(path, index=False)
    frame, _ = _timed("read", lambda: read(path))
    best, best_parts = None, {}
    spent = _time_parts() if args.parts else {}
    for _ in range(args.repeat):
        spent.clear()
        suggestion, wall = _timed("suggest", lambda: suggest_rules([frame]))
        if best is None or wall < best:
            best, best_parts = wall, dict(spent)
    if best_parts:
        print("parts     " + "  ".join(f"{k} {v:.3f}" for k, v in best_parts.items()) +
              f"  other {best - sum(best_parts.values()):.3f}")
    if args.no_run:
        return
    from linkage.api import dedupe

    _, run = _timed("run", lambda: dedupe(path, suggestion.rules))
    print(f"suggest {best:.2f} s of a run without rules of {run + best:.2f} s: "
          f"{best / (run + best):.1%}")


if __name__ == "__main__":
    main()
