"""What a review holds: the pairs to label (sampled from a run, given as a `linkage sample` CSV,
or resumed from an earlier labels file), and for each pair the two records field by field with
every comparison's level, so the page can show why the scorer thought what it thought."""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from linkage.errors import InputError, LinkageError
from linkage.options import AutoScoreScale, ScoreScale
from linkage.review._labels import LabelStore, as_text_table, read_pairs_csv

PROBABILITY_BANDS = (0.6, 0.7, 0.8, 0.9)
# Rule sums have no probabilities: their bands are match weights around the run's threshold.
WEIGHT_STEPS = (-4.0, -2.0, 0.0, 2.0, 4.0)
BAND = re.compile(r"^\[\s*([^,\s]+)\s*,\s*([^)\s]+)\s*\)$")


def default_labels_path(run_dir: str | Path) -> Path:
    """`<run folder>.labels.csv`, beside the run folder and not inside it: a new run written
    to the same --out replaces the whole folder, and the labels must survive that."""
    run_dir = Path(run_dir)
    if not run_dir.name:  # "." or "/": name the file after the real folder
        run_dir = run_dir.resolve()
    return run_dir.parent / f"{run_dir.name}.labels.csv"


@dataclass
class Review:
    """The pairs under review, their labels on disk, and how to calibrate from them."""

    run_dir: Path
    store: LabelStore
    on: str
    bands: list[float]
    resumed: bool
    fields: list[str] = field(default_factory=list)
    details: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def labels_path(self) -> Path:
        return self.store.path

    def calibrate_command(self) -> str:
        """The `linkage calibrate` command that reads this review's labels with its bands."""
        args = ["linkage", "calibrate", str(self.run_dir), str(self.labels_path)]
        if self.on == "weight":
            args += ["--on", "weight"]
        args += ["--bands", ",".join(f"{b:g}" for b in self.bands)]
        return shlex.join(args)

    def payload(self) -> dict[str, Any]:
        """Everything the page shows, as JSON-ready data (values stay text; the page escapes
        them by only ever setting text, never markup)."""
        table = self.store.table
        sides = {side: [f"{name}_{side}" for name in self.fields] for side in ("l", "r")}
        pairs = []
        for row in range(len(table)):
            record = table.iloc[row]
            key = (record["id_l"], record["id_r"])
            pairs.append({
                "id_l": key[0],
                "id_r": key[1],
                "band": record.get("band", ""),
                "match_weight": record["match_weight"],
                "match_probability": record["match_probability"],
                "label": self.store.states[row],
                "left": [record.get(c) for c in sides["l"]],
                "right": [record.get(c) for c in sides["r"]],
                "comparisons": self.details.get(key, []),
            })
        return {
            "run_dir": str(self.run_dir),
            "labels_path": str(self.labels_path),
            "calibrate_command": self.calibrate_command(),
            "on": self.on,
            "fields": self.fields,
            "pairs": pairs,
        }


def active_labels_path(run_dir: str | Path) -> Path:
    """Where `review --active` keeps this round's labels: `<run>.labels.csv`, or the first of
    `<run>.labels-2.csv`, `-3`, ... that is new or still holds pairs the run did not use (an
    earlier round's file, all of whose pairs the run learned from, is left as it is)."""
    from linkage.active import used_labels

    first = default_labels_path(run_dir)
    used = used_labels(run_dir)
    done = set() if used is None else set(zip(used["id_l"], used["id_r"], strict=True))
    done |= {(b, a) for a, b in done}
    for k in range(1, 10_000):
        path = first if k == 1 else first.with_name(first.name.replace(".labels.csv",
                                                                      f".labels-{k}.csv"))
        if not path.exists():
            return path
        pairs = read_pairs_csv(path, "labels file")
        if not set(zip(pairs["id_l"], pairs["id_r"], strict=True)) <= done:
            return path
    raise InputError(f"{run_dir}: too many labels files beside it; pass --labels.")


