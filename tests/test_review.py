"""`linkage review`: the labelling page, end to end in headless Chromium, against a real run.

Every label pressed on the page must be on disk at once, in the file `linkage calibrate` reads;
the server must answer only on 127.0.0.1, to requests addressed there, with JSON it checks.
"""

from __future__ import annotations

import csv
import http.client
import json
import os
import queue
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import linkage
from linkage.errors import InputError
from linkage.measure.calibrate import sample_pairs
from linkage.review import default_labels_path, serve
from tests._browser import chromium_page
from tests.conftest import ROOT, run_cli

WEIGHT_BANDS = [0.0, 2.0, 4.0, 6.0, 8.0]  # rules/customers.yaml: a rule sum, threshold 4


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("review")
    result = linkage.dedupe(ROOT / "sample_data" / "customers.csv",
                            ROOT / "rules" / "customers.yaml", progress=False)
    return result.write(folder / "run")


def labels_on_disk(path: Path) -> dict[tuple[str, str], str]:
    with path.open(encoding="utf-8", newline="") as handle:
        return {(row["id_l"], row["id_r"]): row["label"] for row in csv.DictReader(handle)}


def wait_for_labels(path: Path, expected: dict, timeout: float = 10.0) -> dict:
    """The labels on disk once they equal `expected` (or after `timeout`, for the assert)."""
    deadline = time.monotonic() + timeout
    while True:
        found = labels_on_disk(path)
        if found == expected or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def shown_pair(page) -> tuple[str, str]:
    section = page.locator("#pair")
    return section.get_attribute("data-id-l"), section.get_attribute("data-id-r")


def open_page(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=10_000)


