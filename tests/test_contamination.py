"""Tests for linkage.text.contamination: train records that overlap an eval set."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest

from linkage.errors import InputError
from linkage.text.contamination import (
    RESULT_FILE,
    SUMMARY_FILE,
    contamination_summary,
    decontaminate,
    write_contamination_report,
)

COLUMNS = ["contaminated", "exact_match", "eval_id", "shared_ngrams", "example_ngram"]


def words(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(count)]


EVAL_A = words("alpha", 40)  # 40 distinct words
EVAL_B = words("beta", 40)

EVAL = pd.DataFrame(
    {
        "qid": ["q-10", "q-20", "q-30"],
        "text": [
            " ".join(EVAL_A),
            " ".join(EVAL_B),
            "What is the capital of France?",  # shorter than 13 words
        ],
    }
)


def near_copy(tokens: list[str]) -> str:
    """Change one word in every ten, so no 13 consecutive words survive."""
    return " ".join(f"changed{i}" if i % 10 == 5 else t for i, t in enumerate(tokens))


TRAIN = pd.DataFrame(
    {
        "doc": ["d1", "d2", "d3", "d4", "d5", "d6", "d7"],
        "text": [
            # a 13-word passage of eval item B inside a longer text
            "Some preamble words here. " + " ".join(EVAL_B[7:20]) + " and then an ending.",
            # an exact copy of eval item A, with different case and punctuation
            ", ".join(w.upper() for w in EVAL_A) + "!",
            near_copy(EVAL_A),
            "An unrelated text about cooking pasta with garlic, olive oil and a little salt "
            "for twenty minutes or so.",
            "what is the capital of france",  # exact copy of a short eval item
            "The capital of France is Paris.",  # overlaps the short item, but < 13 words
            None,
        ],
    }
)


@pytest.fixture(scope="module")
def result() -> pd.DataFrame:
    return decontaminate(TRAIN, EVAL, text_column="text", train_id="doc", eval_id="qid")


def row(result: pd.DataFrame, doc: str) -> pd.Series:
    return result.set_index("doc").loc[doc]


def test_one_row_per_train_record_with_ids_in_order(result):
    assert list(result.columns[:1]) == ["doc"]
    assert set(COLUMNS) <= set(result.columns)
    assert result["doc"].tolist() == TRAIN["doc"].tolist()


def test_planted_passage_is_flagged(result):
    r = row(result, "d1")
    assert r["contaminated"] and not r["exact_match"]
    assert r["eval_id"] == "q-20"
    assert r["shared_ngrams"] == 1
    assert r["example_ngram"] == " ".join(EVAL_B[7:20])


def test_exact_copy_is_flagged_as_exact(result):
    r = row(result, "d2")
    assert r["contaminated"] and r["exact_match"]
    assert r["eval_id"] == "q-10"
    assert r["shared_ngrams"] == 40 - 13 + 1
    assert r["example_ngram"] == " ".join(EVAL_A[:13])


def test_near_copy_without_a_surviving_13_gram_is_not_flagged(result):
    r = row(result, "d3")
    assert not r["contaminated"] and not r["exact_match"]
    assert r["shared_ngrams"] == 0
    assert pd.isna(r["eval_id"]) and pd.isna(r["example_ngram"])


def test_near_copy_is_flagged_with_shorter_ngrams():
    result = decontaminate(TRAIN, EVAL, text_column="text", ngram=8, train_id="doc")
    assert row(result, "d3")["contaminated"]


def test_unrelated_text_is_not_flagged(result):
    assert not row(result, "d4")["contaminated"]


def test_short_texts_match_only_exactly(result):
    exact = row(result, "d5")
    assert exact["contaminated"] and exact["exact_match"] and exact["eval_id"] == "q-30"
    assert exact["shared_ngrams"] == 0
    assert not row(result, "d6")["contaminated"]


def test_missing_text_is_clean(result):
    r = row(result, "d7")
    assert not r["contaminated"] and not r["exact_match"]


def test_first_eval_item_is_named():
    eval_frame = pd.DataFrame({"id": [5, 3], "text": [" ".join(EVAL_A)] * 2})
    train = pd.DataFrame({"text": [" ".join(EVAL_A[2:30])]})
    result = decontaminate(train, eval_frame, text_column="text", eval_id="id")
    assert result["eval_id"].tolist() == [5]  # the first eval item in eval order
    assert result["row_id"].tolist() == [0]


def test_row_numbers_without_id_columns():
    result = decontaminate(TRAIN, EVAL, text_column="text")
    assert result["row_id"].tolist() == list(range(len(TRAIN)))
    assert result.loc[0, "eval_id"] == 1 and result.loc[1, "eval_id"] == 0
    assert pd.isna(result.loc[3, "eval_id"])


def test_train_index_is_ignored():
    shuffled = TRAIN.set_index(pd.Index([70, 60, 50, 40, 30, 20, 10]))
    a = decontaminate(shuffled, EVAL, text_column="text", train_id="doc")
    b = decontaminate(TRAIN, EVAL, text_column="text", train_id="doc")
    pd.testing.assert_frame_equal(a, b)


KOREAN = (
    "서울은 대한민국의 수도이며 한강이 도시를 가로질러 흐르고 인구는 약 천만 명에 이르는 "
    "세계적인 대도시로 정치 경제 문화의 중심지 역할을 하고 있다"
)


def test_korean_word_ngram_overlap():
    eval_frame = pd.DataFrame({"text": [KOREAN]})
    tokens = KOREAN.split()
    train = pd.DataFrame(
        {"text": ["오늘의 뉴스: " + " ".join(tokens[2:17]) + " 라고 한다.", "전혀 관계없는 문장"]}
    )
    result = decontaminate(train, eval_frame, text_column="text")
    assert result["contaminated"].tolist() == [True, False]
    assert result.loc[0, "ngram_kind"] == "word"
    assert result.loc[0, "example_ngram"] == " ".join(tokens[2:15])


def test_korean_without_spaces_falls_back_to_characters():
    eval_frame = pd.DataFrame({"text": [KOREAN]})
    squeezed = KOREAN.replace(" ", "")
    train = pd.DataFrame(
        {
            "text": [
                "기사 " + squeezed[5:60] + " 끝",  # no spaces: a character n-gram survives
                squeezed[:30],  # shorter than 39 characters
                "한국어로 된 전혀 다른 긴 문장이지만 같은 부분은 하나도 없는 글입니다",
            ]
        }
    )
    result = decontaminate(train, eval_frame, text_column="text")
    assert result["contaminated"].tolist() == [True, False, False]
    assert result.loc[0, "ngram_kind"] == "char"
    assert result.loc[0, "example_ngram"] in squeezed
    assert len(result.loc[0, "example_ngram"]) == 39
    assert result.loc[0, "shared_ngrams"] == 60 - 5 - 39 + 1


def test_missing_text_column_names_the_column_and_the_fix():
    expected = r"train table: no column 'body'.*'doc', 'text'.*--text-column"
    with pytest.raises(InputError, match=expected):
        decontaminate(TRAIN, EVAL, text_column="body")
    with pytest.raises(InputError, match=r"eval table: no column 'doc'.*--text-column"):
        decontaminate(TRAIN.rename(columns={"text": "doc", "doc": "x"}), EVAL, text_column="doc")


def test_missing_id_column_names_the_option():
    with pytest.raises(InputError, match=r"train table: no column 'id'.*--train-id"):
        decontaminate(TRAIN, EVAL, text_column="text", train_id="id")
    with pytest.raises(InputError, match=r"eval table: no column 'id'.*--eval-id"):
        decontaminate(TRAIN, EVAL, text_column="text", eval_id="id")


def test_bad_ngram():
    with pytest.raises(InputError, match="ngram"):
        decontaminate(TRAIN, EVAL, text_column="text", ngram=0)


def test_empty_tables():
    empty_eval = EVAL.iloc[:0]
    result = decontaminate(TRAIN, empty_eval, text_column="text", train_id="doc")
    assert len(result) == len(TRAIN) and not result["contaminated"].any()
    result = decontaminate(TRAIN.iloc[:0], EVAL, text_column="text", train_id="doc")
    assert len(result) == 0 and set(COLUMNS) <= set(result.columns)


def test_report_is_written_atomically(tmp_path, result):
    out = tmp_path / "contamination"
    write_contamination_report(result, out)
    written = pd.read_parquet(out / RESULT_FILE)
    assert written["doc"].tolist() == TRAIN["doc"].tolist()
    assert written["contaminated"].tolist() == result["contaminated"].tolist()
    summary = json.loads((out / SUMMARY_FILE).read_text(encoding="utf-8"))
    assert summary == contamination_summary(result)
    assert summary["train_records"] == 7
    assert summary["contaminated"] == 3
    assert summary["exact_matches"] == 2
    assert summary["contamination_rate"] == pytest.approx(3 / 7)
    assert summary["ngram"] == 13 and summary["eval_records"] == 3

    def broken(folder):
        raise RuntimeError("disk full")

    # A failed write leaves the earlier report as it was.
    from linkage.io import write_atomically

    with pytest.raises(RuntimeError):
        write_atomically(out, broken)
    assert (out / RESULT_FILE).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contamination"]


def test_large_tables_in_seconds():
    rng = np.random.default_rng(3)
    vocab = np.array(words("w", 5000), dtype=object)
    eval_words = vocab[rng.integers(0, len(vocab), size=(2000, 40))]
    train_words = vocab[rng.integers(0, len(vocab), size=(20_000, 60))]
    eval_frame = pd.DataFrame({"text": [" ".join(r) for r in eval_words]})
    texts = [" ".join(r) for r in train_words]
    planted = rng.choice(len(texts), size=50, replace=False)
    for i, target in enumerate(planted):
        texts[target] += " " + " ".join(eval_words[i][10:25])
    train = pd.DataFrame({"text": texts})
    start = time.perf_counter()
    result = decontaminate(train, eval_frame, text_column="text")
    assert time.perf_counter() - start < 10
    assert set(np.flatnonzero(result["contaminated"].to_numpy())) == set(planted)
    flagged = result.set_index("row_id").loc[planted]
    assert flagged["eval_id"].tolist() == list(range(50))


def test_decontaminate_cli(tmp_path):
    from tests.conftest import run_clis

    passage = ("the quick brown fox jumps over the lazy dog while the farmer watches from "
               "the old wooden gate")
    pd.DataFrame({"id": ["e1", "e2"], "text": [passage, "an unrelated evaluation question"]}
                 ).to_csv(tmp_path / "eval.csv", index=False)
    pd.DataFrame({"id": ["t1", "t2", "t3"],
                  "text": [f"intro words then {passage} and more", "nothing to see here",
                           "An unrelated evaluation question."]}).to_csv(
        tmp_path / "train.csv", index=False)
    done, missing = run_clis(
        ("decontaminate", tmp_path / "train.csv", "--eval", tmp_path / "eval.csv",
         "--train-id", "id", "--eval-id", "id", "--out", tmp_path / "out"),
        ("decontaminate", tmp_path / "train.csv", "--eval", tmp_path / "eval.csv",
         "--text-column", "body", "--out", tmp_path / "out2"))
    assert done.returncode == 0, done.stderr
    assert "2 of 3 train records contaminated" in done.stdout
    result = pd.read_parquet(tmp_path / "out" / "contamination.parquet").set_index("id")
    assert result.loc["t1", "eval_id"] == "e1" and not result.loc["t1", "exact_match"]
    assert result.loc["t3", "exact_match"] and not result.loc["t2", "contaminated"]
    assert missing.returncode == 2 and "body" in missing.stderr
