"""linkage: find the records that describe the same thing, and remove, link or flag them.

A small façade; everything else lives in modules named for what they hold::

    import linkage as lk

    customers = lk.read("sample_data/customers.csv")
    rules = lk.Rules.from_yaml("rules/customers.yaml")
    run = lk.dedupe(customers, rules)
    run.summary(); run.clusters.head()

    linker = lk.Linker().fit("sample_data/customers.csv")   # fitted once (notebooks)
    linker.cluster(threshold=8); linker.predict(); linker.explain("C-000019")
"""

from __future__ import annotations

from linkage import _moved
from linkage.api import dedupe, link
from linkage.errors import LinkageError
from linkage.gate import check
from linkage.io import read
from linkage.linker import Linker
from linkage.result import Result
from linkage.settings import Normalize, Rules
from linkage.version import __version__

_moved.install()  # `import linkage.evaluate` and the other old module names still work

__all__ = ["LinkageError", "Linker", "Normalize", "Result", "Rules", "__version__", "check",
           "dedupe", "link", "read"]