def request(url: str, method: str = "GET", body: bytes | None = None,
            headers: dict | None = None) -> tuple[int, dict | str]:
    """One raw HTTP request (http.client, so the Host header can be anything)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        names = {k.lower() for k in (headers or {})}
        connection.putrequest(method, parts.path or "/", skip_host="host" in names)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        text = response.read().decode("utf-8")
        kind = response.getheader("Content-Type", "")
        return response.status, json.loads(text) if kind.startswith("application/json") else text
    finally:
        connection.close()


def post_label(url: str, data, *, kind: str = "application/json", headers=None):
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    return request(url + "api/label", "POST", body, {"Content-Type": kind, **(headers or {})})


def test_label_go_back_change_and_resume_in_the_browser(run_dir, tmp_path):
    labels = tmp_path / "labels.csv"
    server = serve(run_dir, labels=labels, per_band=3, seed=0).start()
    try:
        assert server.server_address[0] == "127.0.0.1"
        first_file = pd.read_csv(labels, dtype=str, keep_default_na=False)
        order = list(zip(first_file["id_l"], first_file["id_r"], strict=True))
        assert len(order) == 15 and set(first_file["label"]) == {""}  # 5 bands of 3
        expected = dict.fromkeys(order, "")
        with chromium_page() as (page, console_errors, page_errors):
            open_page(page, server.url)
            assert shown_pair(page) == order[0]
            assert page.inner_text("#progress-text").startswith("0 of 15 labelled")
            # The records side by side, field by field, with each comparison's level.
            names = page.locator("#records tbody tr").evaluate_all(
                "rows => rows.map(r => r.dataset.field)")
            assert names[:3] == ["name", "birth_date", "phone"]
            assert page.locator("#records tr[data-field=birth_date] .level").count() == 1

            def press(key: str, changes: dict, shows: int) -> None:
                page.keyboard.press(key)
                expected.update({order[k]: v for k, v in changes.items()})
                assert wait_for_labels(labels, expected) == expected
                page.wait_for_selector("#status[data-state=saved]")
                assert shown_pair(page) == order[shows]

            press("m", {0: "1"}, shows=1)
            press("n", {1: "0"}, shows=2)
            press("u", {2: "unsure"}, shows=3)
            press("ArrowLeft", {}, shows=2)
            assert page.inner_text("#current-label") == "your label: unsure"
            press("Backspace", {}, shows=1)
            assert page.inner_text("#current-label") == "your label: non-match"
            press("m", {1: "1"}, shows=3)  # changed; on to the next unlabelled pair
            page.click("#non-match")  # the buttons do what the keys do
            expected[order[3]] = "0"
            assert wait_for_labels(labels, expected) == expected
            assert shown_pair(page) == order[4]
            press("ArrowRight", {}, shows=5)  # skip pair 4, unlabelled
            press("m", {5: "1"}, shows=6)
            assert page.inner_text("#progress-text") == (
                "5 of 15 labelled (3 match, 1 non-match, 1 unsure)")
            assert console_errors == [] and page_errors == []
    finally:
        server.shutdown()
    # Only the labels changed; every other cell is as sampled.
    last_file = pd.read_csv(labels, dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(last_file.drop(columns="label"),
                                  first_file.drop(columns="label"))
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    # Reopening the same labels file resumes at the first unlabelled pair (4, the skipped
    # one), whatever the sampling options say now.
    server = serve(run_dir, labels=labels, per_band=50, seed=7).start()
    try:
        assert server.review.resumed
        with chromium_page() as (page, console_errors, page_errors):
            open_page(page, server.url)
            assert shown_pair(page) == order[4]
            assert page.inner_text("#progress-text").startswith("5 of 15 labelled")
            assert page.inner_text("#current-label") == "your label: not labelled yet"
            page.keyboard.press("ArrowLeft")
            assert page.inner_text("#current-label") == "your label: non-match"
            assert console_errors == [] and page_errors == []
        command = shlex.split(server.review.calibrate_command())
    finally:
        server.shutdown()
    assert labels_on_disk(labels) == expected

    # The saved file is what `linkage calibrate` reads: 4 decided pairs (unsure left out).
    assert command[:4] == ["linkage", "calibrate", str(run_dir), str(labels)]
    done = run_cli(*command[1:])
    assert done.returncode == 0, done.stderr
    counted = [int(line.split(":")[1].split()[0]) for line in done.stdout.splitlines()
               if "labelled, precision" in line]
    assert len(counted) == len(WEIGHT_BANDS) and sum(counted) == 4


def _read_lines(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)


def _wait_for_url(lines: queue.Queue, process: subprocess.Popen, seen: list[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            if process.poll() is not None:
                break
            continue
        seen.append(line)
        if line.startswith("open http://"):
            return line.split()[1]
    raise AssertionError("linkage review printed no URL:\n" + "".join(seen)
                         + (process.stderr.read() if process.poll() is not None else ""))


def test_the_cli_serves_on_localhost_only_and_stops_on_ctrl_c(run_dir, tmp_path):
    labels = tmp_path / "cli-labels.csv"
    process = subprocess.Popen(
        [sys.executable, "-m", "linkage", "review", str(run_dir), "--labels", str(labels),
         "--per-band", "2", "--no-open"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        url = _wait_for_url(lines, process, seen)
        assert url.startswith("http://127.0.0.1:")
        assert any("--on weight --bands 0,2,4,6,8" in line for line in seen)
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        # Bound to 127.0.0.1 alone: another loopback address of this machine finds no one.
        with pytest.raises(OSError), socket.create_connection(("127.0.0.2", port), timeout=2):
            pass
        status, page = request(url)
        assert status == 200 and "<title>linkage review</title>" in page
        status, _ = request(url, headers={"Host": f"localhost:{port}"})
        assert status == 200
        status, answer = request(url, headers={"Host": f"evil.example:{port}"})
        assert status == 403 and "127.0.0.1 or localhost" in answer["error"]
        status, answer = request(url + "api/pairs", headers={"Host": "evil.example"})
        assert status == 403

        order = list(labels_on_disk(labels))
        with chromium_page() as (browser, console_errors, page_errors):
            open_page(browser, url)
            browser.keyboard.press("m")
            expected = {pair: "1" if k == 0 else "" for k, pair in enumerate(order)}
            assert wait_for_labels(labels, expected) == expected
            assert console_errors == [] and page_errors == []
    finally:
        process.send_signal(signal.SIGINT)  # Ctrl-C
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert process.returncode == 0, process.stderr.read()
    reader.join(timeout=10)
    while not lines.empty():
        seen.append(lines.get())
    assert f"stopped: 1 of {len(order)} pairs labelled" in "".join(seen)


def test_bad_requests_get_a_400_that_says_why(run_dir, tmp_path):
    labels = tmp_path / "labels.csv"
    server = serve(run_dir, labels=labels, per_band=2).start()
    try:
        url = server.url
        before = labels.read_bytes()
        pair = next(iter(labels_on_disk(labels)))
        good = {"id_l": pair[0], "id_r": pair[1], "label": "match"}
        cases = [
            (post_label(url, good, kind="text/plain"), 400, "application/json"),
            (post_label(url, b"{not json"), 400, "not valid JSON"),
            (post_label(url, b"[1, 2]"), 400, "must be a JSON object"),
            (post_label(url, {**good, "label": "maybe"}), 400, "`label` must be one of"),
            (post_label(url, {"id_l": pair[0], "label": "match"}), 400, "`id_r` must be"),
            (post_label(url, {**good, "id_r": "no-such-id"}), 400, "unknown pair"),
            (post_label(url, good, headers={"Origin": "http://evil.example"}), 403,
             "review page itself"),
            (post_label(url, good, headers={"Host": "evil.example"}), 403, "127.0.0.1"),
            (request(url + "nowhere"), 404, "open / instead"),
        ]
        for (status, answer), want_status, want_text in cases:
            assert status == want_status, answer
            assert want_text in answer["error"]
        assert labels.read_bytes() == before  # nothing bad reached the file
        status, answer = post_label(url, good)
        assert status == 200 and answer["counts"]["match"] == 1
        assert labels_on_disk(labels)[pair] == "1"
    finally:
        server.shutdown()


def test_a_file_being_rewritten_is_always_whole(run_dir, tmp_path):
    """Labels arrive on several threads at once; a reader never sees half a file."""
    labels = tmp_path / "labels.csv"
    server = serve(run_dir, labels=labels, per_band=10).start()
    try:
        pairs = list(labels_on_disk(labels))

        def label_all(offset: int) -> None:
            for k, (a, b) in enumerate(pairs):
                word = ("match", "non-match", "unsure")[(k + offset) % 3]
                assert post_label(server.url, {"id_l": a, "id_r": b, "label": word})[0] == 200

        workers = [threading.Thread(target=label_all, args=(k,)) for k in range(3)]
        for worker in workers:
            worker.start()
        reads = 0
        while any(w.is_alive() for w in workers) or reads < 20:
            assert len(labels_on_disk(labels)) == len(pairs)
            reads += 1
        for worker in workers:
            worker.join()
        assert set(labels_on_disk(labels).values()) <= {"1", "0", "unsure"}
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    finally:
        server.shutdown()


def test_a_sample_file_is_reviewed_and_its_values_shown_as_text(run_dir, tmp_path):
    table = sample_pairs(run_dir, WEIGHT_BANDS, 2, on="weight", seed=3)
    trap = '<img src=x onerror="document.title=\'pwned\'"><b>bold</b> & co'
    table.loc[0, "name_l"] = trap
    table.loc[1, "label"] = "match"  # a label already in the sample is kept
    table.to_csv(tmp_path / "todo.csv", index=False)
    labels = tmp_path / "labels.csv"
    server = serve(run_dir, sample=tmp_path / "todo.csv", labels=labels).start()
    try:
        assert server.review.on == "weight" and server.review.bands == WEIGHT_BANDS
        with chromium_page() as (page, console_errors, page_errors):
            open_page(page, server.url)
            assert shown_pair(page) == (table.loc[0, "id_l"], table.loc[0, "id_r"])
            cell = page.locator("#records tr[data-field=name] td.value").first
            assert cell.inner_text() == trap
            assert page.locator("#records img, #records b").count() == 0
            assert page.title() != "pwned"
            assert page.inner_text("#progress-text").startswith(f"1 of {len(table)} labelled")
            assert console_errors == [] and page_errors == []
    finally:
        server.shutdown()
    assert labels_on_disk(labels)[(table.loc[1, "id_l"], table.loc[1, "id_r"])] == "match"


def test_the_labels_file_starts_as_linkage_sample_writes_it(run_dir, tmp_path):
    """A fresh review writes the very CSV `linkage sample` would (same seed, same bands), and
    the default labels file sits beside the run folder, which a rerun replaces whole."""
    server = serve(run_dir, per_band=4, seed=5)
    try:
        path = default_labels_path(run_dir)
        assert server.labels_path == path == run_dir.parent / "run.labels.csv"
        table = sample_pairs(run_dir, WEIGHT_BANDS, 4, on="weight", seed=5)
        table.to_csv(tmp_path / "sample.csv", index=False)
        assert path.read_bytes() == (tmp_path / "sample.csv").read_bytes()
    finally:
        server.shutdown()
        default_labels_path(run_dir).unlink()


def test_bad_input_is_a_clear_error(run_dir, tmp_path):
    (tmp_path / "empty").mkdir()
    done = run_cli("review", tmp_path / "empty", "--no-open")
    assert done.returncode == 2 and "not a run folder" in done.stderr

    broken = tmp_path / "broken.csv"
    broken.write_text("id_l,id_r,whatever\nA,B,1\n", encoding="utf-8")
    done = run_cli("review", run_dir, "--labels", broken, "--no-open")
    assert done.returncode == 2 and str(broken) in done.stderr and "`label`" in done.stderr

    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00\x00\x81\x82")
    with pytest.raises(InputError, match="cannot read the labels file"):
        serve(run_dir, labels=binary)

    odd = tmp_path / "odd.csv"
    sample_pairs(run_dir, WEIGHT_BANDS, 1, on="weight").assign(label="perhaps").to_csv(
        odd, index=False)
    with pytest.raises(InputError, match=r"line 2 .* has label 'perhaps'"):
        serve(run_dir, labels=odd)
    assert "perhaps" in odd.read_text(encoding="utf-8")  # a bad file is never overwritten

    with pytest.raises(InputError, match="no scored pair"):
        serve(run_dir, labels=tmp_path / "x.csv", bands=[1000.0], on="weight")
    with pytest.raises(InputError, match="--on weight"):
        serve(run_dir, labels=tmp_path / "y.csv", on="probability")


def test_a_probability_run_is_banded_on_probability_and_resumes_its_bands(tmp_path):
    """Fellegi-Sunter gives probabilities: bands are on them, each comparison shows its match
    weight, and a resumed file keeps the bands it was sampled with."""
    from linkage.settings import Rules

    data = Rules.from_yaml(ROOT / "rules" / "customers.yaml").to_dict()
    data["scoring"] = {"type": "fellegi_sunter", "threshold": 2.0}
    run = linkage.dedupe(ROOT / "sample_data" / "customers.csv", Rules.from_dict(data),
                         progress=False).write(tmp_path / "fs")
    server = serve(run, labels=tmp_path / "labels.csv", per_band=3)
    try:
        review = server.review
        assert review.on == "probability" and review.bands == [0.6, 0.7, 0.8, 0.9]
        assert "--on" not in review.calibrate_command()
        first = review.payload()["pairs"][0]
        assert 0.6 <= float(first["match_probability"]) < 0.7
        weights = [c["contribution"] for c in first["comparisons"]]
        assert len(weights) == len(data["comparisons"]) and None not in weights
    finally:
        server.shutdown()
    server = serve(run, labels=tmp_path / "custom.csv", bands=[0.5, 0.95], per_band=2)
    server.shutdown()
    resumed = serve(run, labels=tmp_path / "custom.csv")  # no bands given: the file's
    try:
        assert resumed.review.resumed and resumed.review.bands == [0.5, 0.95]
        assert resumed.review.calibrate_command().endswith("--bands 0.5,0.95")
    finally:
        resumed.shutdown()
    other = tmp_path / "other.csv"
    sample_pairs(run, [0.2], 2, seed=9).to_csv(other, index=False)
    with pytest.raises(InputError, match="already holds labels for other pairs"):
        serve(run, labels=tmp_path / "custom.csv", sample=other)
