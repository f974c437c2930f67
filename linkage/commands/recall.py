"""`linkage recall` (being written)."""

from __future__ import annotations

import click


@click.command("recall")
def command() -> None:
    """(Not yet available.)"""
    raise click.UsageError("linkage recall is not available yet.")
