"""Data-quality gates: Great Expectations expectations in `linkage.checks.gx` (which imports
GX, so it is never imported from here), built on the plain-pandas measurements in
`linkage.checks.measures`."""
