"""The labels file of a review: the sampled pairs side by side with a `label` column.

It is the very CSV that `linkage sample` writes and `linkage calibrate` reads, so a review can
stop at any time and its file is usable as it is. Every change rewrites the whole file through
a temporary file and a rename: a killed server leaves the old file or the new one, never half.
"""

from __future__ import annotations

import io
import os
import tempfile
import threading
from pathlib import Path

import pandas as pd

from linkage.errors import InputError, ParameterError

# What a person may have typed in the `label` column (the words `linkage calibrate` accepts,
# plus "unsure"), and what the review page writes back for each of its four states.
MATCH_WORDS = {"1", "1.0", "match", "yes", "true"}
NON_MATCH_WORDS = {"0", "0.0", "non-match", "no", "false"}
UNSURE_WORDS = {"unsure", "?"}
WRITTEN = {"match": "1", "non-match": "0", "unsure": "unsure", "": ""}
STATES = tuple(WRITTEN)
REQUIRED = ("id_l", "id_r", "match_weight", "match_probability", "label")


def label_state(text: str) -> str | None:
    """The review state ("match", "non-match", "unsure", "" for none) of a label as written,
    or None when the text is none of the accepted words."""
    word = text.strip().lower()
    if word == "":
        return ""
    if word in MATCH_WORDS:
        return "match"
    if word in NON_MATCH_WORDS:
        return "non-match"
    if word in UNSURE_WORDS:
        return "unsure"
    return None


def read_pairs_csv(path: Path, what: str) -> pd.DataFrame:
    """A pairs CSV read as text, every cell exactly as written, so rewriting it changes only
    the labels; unreadable files become an InputError that names the file and the fix."""
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a {what}. Pass the CSV file itself.")
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(f"{path}: cannot read the {what} ({reason}). Pass a CSV written by "
                         "`linkage sample` or `linkage review`, or another --labels file to "
                         "start afresh.") from None
    missing = [c for c in REQUIRED if c not in table.columns]
    if missing:
        names = ", ".join(f"`{c}`" for c in missing)
        raise InputError(f"{path}: the {what} has no column {names}. It must be the CSV that "
                         "`linkage sample` or `linkage review` writes (pairs side by side, with "
                         "`id_l`, `id_r`, the scores and a `label` column).")
    if table.empty:
        raise InputError(f"{path}: the {what} holds no pairs to review.")
    return table


def as_text_table(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` as the text table that reading its CSV gives back (the form the store keeps)."""
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    buffer.seek(0)
    return pd.read_csv(buffer, dtype=str, keep_default_na=False)


class LabelStore:
    """The pairs under review and their labels, kept in memory and on disk at `path`.

    Thread-safe: the server answers requests on several threads, and each change is written
    under one lock so two quick labels never interleave their files.
    """

    def __init__(self, table: pd.DataFrame, path: Path, *, source: Path | None = None):
        self.path = Path(path)
        self.table = table.reset_index(drop=True)
        self._lock = threading.Lock()
        where = source or self.path
        self.row_of: dict[tuple[str, str], int] = {}
        self.states: list[str] = []
        for row, (a, b, raw) in enumerate(zip(self.table["id_l"], self.table["id_r"],
                                              self.table["label"], strict=True)):
            if (a, b) in self.row_of:
                raise InputError(f"{where}: pair {a} ~ {b} appears twice (lines "
                                 f"{self.row_of[(a, b)] + 2} and {row + 2}). Keep one row per "
                                 "pair.")
            state = label_state(raw)
            if state is None:
                raise InputError(f"{where}: line {row + 2} (pair {a} ~ {b}) has label {raw!r}. "
                                 "Write 1 (match), 0 (non-match), unsure, or leave it blank.")
            self.row_of[(a, b)] = row
            self.states.append(state)

    @classmethod
    def open(cls, path: Path) -> LabelStore:
        """Resume the labels file at `path`."""
        return cls(read_pairs_csv(path, "labels file"), path)

    def __len__(self) -> int:
        return len(self.table)

    def counts(self) -> dict[str, int]:
        """How many pairs carry each label; "labelled" counts every decision, unsure included."""
        counts = {state or "unlabelled": self.states.count(state) for state in STATES}
        counts["labelled"] = len(self.states) - counts["unlabelled"]
        return counts

    def set(self, id_l: str, id_r: str, state: str) -> dict[str, int]:
        """Label one pair and save the file; returns the new counts."""
        if state not in WRITTEN:
            allowed = ", ".join(repr(s) for s in WRITTEN)
            raise ParameterError(f"`state` must be one of {allowed}. Got {state!r} instead.")
        row = self.row_of.get((id_l, id_r))
        if row is None:
            raise InputError(f"unknown pair {id_l!r} ~ {id_r!r}: it is not in {self.path}. "
                             "Reload the page to see the pairs under review.")
        with self._lock:
            previous = self.table.at[row, "label"], self.states[row]
            self.table.at[row, "label"] = WRITTEN[state]
            self.states[row] = state
            try:
                self.save()
            except OSError:
                self.table.at[row, "label"], self.states[row] = previous
                raise
            return self.counts()

    def save(self) -> None:
        """Write the table to `path` atomically: a temporary file beside it, then a rename."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp",
                                             dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
                self.table.to_csv(out, index=False)
                out.flush()
                os.fsync(out.fileno())
            # mkstemp makes the file private (0600); keep the mode the labels file had.
            mode = self.path.stat().st_mode & 0o777 if self.path.exists() else 0o644
            os.chmod(temporary, mode)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
