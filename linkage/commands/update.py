"""`linkage update` (being written)."""

from __future__ import annotations

import click


@click.command("update")
def command() -> None:
    """(Not yet available.)"""
    raise click.UsageError("linkage update is not available yet.")
