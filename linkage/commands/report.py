"""`linkage report` (being written)."""

from __future__ import annotations

import click


@click.command("report")
def command() -> None:
    """(Not yet available.)"""
    raise click.UsageError("linkage report is not available yet.")
