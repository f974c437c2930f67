"""The one family of errors that `linkage` raises on purpose.

Every message says what was expected, what was found, and how to fix it. The CLI maps
`LinkageError` to exit code 2 (bad input or rules); anything else is a bug in linkage (exit 4).
"""

from __future__ import annotations


class LinkageError(Exception):
    """Base class of every error `linkage` raises about its input or its rules."""


class RulesError(LinkageError):
    """A rules file or `Rules` object is invalid: a missing key, a wrong type, an unknown name."""


class ParameterError(RulesError, ValueError):
    """A parameter of a function or rule is out of its range (`bands: 0`, a threshold of 1.5).
    Also a `ValueError`, as Python's own functions raise for a bad argument."""


class InputError(LinkageError):
    """An input table cannot be used as it is: missing column, empty table, duplicate ids."""


class EngineError(InputError):
    """The chosen engine cannot run these rules or options (a stage, blocker or scorer it does
    not run, `--labels` or `--resume` where it has no such step); the message names the rules
    key or option and the engine that runs it. Also an `InputError`: the CLI exits 2."""


class BudgetError(LinkageError):
    """Blocking would produce more candidate pairs than the configured budget allows."""


class NotFittedError(LinkageError):
    """An estimator was used before `fit` was called."""


def user_stacklevel() -> int:
    """The `stacklevel` for `warnings.warn` that points at the first line outside linkage (the
    user's call), however deep in the library the warning is raised: called in the argument
    list of that `warnings.warn`."""
    import inspect
    import os

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = inspect.currentframe().f_back, 1  # the function that warns: stacklevel 1
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            package):
        frame, level = frame.f_back, level + 1
    return level


class LinkageWarning(UserWarning):
    """Something the user should know about, that did not stop the run (a skipped block)."""
