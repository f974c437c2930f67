"""The Spark engine (being written)."""

from __future__ import annotations


def run_spark(mode, tables, rules, *, id_column=None, master="local[2]", progress=None, model=None):
    raise NotImplementedError("the Spark engine is not available yet")
