"""A warm start for the suite's command-line runs: `python -m linkage ...` without paying for
Python's and pandas' imports every time.

`python -m tests._cli_server SOCKET` imports what every command imports (linkage's command
line, pandas, pyarrow, scikit-learn, ...), then listens on a Unix socket. Each connection asks
for one run: a JSON line (arguments, working folder, environment) sent with three file
descriptors (the run's standard input, output and error). The server forks, and the child
becomes that run: it moves to the folder, takes the environment and the descriptors, runs
`linkage`'s `main` as `python -m linkage` would, runs the exit handlers, and exits with the
command's code, which it also writes back on the connection (after its process id, so a client
can pass a signal on). So each run is still a process of its own, started from a state where
nothing has run yet, only imported; its output goes where a fresh process's would, as it is
written. `tests/conftest.py` `run_cli` and the `linkage` of tests/test_readme.py are clients
(`client`).

What a fork shares that a fresh process would not: the hash seed of `str` (so a fresh process
per run would vary it; tests/test_contract.py checks that the output does not depend on it,
with real processes and different `PYTHONHASHSEED`s) and modules imported before the fork.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import locale
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


def _run(request: dict, fds: list[int]) -> int:
    """Become the run: the body of the forked child. Returns the exit code."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    # The streams as a fresh interpreter would set them up for these descriptors and this
    # environment: line-buffered on a terminal (stderr always), unbuffered under
    # PYTHONUNBUFFERED, in PYTHONIOENCODING's encoding.
    encoding = (os.environ.get("PYTHONIOENCODING") or "").split(":")[0] or \
        locale.getpreferredencoding(False)
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))

    def stream(fd: int, errors: str) -> io.TextIOWrapper:
        raw = io.FileIO(fd, "w", closefd=False)
        return io.TextIOWrapper(raw if unbuffered else io.BufferedWriter(raw),
                                encoding=encoding, errors=errors,
                                line_buffering=fd == 2 or os.isatty(fd),
                                write_through=unbuffered)

    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r",
                                                                             closefd=False)),
                                                 encoding=encoding)
    sys.stdout = sys.__stdout__ = stream(1, "strict")
    sys.stderr = sys.__stderr__ = stream(2, "backslashreplace")
    sys.argv = [os.path.join(os.path.dirname(__import__("linkage").__file__), "__main__.py"),
                *request["args"]]
    code = 0
    try:
        from linkage.cli import main

        main(prog_name="python -m linkage")  # as click names a fresh `python -m linkage`
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


def _receive(connection: socket.socket) -> tuple[dict | None, list[int]]:
    data, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    while data and not data.endswith(b"\n"):
        more = connection.recv(1 << 20)
        if not more:
            break
        data += more
    return (json.loads(data) if data.strip() else None), list(fds)


def serve(path: str) -> None:
    _preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        request, fds = _receive(connection)
        if request is None or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            connection.close()
            continue
        pid = os.fork()
        if pid == 0:  # the run
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            # Ctrl-C stops a run as it stops `python -m linkage` in a terminal, even where the
            # server was started with SIGINT ignored (a suite run as a background job).
            signal.signal(signal.SIGINT, signal.default_int_handler)
            code = 4
            try:
                connection.sendall(f"{os.getpid()}\n".encode())
                code = _run(request, fds)
            except BaseException:  # the server's own fault: said where the run's errors go
                traceback.print_exc()
                sys.stderr.flush()
            finally:
                try:
                    connection.sendall(f"{code}\n".encode())
                finally:
                    os._exit(code)
        for fd in fds:
            os.close(fd)
        connection.close()


def client(path: str, args: list[str], cwd: str, env: dict, fds: tuple[int, int, int],
           timeout: float | None = None, relay: bool = False) -> int:
    """Ask the server at `path` for `linkage ARGS` with these standard descriptors; the exit
    code. With `relay` (a client process standing for the run), SIGINT and SIGTERM sent to the
    caller pass on to the run. On `timeout` (seconds) the run is killed and TimeoutError
    raised."""
    run = {"pid": 0}
    early: list[int] = []  # signals that came before the run's pid: passed on once it is known

    def forward(signum, frame):
        if not run["pid"]:
            early.append(signum)
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(run["pid"], signum)

    # Installed before the request: on a loaded machine the run may print (and its caller
    # answer with Ctrl-C) before this process has read the run's pid.
    for signum in (signal.SIGINT, signal.SIGTERM) if relay else ():
        signal.signal(signum, forward)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        request = json.dumps({"args": list(args), "cwd": cwd, "env": env}) + "\n"
        socket.send_fds(connection, [request.encode()], list(fds))
        connection.settimeout(timeout)
        with connection.makefile("rb") as reply:
            pid = run["pid"] = int(reply.readline() or 0)
            for signum in early if pid else ():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signum)
            try:
                line = reply.readline()
            except TimeoutError:
                line = b""
            if not line.strip():
                if pid:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                raise TimeoutError(f"linkage {' '.join(args)}: no exit code")
    return int(line)


if __name__ == "__main__":
    if sys.argv[1] == "--client":  # `linkage ARGS` through the server (tests/test_readme.py)
        sys.exit(client(sys.argv[2], sys.argv[3:], os.getcwd(), dict(os.environ), (0, 1, 2),
                        relay=True))
    serve(sys.argv[1])
