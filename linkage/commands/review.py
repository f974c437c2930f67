"""`linkage review` (being written)."""

from __future__ import annotations

import click


@click.command("review")
def command() -> None:
    """(Not yet available.)"""
    raise click.UsageError("linkage review is not available yet.")
