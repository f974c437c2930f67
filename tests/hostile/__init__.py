"""The hostile catalogue: bad inputs and faults a demanding data engineer tries (issue 13).

Each case asserts the exit code, that the message names the file, the key and the fix, and
that nothing outside `--out` changed. One module a class of fault.
"""
