"""Headless Chromium for the page tests: the machine's Debian Chromium (/usr/bin/chromium),
driven by Playwright; no browser is downloaded. Flags keep it off the (closed) network."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str:
    path = os.environ.get("LINKAGE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        raise RuntimeError(
            "Chromium is not installed: `make test` installs Debian's chromium package "
            "(apt-get install chromium), or set LINKAGE_CHROMIUM to a Chromium binary."
        )
    return path


@contextmanager
def chromium_page():
    """A fresh Playwright page in headless Chromium with an empty profile; yields (page,
    console_errors, page_errors), lists that fill as the page logs errors."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="linkage-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile, executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = context.new_page()
                console_errors: list[str] = []
                page_errors: list[str] = []
                page.on("console", lambda m: console_errors.append(m.text)
                        if m.type == "error" else None)
                page.on("pageerror", lambda e: page_errors.append(str(e)))
                yield page, console_errors, page_errors
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def png_pixels(png: bytes) -> list[tuple[int, ...]]:
    """Every pixel of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots
    are), as tuples, row by row: enough for a test to look at a screenshot without an imaging
    library."""
    import struct
    import zlib

    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, data, width = 8, b"", 0
    channels = depth = 0
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        body = png[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, _, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            channels = {2: 3, 6: 4}.get(color, 0)
            assert depth == 8 and channels and not interlace, (depth, color, interlace)
        elif kind == b"IDAT":
            data += body
        at += 12 + length
    raw, stride = zlib.decompress(data), width * channels
    previous, pixels = bytearray(stride), []
    for start in range(0, len(raw), stride + 1):
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):  # undo the row's filter (PNG specification, section 9)
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else
                                      up if pb <= pc else corner)) & 255
        pixels.extend(tuple(line[i:i + channels]) for i in range(0, stride, channels))
        previous = line
    return pixels
