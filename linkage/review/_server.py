"""The review server: the standard library's threading HTTP server on 127.0.0.1 only.

It answers only requests addressed to 127.0.0.1 or localhost (a web page elsewhere cannot
rebind its own host name to this port), takes labels only as JSON (so a cross-site form cannot
post one), and sends the page with a strict content security policy.
"""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from linkage.errors import InputError
from linkage.review._labels import STATES
from linkage.review._review import Review

HOST = "127.0.0.1"
ALLOWED_HOSTS = {"127.0.0.1", "localhost"}
MAX_BODY = 64 * 1024
STATIC = {
    "/": ("page.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/favicon.svg": ("favicon.svg", "image/svg+xml"),
}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class BadRequest(Exception):
    """A request the server refuses, with the HTTP status and a message for the person."""

    def __init__(self, status: HTTPStatus, message: str):
        super().__init__(message)
        self.status = status


def _static(name: str) -> bytes:
    return resources.files("linkage.review").joinpath("static", name).read_bytes()


class ReviewServer(ThreadingHTTPServer):
    """The page and its small JSON API for one review. `start()` serves on a background
    thread; `shutdown()` stops it and closes the socket. `url` is where the page is."""

    daemon_threads = True
    block_on_close = False  # a browser's idle connection must not hold up shutdown

    def __init__(self, review: Review, port: int = 0):
        self.review = review
        self._thread: threading.Thread | None = None
        try:
            super().__init__((HOST, port), _Handler)
        except OSError as err:
            raise InputError(f"cannot listen on {HOST}:{port} ({err.strerror or err}). Pass "
                             "another --port, or --port 0 for any free one.") from None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"

    @property
    def labels_path(self):
        return self.review.labels_path

    def start(self) -> ReviewServer:
        """Serve on a daemon thread and return at once (for tests and notebooks)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve_forever, name="linkage-review",
                                            daemon=True)
            self._thread.start()
        return self

    def shutdown(self) -> None:
        """Stop serving (when started) and close the listening socket."""
        if self._thread is not None:
            super().shutdown()
            self._thread.join()
            self._thread = None
        self.server_close()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


class _Handler(BaseHTTPRequestHandler):
    server: ReviewServer
    server_version = "linkage-review"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the URL and errors, not every request."""

    def do_GET(self) -> None:
        self._answer(self._get)

    def do_POST(self) -> None:
        self._answer(self._post)

    def _answer(self, route) -> None:
        try:
            self._check_host()
            route(urlsplit(self.path).path)
        except BadRequest as err:
            self._json(err.status, {"error": str(err)})
        except InputError as err:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(err)})
        except OSError as err:
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR,
                       {"error": f"could not save the labels to {self.server.labels_path}: "
                                 f"{err.strerror or err}"})

    def _check_host(self) -> None:
        host = self.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if not host.startswith("[") else host
        if name.lower() not in ALLOWED_HOSTS:
            raise BadRequest(HTTPStatus.FORBIDDEN,
                             f"linkage review answers only requests addressed to 127.0.0.1 or "
                             f"localhost, not Host {host!r}. Open {self.server.url} instead.")

    def _check_origin(self) -> None:
        origin = self.headers.get("Origin")
        if origin is None:
            return
        name = urlsplit(origin).hostname or ""
        if name.lower() not in ALLOWED_HOSTS:
            raise BadRequest(HTTPStatus.FORBIDDEN,
                             f"labels are accepted only from the review page itself, not from "
                             f"{origin!r}.")

    def _get(self, path: str) -> None:
        if path == "/api/pairs":
            self._json(HTTPStatus.OK, self.server.review.payload())
        elif path in STATIC:
            name, kind = STATIC[path]
            headers = {"Content-Security-Policy": CSP} if name.endswith(".html") else {}
            self._send(HTTPStatus.OK, _static(name), kind, headers)
        else:
            raise BadRequest(HTTPStatus.NOT_FOUND, f"no page at {path!r}; open / instead.")

    def _post(self, path: str) -> None:
        if path != "/api/label":
            raise BadRequest(HTTPStatus.NOT_FOUND, f"nothing to post to at {path!r}; labels go "
                                                   "to /api/label.")
        self._check_origin()
        body = self._body()
        counts = self.server.review.store.set(body["id_l"], body["id_r"], body["label"])
        self._json(HTTPStatus.OK, {"saved": True, "counts": counts})

    def _body(self) -> dict[str, str]:
        """The POSTed label: a JSON object {"id_l", "id_r", "label"}, checked key by key."""
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise BadRequest(HTTPStatus.BAD_REQUEST,
                             f"send the label as JSON (Content-Type: application/json), not "
                             f"{kind or 'no Content-Type'!r}.")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            raise BadRequest(HTTPStatus.BAD_REQUEST, "the request needs a Content-Length "
                                                     "header.") from None
        if not 0 < length <= MAX_BODY:
            raise BadRequest(HTTPStatus.BAD_REQUEST, f"the body must be 1 to {MAX_BODY} bytes "
                                                     f"of JSON. Got {length} bytes.")
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise BadRequest(HTTPStatus.BAD_REQUEST,
                             f"the body is not valid JSON ({err}).") from None
        if not isinstance(body, dict):
            raise BadRequest(HTTPStatus.BAD_REQUEST, 'the body must be a JSON object like '
                             '{"id_l": "A", "id_r": "B", "label": "match"}.')
        for key in ("id_l", "id_r", "label"):
            if not isinstance(body.get(key), str):
                raise BadRequest(HTTPStatus.BAD_REQUEST,
                                 f"`{key}` must be a string. Got {body.get(key)!r} instead.")
        if body["label"] not in STATES:
            allowed = ", ".join(repr(s) for s in STATES)
            raise BadRequest(HTTPStatus.BAD_REQUEST, f"`label` must be one of {allowed}. Got "
                                                     f"{body['label']!r} instead.")
        return body

    def _json(self, status: HTTPStatus, data: dict[str, Any]) -> None:
        body = json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def _send(self, status: HTTPStatus, body: bytes, kind: str,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
