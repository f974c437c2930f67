"""The run core every engine shares (docs/ARCHITECTURE.md).

`state.RunState` is one run between its stages; an engine fills it up to scoring and
`finish.finish` does the rest (guard → cluster → keep → outputs → summary → report), with the
output files built by `outputs` and summary.json by `summary`.
"""
