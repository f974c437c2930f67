"""Timing a run's stages and showing its progress: one reporter (tqdm) for every engine and
command, so that no stage of a long run is silent.

`Clock` times the stages (summary.json's `timings`) and, where progress is on, shows a stage
line (which stage runs, how many are done, the time so far); `progress_bar` is the step bar of
a stage that counts steps (blocking keys, comparison chunks), shown under the stage line;
`stage_line` is a one-stage line for work outside a run (suggesting rules, writing). Progress
is on where asked (`--progress`, `progress=True`), off where not, and by default (None) when
standard error is a terminal, so that logs and pipes get no bars.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from linkage._malloc import release_freed_memory


@dataclass
class Clock:
    """The run's stage timings (summary.json's `timings`) and, where `progress` is on (None:
    when standard error is a terminal), its stage line: which stage runs, how many are done
    and the time so far, above the step bars of the stages that count steps (`progress_bar`),
    so that no stage of a long run is silent."""

    timings: dict[str, float] = field(default_factory=dict)
    progress: bool | None = False
    line: Any = None
    # Told each stage's name as it starts (the Spark engine names its jobs by it).
    on_stage: Callable[[str], None] | None = None

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        release_freed_memory()  # what the last stage freed (where the command line kept it)
        if self.on_stage is not None:
            self.on_stage(name)
        line = self._line()
        if line is not None:
            line.set_description_str(f"linkage: {name}")
        yield
        self.timings[name] = round(time.perf_counter() - start, 4)
        if line is not None:
            line.update(1)

    def _line(self):
        if self.line is None and _shown(self.progress):
            from tqdm.auto import tqdm

            self.line = tqdm(desc="linkage", unit="stage", leave=False,
                             bar_format="{desc} ({n_fmt} stages done, {elapsed})")
        return self.line

    def close(self) -> None:
        if self.line is not None:
            self.line.close()
            self.line = None


def _shown(enabled: bool | None) -> bool:
    return sys.stderr.isatty() if enabled is None else bool(enabled)


def progress_bar(total: int, desc: str, enabled: bool | None):
    disable = not _shown(enabled)
    if disable:  # tqdm.auto warns in a notebook without ipywidgets even for a hidden bar
        from tqdm import tqdm
    else:
        from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, disable=disable, leave=False, unit="step")



@contextmanager
def stage_line(name: str, enabled: bool | None) -> Iterator[None]:
    """A stage line for one piece of work outside a run's stages (suggesting rules, writing
    the outputs), closed when it ends."""
    clock = Clock(progress=enabled)
    try:
        with clock.stage(name):
            yield
    finally:
        clock.close()
