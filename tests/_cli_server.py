"""A warm start for the suite's command-line runs: `python -m linkage ...` without paying for
Python's and pandas' imports every time.

`python -m tests._cli_server SOCKET` imports what every command imports (linkage's command
line, pandas, pyarrow, scikit-learn, ...), then listens on a Unix socket. Each connection asks
for one run (arguments, working folder, environment, and two files for its output); the
server forks, and the child becomes that run: it moves to the folder, takes the environment,
points its standard output and error at the files, runs `linkage`'s `main` as `python -m
linkage` would, runs the exit handlers, and exits with the command's code. So each run is still
a process of its own, started from a state where nothing has run yet, only imported; the
parent (tests/conftest.py `run_cli`) gets the same exit code and output a fresh process gives.

What a fork shares that a fresh process would not: the hash seed of `str` (so a fresh process
per run would vary it; tests/test_contract.py checks that the output does not depend on it,
with real processes and different `PYTHONHASHSEED`s) and modules imported before the fork.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import sys
import traceback


def _preload() -> None:
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow
    import pyarrow.parquet  # noqa: F401
    import rapidfuzz  # noqa: F401
    import scipy.sparse  # noqa: F401
    import sklearn.linear_model  # noqa: F401
    import yaml  # noqa: F401

    import linkage.cli
    import linkage.pipeline  # noqa: F401


def _run(request: dict) -> int:
    """Become the run: the body of the forked child. Returns the exit code."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    stdin = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(stdin, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in (stdin, out, err):
        os.close(fd)
    sys.argv = [os.path.join(os.path.dirname(__import__("linkage").__file__), "__main__.py"),
                *request["args"]]
    code = 0
    try:
        from linkage.cli import main

        main()
    except SystemExit as stop:  # as the interpreter reads it
        if stop.code is None:
            code = 0
        elif isinstance(stop.code, int):
            code = stop.code
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 130
    except BaseException:  # an uncaught error: the traceback, exit 1
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
    return code


def serve(path: str) -> None:
    _preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        with connection.makefile("rb") as stream:
            line = stream.readline()
        if not line:
            connection.close()
            continue
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the run
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            code = 4
            try:
                connection.sendall(f"{os.getpid()}\n".encode())
                code = _run(request)
            finally:
                try:
                    connection.sendall(f"{code}\n".encode())
                finally:
                    os._exit(code)
        connection.close()


if __name__ == "__main__":
    serve(sys.argv[1])
