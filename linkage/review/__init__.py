"""A local page to label sampled pairs: match, non-match or unsure, saved as you go.

::

    from linkage.review import serve

    server = serve("out/customers", per_band=20).start()
    print(server.url)          # http://127.0.0.1:<port>/ ; labels go to out/customers.labels.csv
    ...
    server.shutdown()

The labels file is the CSV that `linkage sample` writes with its `label` column filled in (1,
0, unsure or blank), so `linkage calibrate` reads it as it is. The server (standard library
only) listens on 127.0.0.1 and nowhere else; it is loaded only when a review starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from linkage.options import AutoScoreScale
from linkage.review._labels import label_state, read_pairs_csv
from linkage.review._review import (
    PROBABILITY_BANDS,
    bands_of,
    default_labels_path,
    has_probabilities,
)

if TYPE_CHECKING:
    from linkage.review._server import ReviewServer

__all__ = ["PROBABILITY_BANDS", "bands_of", "default_labels_path", "has_probabilities",
           "label_state", "read_pairs_csv", "serve"]


def serve(run_dir: str | Path, *, labels: str | Path | None = None,
          sample: str | Path | None = None, bands: list[float] | None = None,
          per_band: int = 50, on: AutoScoreScale = "auto", seed: int = 0, port: int = 0,
          active: int | None = None) -> ReviewServer:
    """A review server for the run in `run_dir`, bound to 127.0.0.1:`port` (0: any free port)
    but not yet serving: call `start()` to serve on a background thread, or `serve_forever()`
    to serve on this one; `shutdown()` stops it.

    The pairs are resumed from `labels` when that file exists (default: `<run_dir>.labels.csv`
    beside the run folder), else taken from `sample` (a `linkage sample` CSV), else sampled:
    `per_band` pairs per score band with `seed`. `on` is "probability", "weight" or "auto"
    (probabilities when the run's scorer gives them); `bands` defaults to 0.6, 0.7, 0.8, 0.9
    for probabilities and to the run's threshold -4, -2, 0, +2, +4 for match weights.
    `active` (a number of pairs) reviews the pairs a label would teach the model most, as
    `linkage sample --active` picks them, in `<run_dir>.labels.csv` (or `.labels-2.csv` ...
    once the run learned from that one), to rerun with `--labels`.
    """
    from linkage.review._review import prepare
    from linkage.review._server import ReviewServer

    review = prepare(run_dir, labels=labels, sample=sample, bands=bands, per_band=per_band,
                     on=on, seed=seed, active=active)
    return ReviewServer(review, port=port)
