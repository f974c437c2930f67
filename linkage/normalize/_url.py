"""URLs: one spelling per page, so a page crawled twice is recognised."""

from __future__ import annotations

import unicodedata
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pandas as pd

from ._text import check_series, map_unique

# Query parameters that say how a visitor arrived, not which page it is.
_TRACKING = ("utm_", "fbclid", "gclid", "mc_cid", "mc_eid", "ref", "ref_src", "igshid")
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def _canonical(url: str) -> str | None:
    text = unicodedata.normalize("NFKC", url).strip()
    if not text:
        return None
    try:
        return _parsed(text)
    except ValueError:  # not a URL urllib can read (a bad port, a broken [ipv6] host)
        return " ".join(text.lower().split())


def _parsed(text: str) -> str:
    if "://" not in text:
        text = "http://" + text  # "example.com/a" and "http://example.com/a" are one page
    parts = urlsplit(text)
    original = parts.scheme.lower()
    scheme = "https" if original == "http" else original  # the same page served over both
    host = (parts.hostname or "").lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    port = parts.port
    default = port is None or str(port) == _DEFAULT_PORTS.get(original)
    netloc = host if default else f"{host}:{port}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/")
    query = sorted(
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith(_TRACKING)
    )
    return urlunsplit((scheme, netloc, path, urlencode(query), ""))


def normalize_url(values: pd.Series) -> pd.Series:
    """Canonical URLs: scheme and host lower-cased (http as https), `www.` and default ports
    dropped, the fragment and tracking parameters (utm_*, fbclid, gclid, ...) removed, the
    other parameters sorted, a trailing slash removed. Text that is not a URL is read as a
    host and path ("example.com/a"). No options."""
    check_series(values, "url")
    return map_unique(values, _canonical)