def prepare(run_dir: str | Path, *, labels: str | Path | None = None,
            sample: str | Path | None = None, bands: list[float] | None = None,
            per_band: int = 50, on: AutoScoreScale = "auto", seed: int = 0,
            active: int | None = None) -> Review:
    """Load the run, then resume the labels file if it exists, else start it from `sample`
    (a `linkage sample` CSV), from the `active` pairs a label would teach the model most
    (`linkage sample --active --n ACTIVE`), or from a fresh sample of `per_band` pairs per
    score band. The labels file is written at once, so the pairs under review are fixed from
    the start. With `active` and no `labels`, the file is `active_labels_path(run_dir)`."""
    from linkage.result import Result

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InputError(f"{run_dir}: no such folder. Pass the --out folder of "
                         "`linkage dedupe` or `linkage link`.")
    result = Result.load(run_dir)
    if result.pairs is None:
        raise InputError(f"{run_dir}: not a run folder (no pairs.parquet). Pass the --out "
                         "folder of `linkage dedupe` or `linkage link`.")
    if on not in ("auto", "probability", "weight"):
        raise InputError(f"`on` must be 'auto', 'probability' or 'weight'. Got {on!r} instead.")
    if per_band < 1:
        raise InputError(f"--per-band must be at least 1. Got {per_band!r} instead.")
    if active is not None and sample is not None:
        raise InputError("--active picks the pairs itself; leave out --sample (or --active).")
    if labels is not None:
        path = Path(labels)
    elif active is not None:
        path = active_labels_path(run_dir)
    else:
        path = default_labels_path(run_dir)
    resumed = path.exists()
    if resumed:
        store = LabelStore.open(path)
        if sample is not None:
            _check_same_pairs(store, Path(sample))
    elif sample is not None:
        store = LabelStore(read_pairs_csv(Path(sample), "sample"), path, source=Path(sample))
    elif active is not None:
        from linkage.active import active_pairs

        store = LabelStore(as_text_table(active_pairs(run_dir, active, seed=seed)), path)
    else:
        on = _resolve_on(on, result.pairs)
        bands = list(bands) if bands else _default_bands(on, result)
        store = LabelStore(as_text_table(_sample(run_dir, bands, per_band, on, seed)), path)
    if not resumed:
        _save_new(store)
    if on == "auto":
        on = "probability" if has_probabilities(store.table["match_probability"]) else "weight"
    if not bands:
        bands = bands_of(store.table, on) or _default_bands(on, result)
    review = Review(run_dir=run_dir, store=store, on=on, bands=sorted(bands), resumed=resumed,
                    fields=_fields(store.table))
    review.details = _comparison_details(result, list(store.row_of))
    return review


def _sample(run_dir: Path, bands: list[float], per_band: int, on: str,
            seed: int) -> pd.DataFrame:
    from linkage.measure.calibrate import sample_pairs

    table = sample_pairs(run_dir, bands, per_band, on=on, seed=seed)
    if table.empty:
        edges = ", ".join(f"{b:g}" for b in sorted(bands))
        raise InputError(f"{run_dir}: no scored pair has a match {on} in the bands from "
                         f"{edges}. Pass other --bands (see the scores in pairs.parquet).")
    return table


def _save_new(store: LabelStore) -> None:
    try:
        store.save()
    except OSError as err:
        raise InputError(f"{store.path}: cannot write the labels file ({err.strerror or err}). "
                         "Pass a --labels path in a folder you can write to.") from None


def _check_same_pairs(store: LabelStore, sample: Path) -> None:
    given = read_pairs_csv(sample, "sample")
    if set(zip(given["id_l"], given["id_r"], strict=True)) != set(store.row_of):
        raise InputError(f"{store.path} already holds labels for other pairs than {sample}. "
                         "Pass another --labels file to label this sample, or leave out "
                         f"--sample to resume {store.path}.")


def has_probabilities(values: pd.Series) -> bool:
    numbers = pd.to_numeric(values, errors="coerce")
    return bool(numbers.notna().any())


def _resolve_on(on: AutoScoreScale, pairs: pd.DataFrame) -> ScoreScale:
    if on != "auto":
        return on
    return "probability" if has_probabilities(pairs["match_probability"]) else "weight"


def _default_bands(on: ScoreScale, result) -> list[float]:
    if on == "probability":
        return list(PROBABILITY_BANDS)
    threshold = float(getattr(result.scorer, "threshold", 0.0))
    return [threshold + step for step in WEIGHT_STEPS]


def bands_of(table: pd.DataFrame, on: ScoreScale) -> list[float] | None:
    """The band edges a sample was drawn with, read back from its `band` column ("[0.6, 0.7)"),
    so that resuming proposes the same `linkage calibrate --bands`."""
    if "band" not in table.columns:
        return None
    lows, highs = set(), set()
    for text in table["band"].unique():
        match = BAND.match(str(text))
        if match is None:
            return None
        try:
            low, high = float(match.group(1)), float(match.group(2))
        except ValueError:
            return None
        lows.add(low)
        highs.add(high)
    top = max(highs)
    if math.isinf(top) or (on == "probability" and top >= 1 and top not in lows):
        highs.discard(top)  # the open top of the last band is not an edge anyone chose
    return sorted(lows | highs) or None


def _fields(table: pd.DataFrame) -> list[str]:
    """Record fields in file order: columns `<name>_l` / `<name>_r`, ids and scores aside."""
    names: list[str] = []
    for column in table.columns:
        if column in ("id_l", "id_r") or not column.endswith(("_l", "_r")):
            continue
        name = column[:-2]
        if name not in names:
            names.append(name)
    return names


def _number(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else round(value, 6)


def _comparison_details(result, keys: list[tuple[str, str]]) -> dict:
    """Each reviewed pair's comparisons (level, similarity, contribution to the match weight)
    from the run's pairs.parquet; pairs the run never scored get none."""
    pairs = result.pairs
    wanted = set(keys)
    key_l, key_r = pairs["id_l"].astype(str), pairs["id_r"].astype(str)
    found = [(a, b) in wanted for a, b in zip(key_l, key_r, strict=True)]
    subset = pairs[found]
    if subset.empty:
        return {}
    subset_keys = list(zip(key_l[found], key_r[found], strict=True))
    tables = _contributions(subset, result)
    columns = {c.output_name: c.column for c in result.rules.comparisons}
    details: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for index, key in enumerate(subset_keys):
        if tables is None:
            rows = _levels_only(subset.iloc[index], result.rules)
        else:
            rows = [{"name": t["comparison"], "column": columns.get(t["comparison"], ""),
                     "level": t["level"], "similarity": _number(t["similarity"]),
                     "contribution": _number(t["contribution"])}
                    for _, t in tables[index].iterrows() if t["comparison"] != "(prior)"]
        details[key] = rows
    return details


def _contributions(pairs: pd.DataFrame, result) -> list[pd.DataFrame] | None:
    """Each pair's table of comparisons with their contributions, or None when the run's
    scorer cannot explain itself (the page then shows levels without weights)."""
    from linkage.errors import NotFittedError
    from linkage.explain import contributions_table

    try:
        return contributions_table(pairs, result.rules, result.scorer)
    except NotFittedError:
        scorer = _fitted_without_data(result, pairs)
    except (LinkageError, ValueError):
        return None
    if scorer is None:
        return None
    try:
        return contributions_table(pairs, result.rules, scorer)
    except (LinkageError, ValueError):
        return None


def _fitted_without_data(result, pairs: pd.DataFrame):
    """A run saved without model.json (a rule sum) is read back with its scorer unfitted; the
    rule sum learns nothing from data, so fitting it on no pairs gives its weights (as
    `linkage explain` does)."""
    import copy

    from linkage.run.disk import comparison_matrix

    try:
        return copy.deepcopy(result.scorer).fit(comparison_matrix(pairs.iloc[:0], result.rules))
    except (LinkageError, ValueError):
        return None


def _levels_only(pair: pd.Series, rules) -> list[dict[str, Any]]:
    return [{"name": c.output_name, "column": c.column,
             "level": c.label_of(int(pair[f"{c.output_name}_level"])),
             "similarity": _number(pair[f"{c.output_name}_similarity"]), "contribution": None}
            for c in rules.comparisons]
