"""Data-quality gates: Great Expectations expectations in `linkage.checks.gx`."""
