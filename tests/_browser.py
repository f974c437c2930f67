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
