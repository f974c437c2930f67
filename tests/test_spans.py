"""Span deduplication: boilerplate sentences and spans removed from every document holding it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linkage.text.spans import split_sentences, strip_spans
from tests.conftest import ROOT
from tests.hostile.conftest import assert_unchanged_outside, run_cli, snapshot

BANNER = "We use cookies to improve your experience."


def test_sentences_end_at_korean_english_and_cjk_marks():
    text = "오늘은 날씨가 좋다.내일은 비가 온다고 했다. 정말요? 네! 값은 3.5 입니다。끝\n다음 줄"
    assert split_sentences(text) == ["오늘은 날씨가 좋다.", "내일은 비가 온다고 했다. ", "정말요? ",
                                     "네! ", "값은 3.5 입니다。", "끝\n", "다음 줄"]
    assert split_sentences("Pi is 3.14 today. Is it? Yes!") == ["Pi is 3.14 today. ", "Is it? ",
                                                                 "Yes!"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab 다.?!。\n가3")), max_size=40))
def test_sentences_put_back_together_are_the_text(text):
    assert "".join(split_sentences(text)) == text


def test_a_sentence_in_min_documents_documents_is_removed_from_each_and_counted():
    docs = [f"Post one. {BANNER}", f"{BANNER.upper()}   Post two!",  # case and spaces vary
            f"Post three.\n{BANNER}", "Shared by two. Post four.", "Shared by two. Post five.",
            None, f"{BANNER} {BANNER}"]  # a repeat inside one document counts once
    done = strip_spans(docs, min_documents=4)
    assert done.text.tolist()[:5] == ["Post one.", "Post two!", "Post three.",
                                      "Shared by two. Post four.", "Shared by two. Post five."]
    assert pd.isna(done.text[5]) and done.text[6] == ""
    assert done.removed_spans.tolist() == [1, 1, 1, 0, 0, 0, 1]
    assert done.removed_chars.tolist() == [len(d) - len(c) if isinstance(d, str) else 0
                                           for d, c in zip(docs, done.text, strict=True)]
    summary = done.summary()
    assert summary["documents_changed"] == 4 and summary["documents_emptied"] == 1
    assert summary["boilerplate"] == [{"text": BANNER, "documents": 4}]
    # With five documents required, the banner (in four) is content.
    assert strip_spans(docs, min_documents=5).removed_chars.sum() == 0


def test_spans_of_consecutive_sentences_only_count_together():
    footer = "Thanks for reading. Share this post. Follow us."
    docs = [f"A story. {footer}", f"{footer} Another story.", f"Third. {footer}",
            "Thanks for reading. Unrelated. Share this post. Follow us."]  # not consecutive
    done = strip_spans(docs, min_documents=3, span_sentences=3)
    assert done.text.tolist() == ["A story.", "Another story.", "Third.", docs[3]]
    assert done.removed_spans.tolist() == [1, 1, 1, 0]
    # Two-sentence spans: both windows of the footer are boilerplate, merged into one run.
    two = strip_spans(docs, min_documents=3, span_sentences=2)
    assert two.removed_spans.tolist() == [1, 1, 1, 1]
    assert two.text[3] == "Thanks for reading. Unrelated."


def test_korean_boilerplate_and_min_chars():
    notice = "이 글은 저작권법의 보호를 받습니다."
    docs = [f"첫 번째 글이다.{notice}", f"{notice} 두 번째 글이에요?", f"세 번째다! {notice}",
            "감사합니다. 네 번째.", "감사합니다. 다섯 번째.", "감사합니다. 여섯 번째."]
    done = strip_spans(docs, min_documents=3, min_chars=10)
    assert done.text.tolist()[:3] == ["첫 번째 글이다.", "두 번째 글이에요?", "세 번째다!"]
    assert done.text.tolist()[3:] == docs[3:]  # "감사합니다." is shorter than 10 characters
    assert strip_spans(docs, min_documents=3).text.tolist()[3:] == ["네 번째.", "다섯 번째.",
                                                                    "여섯 번째."]


def test_result_per_document_does_not_depend_on_order():
    rng = np.random.default_rng(0)
    docs = [f"Doc {i}. " + ("Footer line here. " if i % 3 else "") + f"End {i % 5}."
            for i in range(60)]
    done = strip_spans(docs, min_documents=3)
    order = rng.permutation(len(docs))
    shuffled = strip_spans([docs[i] for i in order], min_documents=3)
    assert shuffled.text.tolist() == done.text[order].tolist()
    assert (shuffled.removed_chars == done.removed_chars[order]).all()


@pytest.mark.parametrize(("kwargs", "name"), [({"min_documents": 1}, "min_documents"),
                                              ({"span_sentences": 0}, "span_sentences"),
                                              ({"min_chars": -1}, "min_chars")])
def test_bad_parameters_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        strip_spans(["a."], **kwargs)


def test_cli_strips_the_sample_documents_deterministically(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    source = ROOT / "sample_data" / "labelled_text.csv"
    (work / "docs.csv").write_bytes(source.read_bytes())
    before = snapshot(work)
    args = ["strip-boilerplate", work / "docs.csv", "--column", "text", "--min-documents", "3",
            "--span-sentences", "1", "--min-chars", "20", "--into", "clean"]
    done = run_cli(*args, "--out", work / "a")
    assert done.returncode == 0, done.stderr
    assert_unchanged_outside(before, snapshot(work), "a")
    again = run_cli(*args, "--out", work / "b")
    assert again.returncode == 0, again.stderr
    for name in ("stripped.parquet", "summary.json"):
        assert (work / "a" / name).read_bytes() == (work / "b" / name).read_bytes()
    out = pd.read_parquet(work / "a" / "stripped.parquet")
    original = pd.read_csv(source, dtype=str, keep_default_na=False)
    assert len(out) == len(original)  # nothing lost: every row, stripped or not
    assert out["text"].tolist() == original["text"].tolist()
    assert (out["text"].str.len() - out["clean"].str.len() == out["removed_chars"]).all()
    summary = json.loads((work / "a" / "summary.json").read_text(encoding="utf-8"))
    assert summary["removed_chars"] == out["removed_chars"].sum() > 0
    assert summary["removed_spans"] == out["removed_spans"].sum()
    assert summary["documents_changed"] == (out["removed_chars"] > 0).sum()
    top = summary["boilerplate"][0]
    assert top["documents"] >= 3 and (out["text"].str.contains(top["text"], regex=False)
                                      .sum() >= top["documents"])
    assert str(top["documents"]) in done.stdout


def test_cli_bad_column_and_bad_option_exit_2_with_the_fix(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "docs.csv").write_text("id,body\n1,Hello there.\n", encoding="utf-8")
    before = snapshot(work)
    done = run_cli("strip-boilerplate", work / "docs.csv", "--out", work / "o")
    assert done.returncode == 2
    assert "docs.csv" in done.stderr and "`text`" in done.stderr and "--column" in done.stderr
    bad = run_cli("strip-boilerplate", work / "docs.csv", "--column", "body",
                  "--min-documents", "1", "--out", work / "o")
    assert bad.returncode == 2 and "--min-documents" in bad.stderr
    clash = run_cli("strip-boilerplate", work / "docs.csv", "--column", "body", "--into", "id",
                    "--out", work / "o")
    assert clash.returncode == 2 and "`id`" in clash.stderr and "--into" in clash.stderr
    into_input = run_cli("strip-boilerplate", work / "docs.csv", "--column", "body",
                         "--out", work)
    assert into_input.returncode == 2 and "--out" in into_input.stderr
    for result in (done, bad, clash, into_input):
        assert "Traceback" not in result.stderr
    assert snapshot(work) == before


def test_no_texts_and_numbers_as_texts():
    assert strip_spans([]).summary()["documents"] == 0
    numbers = strip_spans(pd.Series([7, 7, 7, 8]), min_documents=3)
    assert numbers.text.tolist() == ["", "", "", "8"] and numbers.removed_chars.tolist() == [1, 1,
                                                                                           1, 0]
