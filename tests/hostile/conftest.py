"""Helpers for the hostile catalogue: the real CLI, and proof that nothing else changed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_clis

__all__ = ["assert_unchanged_outside", "run_cli", "run_clis", "snapshot"]


def snapshot(folder: Path) -> dict[str, str]:
    """Every file below `folder` (hidden ones too) with a hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def assert_unchanged_outside(before: dict[str, str], after: dict[str, str], out: str) -> None:
    """Files outside the `out` folder (relative to the snapshot root) are the same bytes, and
    nothing new appeared beside it (no staging folders, no spills)."""
    def outside(files: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in files.items() if k != out and not k.startswith(out + "/")}

    assert outside(after) == outside(before)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A folder of its own for one case, so that a snapshot sees only that case's files."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder
