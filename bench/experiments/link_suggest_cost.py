"""What the one-to-one evidence (`linkage.suggest_sources.repeats_within_sources`) adds to
suggesting rules for a link: the payments trap at 100k and 1M rows, `suggest_rules` whole
and the evidence alone, twice each. Usage: `python bench/experiments/link_suggest_cost.py`.
The results are in bench/RESULTS_suggest.md."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from linkage.blocking.choose import sample_table
from linkage.suggest import suggest_rules
from linkage.suggest_sources import repeats_within_sources
from linkage.synth import traps

for n in (100_000, 1_000_000):
    _, frames, _ = traps(n, trap="payments")
    for _ in range(2):
        start = time.perf_counter()
        suggestion = suggest_rules(frames)
        total = time.perf_counter() - start
        frame, source, _ = sample_table(frames)
        start = time.perf_counter()
        repeats_within_sources(frame, source, suggestion.rules)
        evidence = time.perf_counter() - start
        print(f"payments {n:,}: suggest {total:.2f} s, of which the one-to-one evidence "
              f"{evidence:.2f} s", flush=True)
