"""Moved to `linkage.report.charts`; `linkage.charts` stays the same module for existing code."""

import sys

from linkage.report import charts

sys.modules[__name__] = charts
