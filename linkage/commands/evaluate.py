"""`linkage evaluate` (being written)."""

from __future__ import annotations

import click


@click.command("evaluate")
def command() -> None:
    """(Not yet available.)"""
    raise click.UsageError("linkage evaluate is not available yet.")
