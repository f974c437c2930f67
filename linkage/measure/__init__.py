"""How good a run is: the three ways linkage measures what the rules find.

- `evaluate.py`: accuracy against a truth table (record id → true entity): pairwise and
  B-cubed scores, exact clusters, blocking recall, precision/recall per threshold;
  `linkage evaluate` (`evaluate_run`) and `Linker.evaluate` (`evaluate_result`).
- `calibrate.py`: thresholds from labelled pairs: pairs sampled per score band for labelling
  (`linkage sample`), precision per band with its Wilson interval and the threshold that
  reaches a target precision (`calibrate.calibrate`: `linkage calibrate`, the report).
- `recall.py`: recall without truth, by injected duplicates: copies of records the rules
  leave alone, each with one perturbation of `linkage.synth.perturb`, counted as found when
  they end in their source's cluster (`linkage recall`, `measure_recall`).

The truth table is read here only (`read_truth`), never by a run. The old module names
`linkage.evaluate`, `linkage.calibrate` and `linkage.inject` give these same modules
(`linkage/_moved.py`).

The names below are found in their module when first asked for (`linkage.measure.wilson`
imports `calibrate.py` alone): a run that only needs `wilson` does not load the generators
`recall.py` perturbs with, and the package imports nothing that could close a circle. Code in
linkage imports the module that defines a name (`from linkage.measure.calibrate import
wilson`), so that `tests/test_imports.py` sees the edge. The function `calibrate` is not among
them: `linkage.measure.calibrate` is its module.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "evaluate": ("Scores", "blocking_report", "evaluate_result", "evaluate_run", "read_truth",
                 "score_clusters", "scores_by_threshold"),
    "calibrate": ("SCORE", "band_edges", "band_of", "read_run", "sample_pairs", "side_by_side",
                  "wilson"),
    "recall": ("KINDS", "Injection", "RecallReport", "inject", "measure_recall", "parse_kinds"),
}
_HOME = {name: f"{__name__}.{module}" for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name]), name)
    if name in _EXPORTS:  # a module not imported yet: `linkage.measure.recall.inject`
        return importlib.import_module(f"{__name__}.{name}")
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:  # what tab completion offers: the names and the modules
    return sorted({*__all__, *_EXPORTS})
