"""The text pipeline (issue 13, items 10-12 and 15): stage matches told as such, recall that
is not handed over by a URL, the semantic stage's work and truncation said, and a run's rules
and manifest complete."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from linkage.run.stages import stage_bit
from linkage.settings import Rules
from tests.conftest import ROOT
from tests.hostile.conftest import assert_unchanged_outside, run_cli, snapshot

TEXTS = ROOT / "sample_data" / "labelled_text.csv"
DOCUMENTS = ROOT / "rules" / "documents.yaml"


def _dedupe(work: Path) -> Path:
    """`linkage dedupe` of work/texts.csv by work/rules.yaml into work/out, which is all it
    changes."""
    before = snapshot(work)
    done = run_cli("dedupe", work / "texts.csv", "--rules", work / "rules.yaml", "--out",
                   work / "out")
    assert done.returncode == 0, done.stderr
    assert_unchanged_outside(before, snapshot(work), "out")
    return work / "out"


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    """A run of rules/documents.yaml on the bundled documents, in a folder of its own."""
    work = tmp_path_factory.mktemp("docs")
    shutil.copy(TEXTS, work / "texts.csv")
    shutil.copy(DOCUMENTS, work / "rules.yaml")
    return _dedupe(work)


def _stage_pair(pairs: pd.DataFrame, rules: Rules, stage: str) -> pd.Series:
    """A matched pair that only `stage` proposed, the lowest weighted."""
    only = pairs[pairs["is_match"] & (pairs["blockers"] == stage_bit(rules, stage))]
    return only.sort_values(["match_weight", "id_l", "id_r"]).iloc[0]


@pytest.mark.parametrize(("stage", "said"), [
    ("exact", "identical normalized text (exact stage)"),
    ("semantic", "semantic: cosine >= 0.98 (semantic stage)"),
])
def test_explain_tells_a_stage_match_as_that_stage(docs, stage, said):
    rules = Rules.from_yaml(docs / "rules.yaml")
    pair = _stage_pair(pd.read_parquet(docs / "pairs.parquet"), rules, stage)
    weight = pair["match_weight"]
    side = ">=" if weight >= rules.scoring.threshold else "<"
    done = run_cli("explain", docs, pair["id_l"], pair["id_r"])
    assert done.returncode == 0, done.stderr
    assert "no match" not in done.stdout
    assert f"match by {said}; match weight {weight:.2f} {side} threshold 1" in done.stdout
    if stage == "semantic":
        assert side == "<"  # the case issue 13 found: a stage's match below the threshold


def test_cluster_reasons_never_claim_a_weight_above_the_threshold_it_missed(docs):
    clusters = pd.read_parquet(docs / "clusters.parquet")
    claims = clusters["reason"].str.extract(r"match weight (-?[\d.]+) >= ([\d.]+)\)")
    claims = claims.dropna().astype(float)
    assert len(claims) > 0
    assert (claims[0] >= claims[1]).all(), "a reason says a weight reaches a threshold it missed"
    staged = clusters["reason"].str.contains(r"\((?:identical|semantic).*stage\); match weight")
    assert staged.sum() > 0


def test_report_and_summary_count_the_pairs_of_pairs_parquet(docs):
    pairs = pd.read_parquet(docs / "pairs.parquet")
    summary = json.loads((docs / "summary.json").read_text())
    score = summary["stages"]["score"]
    above = pairs["match_weight"] >= score["threshold"]
    assert score["matched_pairs"] == int(pairs["is_match"].sum())
    assert score["pairs_at_or_above_threshold"] == int(above.sum())
    below = pairs["is_match"] & ~above
    assert sum(score["matched_by_stage"].values()) == int(below.sum()) > 0
    report = (docs / "report.html").read_text(encoding="utf-8")
    # The histogram's own count, the overview's card and the stage table agree with the summary.
    assert f"{int(above.sum()):,} of {len(pairs):,} pair(s) at or above the threshold" in report
    cards = re.findall(r'<div class="value">([\d,]+)</div><div class="label">matched pairs', report)
    assert cards == [f"{score['matched_pairs']:,}"]
    for name, k in score["matched_by_stage"].items():
        assert f"pairs below it matched by the {name} stage" in report and f"{k:,}" in report


def test_a_runs_rules_spell_out_every_default_and_rerun_to_the_same_bytes(docs, tmp_path):
    written = docs / "rules.yaml"
    text = written.read_text(encoding="utf-8")
    for key in ("num_perm: 128", "threshold: 0.8", "seed: 0", "max_block_size: 5000",
                "policy: first", "normalize: true", "url: null"):
        assert key in text, f"the run's rules.yaml leaves `{key}` to the version's default"
    assert Rules.from_yaml(written).to_yaml(explicit=True) == text
    assert Rules.from_yaml(written).config_hash() == Rules.from_yaml(DOCUMENTS).config_hash()
    before = snapshot(docs.parent)
    again = tmp_path / "again"
    done = run_cli("dedupe", docs.parent / "texts.csv", "--rules", written, "--out", again)
    assert done.returncode == 0, done.stderr
    assert snapshot(docs.parent) == before  # the first run, its rules and input untouched
    for name in ("clusters.parquet", "pairs.parquet", "deduplicated.parquet", "rules.yaml"):
        assert (again / name).read_bytes() == (docs / name).read_bytes(), name


def test_the_manifest_names_the_embedding_model_and_its_libraries(docs):
    versions = json.loads((docs / "summary.json").read_text())["versions"]
    model = versions["embedding_models"]["all-MiniLM-L6-v2"]
    assert re.fullmatch(r"[0-9a-f]{64}", model["sha256"])
    assert versions["torch"] and versions["sentence-transformers"]


def test_the_manifest_leaves_embeddings_out_when_none_are_used(tmp_path):
    out = tmp_path / "out"
    done = run_cli("dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                   ROOT / "rules" / "customers.yaml", "--out", out)
    assert done.returncode == 0, done.stderr
    versions = json.loads((out / "summary.json").read_text())["versions"]
    assert not {"torch", "sentence-transformers", "embedding_models"} & set(versions)


def test_validate_prints_every_part_of_the_rules():
    done = run_cli("validate", DOCUMENTS)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for said in ("exact: records with identical normalized text", "semantic: SemDeDup on text",
                 "all-MiniLM-L6-v2", "epsilon 0.02", "where source in [qa, synthetic]",
                 "guard max_cluster_size", "guard conflicting_labels", "guard keep_up_to",
                 "keep: first", "source column: source", "report columns: domain",
                 "max removal rate: 50%"):
        assert said in out, f"`linkage validate` does not say {said!r}:\n{out}"


def _long(topic: str, sentences: int = 40) -> str:
    return " ".join(f"{topic} number {i} is written down in this long document." for i in
                    range(sentences))


@pytest.fixture(scope="module")
def long_documents(tmp_path_factory):
    """Two documents that share their first 400 word pieces and differ after them, a short
    text with an exact copy and a paraphrase, and a few others; the semantic stage on all."""
    work = tmp_path_factory.mktemp("long")
    head = _long("The budget committee reviewed item")
    texts = {
        "a": f"{head} {_long('The football match ended in a draw after extra time')}",
        "b": f"{head} {_long('Bake the bread with flour, water, salt and yeast')}",
        "c": "How do I reset my password?",
        "d": "How do I reset my password?",  # an exact copy: the exact stage joins it to c
        "e": "How can I reset my password?",
        "f": "What time does the store open on Sunday?",
        "g": "Quarterly revenue grew by ten percent.",
    }
    pd.DataFrame({"id": list(texts), "text": list(texts.values())}).to_csv(
        work / "texts.csv", index=False)
    (work / "rules.yaml").write_text(
        "id_column: id\nexact: {columns: [text]}\n"
        "blocking: [{type: minhash, column: text, threshold: 0.9}]\n"
        "semantic: {column: text, epsilon: 0.02, n_clusters: 1}\n"
        "comparisons: [{type: jaccard, column: text}]\n"
        "scoring: {type: rule_sum, threshold: 1, weights: {text: {exact: 2}}}\n")
    return _dedupe(work)


def test_the_semantic_stage_embeds_one_record_of_each_exact_group(long_documents):
    semantic = json.loads((long_documents / "summary.json").read_text())["stages"]["semantic"]
    assert semantic["records_embedded"] == 6  # d is c's exact copy: c stands for both
    assert semantic["copies_not_embedded"] == 1
    clusters = pd.read_parquet(long_documents / "clusters.parquet").set_index("id")
    assert clusters.loc["c", "cluster_id"] == clusters.loc["d", "cluster_id"] \
        == clusters.loc["e", "cluster_id"]  # d still joins the paraphrase through c


def test_a_long_document_is_embedded_whole_and_the_summary_says_so(long_documents):
    summary = json.loads((long_documents / "summary.json").read_text())
    semantic = summary["stages"]["semantic"]
    assert semantic["long_texts"] == 2 and semantic["window_word_pieces"] == 256
    clusters = pd.read_parquet(long_documents / "clusters.parquet").set_index("id")
    # Cut at 256 word pieces the two would be one text; their different halves keep them apart.
    assert clusters.loc["a", "cluster_id"] != clusters.loc["b", "cluster_id"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Path:
    """The bundled documents as crawled pages: each with a URL of its own, and rules with a
    `url:` stage beside a copy without it."""
    work = tmp_path_factory.mktemp("pages")
    texts = pd.read_csv(TEXTS, dtype=str)
    texts["url"] = "https://docs.example.org/" + texts["source"] + "/" + texts["doc_id"]
    texts.to_csv(work / "pages.csv", index=False)
    # rules/documents.yaml without its semantic stage, which the URL has nothing to do with.
    rules = Rules.from_yaml(DOCUMENTS).to_dict()
    del rules["semantic"]
    rules = yaml.safe_dump(rules, sort_keys=False)
    (work / "no_url.yaml").write_text(rules, encoding="utf-8")
    (work / "url.yaml").write_text(rules + "url: {column: url}\n", encoding="utf-8")
    return work


def _recall(pages: Path, rules: str, out: str) -> dict:
    before = snapshot(pages)
    done = run_cli("recall", pages / "pages.csv", "--rules", pages / rules, "--inject", "60",
                   "--kinds", "word,typo", "--json", "--out", pages / out)
    assert done.returncode == 0, done.stderr
    assert_unchanged_outside(before, snapshot(pages), out)
    return json.loads(done.stdout)


def test_recall_with_a_url_stage_is_not_handed_over_by_the_url(pages):
    from linkage.normalize import normalize_url

    with_url = _recall(pages, "url.yaml", "with_url")
    without = _recall(pages, "no_url.yaml", "without")
    assert with_url["overall"]["recall"] < 1.0
    # The URL finds none of the copies: recall is what the text stages find, copy for copy.
    assert with_url["overall"] == without["overall"]
    copies = pd.read_csv(pages / "with_url" / "injected.csv", dtype=str)
    log = pd.read_csv(pages / "with_url" / "outcomes.csv", dtype=str)
    sources = pd.read_csv(pages / "pages.csv", dtype=str).set_index("doc_id")
    source_urls = sources.loc[log.set_index("injected_id").loc[copies["doc_id"], "source_id"],
                              "url"]
    assert not (normalize_url(copies["url"]).to_numpy()
                == normalize_url(source_urls.reset_index(drop=True)).to_numpy()).any()
    host = copies["url"].str.extract(r"^(https://[^/]+)/")[0]
    assert (host == "https://docs.example.org").all()  # another page of the same site


def test_copies_differ_where_the_exact_stage_looks(pages):
    """An exact stage on a column the comparisons do not read (here the URL): a copy changed
    only in the compared text would be an exact copy, found for free."""
    rules = (pages / "no_url.yaml").read_text(encoding="utf-8")
    exact_url = rules.replace("exact:\n  columns:\n  - text", "exact:\n  columns:\n  - url")
    assert exact_url != rules
    (pages / "exact_url.yaml").write_text(exact_url, encoding="utf-8")
    result = _recall(pages, "exact_url.yaml", "exact_url")
    assert result["overall"]["recall"] < 1.0
    copies = pd.read_csv(pages / "exact_url" / "injected.csv", dtype=str)
    log = pd.read_csv(pages / "exact_url" / "outcomes.csv", dtype=str)
    sources = pd.read_csv(pages / "pages.csv", dtype=str).set_index("doc_id")
    assert (copies["url"].to_numpy() != sources.loc[log["source_id"], "url"].to_numpy()).all()


def test_update_tells_an_exact_stage_match_as_that_stage(workdir):
    """`linkage update` finishes a run as `dedupe` does: a copy the exact stage found below
    the threshold says so."""
    pd.DataFrame({"id": ["a", "b", "c"], "text": [
        "The Cat Sat On The Mat, Again!", "the cat sat on the mat again",
        "Quarterly revenue grew by ten percent this year"]}).to_csv(workdir / "base.csv",
                                                                  index=False)
    pd.DataFrame({"id": ["e"], "text": ["THE CAT -- SAT ON THE MAT AGAIN"]}).to_csv(
        workdir / "new.csv", index=False)
    (workdir / "rules.yaml").write_text(
        "id_column: id\nexact: {columns: [text]}\nmax_removal_rate: 1\n"
        "blocking: [{type: minhash, column: text, threshold: 0.9}]\n"
        "comparisons: [{type: jaccard, column: text}]\n"
        "scoring: {type: rule_sum, threshold: 1, weights: {text: {exact: 2, else: -2}}}\n")
    done = run_cli("dedupe", workdir / "base.csv", "--rules", workdir / "rules.yaml", "--out",
                   workdir / "out")
    assert done.returncode == 0, done.stderr
    before = snapshot(workdir)
    done = run_cli("update", workdir / "out", workdir / "new.csv", "--out", workdir / "out2")
    assert done.returncode == 0, done.stderr
    assert_unchanged_outside(before, snapshot(workdir), "out2")
    reasons = pd.read_parquet(workdir / "out2" / "clusters.parquet").set_index("id")["reason"]
    assert reasons["e"] == ("duplicate of a: linked by 1 pair(s), strongest with a (identical "
                            "normalized text (exact stage); match weight 0.00 < 1)")
    score = json.loads((workdir / "out2" / "summary.json").read_text())["stages"]["score"]
    assert score["matched_by_stage"] == {"exact": 2} and score["pairs_at_or_above_threshold"] == 0
