"""`labelled_texts()`: a labelled Korean/English text set with exact and near duplicates,
conflicting labels and statute quotes that are meant to repeat."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from linkage.errors import ParameterError
from linkage.synth._draw import pick
from linkage.synth._vocab import word_list
from linkage.synth.perturb import near_text_variant, safe_text_variant

TEXT_COLUMNS = ["doc_id", "text", "label", "source", "domain"]
TEXT_LABELS = ["positive", "negative", "neutral"]

_KO_PRODUCTS = word_list(
    """
이어폰 운동화 텀블러 전기포트 가습기 백팩 선크림 쿠션 에어프라이어 보조배터리 키보드 청소기
무선마우스 책상조명 블루투스스피커 노트북거치대 캠핑의자 전기장판 요가매트 샴푸
"""
)
_KO_ASPECTS = word_list("배송 포장 가격 품질 디자인 사이즈 색상 소리 냄새 마감 내구성 구성품")
_KO_PREDICATES = {
    "positive":
        word_list("마음에_들어요 좋아요 만족스러워요 훌륭해요 기대_이상이에요 최고예요"),
    "negative":
        word_list("별로예요 실망스러워요 최악이에요 기대_이하예요 설명과_달라요 엉망이에요"),
    "neutral":
        word_list("보통이에요 무난해요 평범해요 그저_그래요 가격만큼은_해요 예상한_정도예요"),
}
_KO_ADVERBS = {
    "positive": ["", "정말 ", "진짜 ", "너무 ", "꽤 "],
    "negative": ["", "정말 ", "너무 ", "좀 "],
    "neutral": ["", "그냥 ", "대체로 "],
}
_EN_PRODUCTS = [
    "earphones",
    "running shoes",
    "tumbler",
    "kettle",
    "humidifier",
    "backpack",
    "sunscreen",
    "air fryer",
    "power bank",
    "keyboard",
    "vacuum cleaner",
    "wireless mouse",
    "desk lamp",
    "speaker",
    "laptop stand",
    "camping chair",
    "yoga mat",
    "shampoo",
]
_EN_ASPECTS = [
    "delivery",
    "packaging",
    "price",
    "build quality",
    "design",
    "size",
    "colour",
    "sound",
    "smell",
    "battery life",
    "finish",
    "manual",
]
_EN_PREDICATES = {
    "positive": ["great", "excellent", "better than expected", "worth the price", "perfect"],
    "negative": ["terrible", "disappointing", "worse than described", "not worth it", "awful"],
    "neutral": ["okay", "average", "as described", "fine for the price", "nothing special"],
}
_EN_ADVERBS = {
    "positive": ["", "really ", "pretty ", "absolutely "],
    "negative": ["", "really ", "pretty ", "just "],
    "neutral": ["", "mostly ", "basically "],
}
_EN_TAILS = {
    "positive": ["", " Would buy again.", " Recommended."],
    "negative": ["", " I want a refund.", " Never again."],
    "neutral": ["", " It does the job.", " No complaints."],
}
_KO_TICKETS = {
    "positive": ["문제를 빨리 해결해 주셔서 감사합니다.", "교환 처리 친절하게 해주셔서 고마워요."],
    "negative": [
        "배송이 아직 안 왔어요.",
        "환불이 처리되지 않았어요.",
        "파손된 상품이 왔어요.",
        "다른 상품이 배송됐어요.",
    ],
    "neutral": [
        "배송지 변경 가능한가요?",
        "영수증 재발급 부탁드립니다.",
        "결제 수단을 바꾸고 싶어요.",
    ],
}
_EN_TICKETS = {
    "positive": ["thanks for sorting this out so quickly.", "the replacement arrived, thank you."],
    "negative": [
        "the parcel still has not arrived.",
        "my refund has not been processed.",
        "the item arrived broken.",
        "I received the wrong item.",
    ],
    "neutral": [
        "can I change the delivery address?",
        "please send me a copy of the invoice.",
        "how do I change my payment method?",
    ],
}
# Statute-style sentences written for this module, quoted verbatim in many legal documents.
PROTECTED_QUOTES = [
    "개인정보 보호법 제15조에 따라 개인정보처리자는 정보주체의 동의를 받은 경우 "
    "개인정보를 수집할 수 있으며 그 수집 목적의 범위에서 이용할 수 있다.",
    "전자상거래법 제17조에 따라 소비자는 계약내용에 관한 서면을 받은 날부터 "
    "7일 이내에 청약철회를 할 수 있다.",
    "약관규제법 제6조에 따라 신의성실의 원칙을 위반하여 공정성을 잃은 약관 조항은 무효이다.",
    "Under Article 6 of the GDPR, processing is lawful only if and to the extent that at least "
    "one of the listed legal bases applies.",
    "Under Article 17 of the GDPR, the data subject has the right to obtain from the controller "
    "the erasure of personal data concerning him or her without undue delay.",
    "Under Section 75 of the Consumer Credit Act 1974, the creditor is jointly and severally "
    "liable with the supplier for any misrepresentation or breach of contract.",
]
_TEXT_SOURCES = ["web", "qa", "synthetic", "import"]
_NON_WORD = re.compile(r"[^\w\s]")


def normalize_text(text: str) -> str:
    """Lower case, punctuation dropped, runs of white space made one space: the near-dup key."""
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def _subject(word: str) -> str:
    """`word` with the subject particle 이 or 가, as its last syllable needs."""
    last = ord(word[-1]) - 0xAC00
    return word + ("이" if 0 <= last < 11172 and last % 28 else "가")


def _new_text(rng: np.random.Generator) -> tuple[str, str]:
    """One original text and its label."""
    label = str(rng.choice(TEXT_LABELS, p=[0.45, 0.35, 0.2]))
    style = rng.choice(4, p=[0.4, 0.3, 0.15, 0.15])
    if style == 0:
        predicate = pick(rng, _KO_PREDICATES[label]).replace("_", " ")
        text = (
            f"{pick(rng, _KO_PRODUCTS)} {_subject(pick(rng, _KO_ASPECTS))} "
            f"{pick(rng, _KO_ADVERBS[label])}{predicate}{pick(rng, ['.', '.', '!', ''])}"
        )
    elif style == 1:
        text = (
            f"The {pick(rng, _EN_PRODUCTS)} {pick(rng, _EN_ASPECTS)} is "
            f"{pick(rng, _EN_ADVERBS[label])}{pick(rng, _EN_PREDICATES[label])}."
            f"{pick(rng, _EN_TAILS[label])}"
        )
    elif style == 2:
        text = f"주문번호 {rng.integers(100000, 1000000)} {pick(rng, _KO_TICKETS[label])}"
    else:
        text = f"Order #{rng.integers(100000, 1000000)}: {pick(rng, _EN_TICKETS[label])}"
    return text, label


def labelled_texts(n: int = 1500, seed: int = 13) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A labelled Korean/English text set (reviews and support tickets) with the usual dirt.

    About 10% of the rows are exact duplicates (same text and label), 10% near-duplicates (white
    space, punctuation or case changed, or a word changed; same label), about 5% sit in groups of
    2-3 rows whose texts normalize the same (`normalize_text`) but whose labels disagree, and a few
    statute sentences (`PROTECTED_QUOTES`, domain `legal`) are quoted verbatim by 6-13 documents
    each; those repeats are wanted and must survive cleaning. Returns (records, truth): records
    has `TEXT_COLUMNS` (all text), truth has `doc_id`, `text_group` (same id, same underlying
    text) and `kind` (original, exact_duplicate, near_duplicate, conflicting_label or
    protected_quote). The same arguments give the same frames.
    """
    if n < 100:
        raise ParameterError(f"n must be at least 100, got {n}")
    rng = np.random.default_rng(seed)
    quote_counts = rng.integers(6, 14, size=len(PROTECTED_QUOTES))
    n_exact = round(0.1 * n)
    n_near = round(0.1 * n)
    conflict_sizes: list[int] = []
    while sum(conflict_sizes) < round(0.05 * n) - 1:
        conflict_sizes.append(int(rng.choice([2, 3], p=[0.6, 0.4])))
    n_original = n - n_exact - n_near - sum(conflict_sizes) - int(quote_counts.sum())

    group_of_norm: dict[str, int] = {}  # normalized text -> text group, to keep groups apart
    rows: list[tuple[str, str, str, str, int, str]] = []  # text, label, source, domain, group, kind

    def new_group() -> tuple[str, str, int]:
        while True:
            text, label = _new_text(rng)
            if normalize_text(text) not in group_of_norm:
                group = len(group_of_norm)
                group_of_norm[normalize_text(text)] = group
                return text, label, group

    def source(p: list[float]) -> str:
        return str(rng.choice(_TEXT_SOURCES, p=p))

    originals = []
    for _ in range(n_original):
        text, label, group = new_group()
        originals.append((text, label, group))
        rows.append((text, label, source([0.5, 0.2, 0.15, 0.15]), "general", group, "original"))
    for i in rng.integers(len(originals), size=n_exact):
        text, label, group = originals[int(i)]
        kind = "exact_duplicate"
        rows.append((text, label, source([0.3, 0.1, 0.2, 0.4]), "general", group, kind))
    made = 0
    while made < n_near:
        text, label, group = originals[int(rng.integers(len(originals)))]
        variant = near_text_variant(rng, text)
        owner = group_of_norm.setdefault(normalize_text(variant), group)
        if variant == text or owner != group:
            continue
        kind = "near_duplicate"
        rows.append((variant, label, source([0.3, 0.2, 0.3, 0.2]), "general", group, kind))
        made += 1
    for size in conflict_sizes:
        text, label, group = new_group()
        others = [x for x in TEXT_LABELS if x != label]
        labels = [label, pick(rng, others), pick(rng, TEXT_LABELS)][:size]
        for k, lab in enumerate(labels):
            variant = text if k == 0 or rng.random() < 0.5 else safe_text_variant(rng, text)
            kind = "conflicting_label"
            rows.append((variant, lab, source([0.3, 0.3, 0.2, 0.2]), "general", group, kind))
    for quote, count in zip(PROTECTED_QUOTES, quote_counts, strict=True):
        group = group_of_norm.setdefault(normalize_text(quote), len(group_of_norm))
        for _ in range(int(count)):
            kind = "protected_quote"
            rows.append((quote, "neutral", source([0.4, 0.2, 0.1, 0.3]), "legal", group, kind))

    rows = [rows[i] for i in rng.permutation(len(rows))]
    width = max(6, len(str(len(rows))))
    ids = [f"D-{i + 1:0{width}d}" for i in range(len(rows))]
    names: dict[int, str] = {}
    for row in rows:
        names.setdefault(row[4], f"G-{len(names) + 1:05d}")
    records = pd.DataFrame(
        {
            "doc_id": ids,
            "text": [r[0] for r in rows],
            "label": [r[1] for r in rows],
            "source": [r[2] for r in rows],
            "domain": [r[3] for r in rows],
        }
    ).astype(pd.StringDtype())
    truth = pd.DataFrame(
        {"doc_id": ids, "text_group": [names[r[4]] for r in rows], "kind": [r[5] for r in rows]},
        dtype="str",
    )
    return records, truth
