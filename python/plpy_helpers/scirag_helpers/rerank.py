"""Reranking behind one protocol (VulcanLab retrieval step 4).

A :class:`Reranker` scores (query, passage) pairs. Two adapters ship:

* :class:`LLMReranker` asks the configured LLM client (``llm.get_llm``) for a
  0-10 relevance score per passage, in batches, as JSON;
* :class:`CrossEncoderReranker` runs a local cross-encoder exported to ONNX: a
  folder with ``model.onnx`` and ``tokenizer.json``: the package's
  ``models/reranker`` (setting value "builtin", as deployed) or one the admin
  provides. Nothing is downloaded.

On top of the model score (or of the fused order when no model runs) come the
entity boost (+``entity_boost`` per query entity found in the passage) and the
intent bias (each question intent prefers a content shape, as VulcanLab lists).

A reranker that fails (no client, no model, an error, unusable output) never
fails retrieval: the input order comes back with status ``fallback: <reason>``,
where the reason is a fixed class name and never query or chunk text.

Everything takes its collaborators (plpy, the GD cache, the LLM client, the
ONNX session) as arguments, so tests/py exercise it without a database.
"""

from __future__ import annotations

import copy
import json
import math
import re
import time
from pathlib import Path
from typing import Callable, NamedTuple, Protocol, Sequence

from .llm import LLMError, get_llm, parse_json_response
from .prompts import INTENTS  # the classes of the one classifier (scirag.classify_intent)

RERANKERS = ("none", "llm", "cross_encoder")

# Bounds on what a caller hands the stage (issue 13: nothing a reader sends may hang or
# bloat the server). Every routine below is linear in its input, and these caps bound it.
MAX_QUERY_CHARS = 4000  # a question; longer is refused with a clear error
MAX_PASSAGES = 1000  # candidates per call
MAX_PASSAGE_CHARS = 100_000  # one candidate's text
MAX_ENTITIES = 32  # query entities used for the boost (each is one scan per passage)
LLM_MAX_PASSAGES = 50  # passages an LLM reranker scores per call (each batch is a paid call);
# the rest keep their fused order below the scored ones
MAX_BATCH_SIZE = 1024  # the preset schema's bounds
MAX_LENGTH = 8192
MODEL_CACHE_SIZE = 1  # loaded cross-encoders kept per backend (LRU)

DEFAULTS = {
    "reranker": "none",
    "model_path": None,
    "entity_boost": 0.05,
    "entities": None,  # None: taken from the query
    "intent_bias": False,
    "intent": None,  # None: scirag.classify_intent(query)
    "intent_weight": 0.05,
    "batch_size": 8,
    "max_length": 512,
    "fused_scores": None,  # base scores when no model runs (normalised)
    "deadline_ms": None,  # time left for the model (retrieve passes what its deadline leaves)
    "paragraphs": None,  # at most this many paragraph openings per chunk (None: reranker.json's)
}
MAX_DEADLINE_MS = 600_000  # the bound of retrieve's own deadline_ms


class OptionsError(ValueError):
    """The caller passed options rerank does not understand (a programming error, not a model failure)."""


class RerankFailure(RuntimeError):
    """A reranker could not score; ``reason`` is a content-free class name for the trace."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score in [0, 1] per passage, in passage order."""
        ...


# ---------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def parse_options(options) -> dict:
    """Options as a dict with defaults filled in; unknown keys or wrong types raise OptionsError naming the key."""
    if options is None or options == "":
        options = {}
    if isinstance(options, str):
        options = json.loads(options)
    if not isinstance(options, dict):
        raise OptionsError("rerank options must be a JSON object")
    out = dict(DEFAULTS)
    for key, v in options.items():
        if key not in DEFAULTS:
            raise OptionsError(f'unknown rerank option "{key}" (known: {", ".join(sorted(DEFAULTS))})')
        if key == "reranker":
            if v not in RERANKERS:
                raise OptionsError(f'rerank option "reranker" must be one of {", ".join(RERANKERS)}')
        elif key in ("model_path", "intent"):
            if v is not None and not isinstance(v, str):
                raise OptionsError(f'rerank option "{key}" must be a string')
            if key == "intent" and v is not None and v.upper() not in INTENTS:
                raise OptionsError(f'rerank option "intent" must be one of {", ".join(INTENTS)}')
        elif key in ("entity_boost", "intent_weight"):
            if not _is_number(v) or not 0 <= v <= 1:
                raise OptionsError(f'rerank option "{key}" must be a number between 0 and 1')
        elif key in ("batch_size", "max_length"):
            top = MAX_BATCH_SIZE if key == "batch_size" else MAX_LENGTH
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= top:
                raise OptionsError(f'rerank option "{key}" must be an integer between 1 and {top}')
        elif key == "intent_bias":
            if not isinstance(v, bool):
                raise OptionsError('rerank option "intent_bias" must be a boolean')
        elif key == "entities":
            if v is not None and (not isinstance(v, list) or not all(isinstance(e, str) for e in v)):
                raise OptionsError('rerank option "entities" must be a list of strings')
            if v is not None and (len(v) > MAX_ENTITIES or any(len(e) > 200 for e in v)):
                raise OptionsError(
                    f'rerank option "entities" takes at most {MAX_ENTITIES} strings of at most 200 characters'
                )
        elif key == "paragraphs":
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= MAX_PARAGRAPHS):
                raise OptionsError(f'rerank option "paragraphs" must be an integer between 1 and {MAX_PARAGRAPHS}')
        elif key == "deadline_ms":
            if v is not None and (not _is_number(v) or not 0 <= v <= MAX_DEADLINE_MS):
                raise OptionsError(f'rerank option "deadline_ms" must be a number between 0 and {MAX_DEADLINE_MS}')
        elif key == "fused_scores":
            if v is not None and (not isinstance(v, list) or not all(_is_number(x) for x in v)):
                raise OptionsError('rerank option "fused_scores" must be a list of numbers')
        out[key] = v
    if out["intent"]:
        out["intent"] = out["intent"].upper()
    return out


# ---------------------------------------------------------------------------
# LLM adapter
# ---------------------------------------------------------------------------

LLM_SYSTEM = (
    "You judge how relevant passages from scientific documents are to a question. "
    "Judge only what each passage says; do not answer the question."
)


def _truncate_words(text: str, max_words: int) -> str:
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words]) + " ..."


def llm_prompt(query: str, passages: Sequence[str], max_words: int) -> str:
    lines = [f"Question: {query}", "", "Passages:"]
    for i, p in enumerate(passages, 1):
        lines.append(f"[{i}] {_truncate_words(' '.join(p.split()), max_words)}")
    lines += [
        "",
        f"Rate each of the {len(passages)} passages from 0 (irrelevant) to 10 (answers the question "
        "directly). Reply with JSON only, in passage order: "
        '{"scores": [' + ", ".join(f"<score of [{i}]>" for i in range(1, len(passages) + 1)) + "]}",
    ]
    return "\n".join(lines)


class LLMReranker:
    name = "llm"

    def __init__(self, client, batch_size: int = 8, max_length: int = 512):
        self.client = client
        self.batch_size = max(1, batch_size)
        self.max_length = max(1, max_length)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        out: list[float] = []
        for start in range(0, len(passages), self.batch_size):
            batch = list(passages[start : start + self.batch_size])
            prompt = llm_prompt(query, batch, self.max_length)
            try:
                text = self.client.complete(
                    prompt, system=LLM_SYSTEM, temperature=0.0, json_mode=True, max_tokens=64 + 8 * len(batch)
                )
            except Exception as exc:  # any client failure is one fallback class
                raise RerankFailure("llm_error") from exc
            try:
                data = parse_json_response(text)
            except LLMError as exc:
                raise RerankFailure("bad_output") from exc
            scores = data.get("scores") if isinstance(data, dict) else data
            if (
                not isinstance(scores, list)
                or len(scores) != len(batch)
                or not all(_is_number(s) and 0 <= s <= 10 for s in scores)
            ):
                raise RerankFailure("bad_output")
            out.extend(float(s) / 10.0 for s in scores)
        return out


# ---------------------------------------------------------------------------
# Cross-encoder adapter (ONNX)
# ---------------------------------------------------------------------------


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def load_cross_encoder_files(model_path: str, threads: int = 1, tokenizer_file: Path | None = None):
    """(session, tokenizer) from a folder holding model.onnx and tokenizer.json
    (or the path of the .onnx file itself, with tokenizer.json beside it, or
    ``tokenizer_file`` when given: the span reader uses the base model's own)."""
    folder = Path(model_path)
    try:
        onnx_file = folder / "model.onnx" if folder.is_dir() else folder
        tok_file = tokenizer_file or onnx_file.parent / "tokenizer.json"
        found = onnx_file.is_file() and tok_file.is_file()
    except OSError as exc:  # a folder the server may not read is a missing model, not an error
        raise RerankFailure("model_unavailable") from exc
    if not found:
        raise RerankFailure("model_unavailable")
    try:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from .embedder import tokenizer_threads

        tokenizer_threads(threads)
        opts = ort.SessionOptions()
        # Inside a backend: one thread, no arena (as the embedder).
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.enable_cpu_mem_arena = False
        session = ort.InferenceSession(str(onnx_file), opts, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(tok_file))
    except Exception as exc:  # a broken model folder is one fallback class
        raise RerankFailure("model_unavailable") from exc
    return session, tokenizer


class ModelConfig(NamedTuple):
    """How a model folder's ``reranker.json`` says to use the model (read_model_config)."""

    fused_weight: float = 0.0  # the model's order alone
    max_length: int | None = None
    fused_weight_one_document: float | None = None  # fused_weight for every pool
    paragraphs: int = 1  # a chunk's head only
    max_length_one_document: int | None = None  # max_length for every pool


MAX_PARAGRAPHS = 8


def read_model_config(model_path: str) -> ModelConfig:
    """What a model folder's ``reranker.json`` says of how to use it. ``fused_weight`` w
    blends the scores: (1 - w) * model score + w * min-max fused score, chosen on the
    model's tuning split (docs/reranker.md); 0 (the model's order alone) when absent.
    ``fused_weight_one_document`` is the blend when every candidate comes from one
    document (a question asked of one paper); ``fused_weight`` when absent. ``max_length``
    is the pair length the model was trained at: the stage never feeds it longer pairs
    (they cost time and were never trained on); None when absent. ``paragraphs`` (1 when
    absent, at most MAX_PARAGRAPHS): a chunk is scored at the opening of each of its first
    that many paragraphs and takes the best, for a model trained on paragraph openings
    whose pairs hold only the first few dozen words of a chunk. ``max_length_one_document``
    (at most ``max_length``) is the pair length when every candidate comes from one
    document: the title they share is left out of those pairs (CrossEncoderReranker.
    one_document), and the paragraph's first words decide. A file that says anything
    else is an unusable model."""
    folder = Path(model_path)
    try:
        cfg = folder / "reranker.json" if folder.is_dir() else folder.parent / "reranker.json"
        if not cfg.is_file():
            return ModelConfig()
        data = json.loads(cfg.read_text(encoding="utf-8"))
        w = data.get("fused_weight", 0.0)
        w_one = data.get("fused_weight_one_document")
        length = data.get("max_length")
        paragraphs = data.get("paragraphs", 1)
        length_one = data.get("max_length_one_document")
    except (OSError, ValueError, AttributeError) as exc:
        raise RerankFailure("model_unavailable") from exc
    for weight in (w, 0.0 if w_one is None else w_one):
        if not _is_number(weight) or not 0 <= weight <= 1:
            raise RerankFailure("model_unavailable")
    for n in (length, length_one):
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or not 8 <= n <= MAX_LENGTH):
            raise RerankFailure("model_unavailable")
    if length_one is not None and length is not None and length_one > length:
        raise RerankFailure("model_unavailable")  # longer than the model was trained at
    if not isinstance(paragraphs, int) or isinstance(paragraphs, bool) or not 1 <= paragraphs <= MAX_PARAGRAPHS:
        raise RerankFailure("model_unavailable")
    return ModelConfig(float(w), length, None if w_one is None else float(w_one), paragraphs, length_one)


def paragraph_openings(passage: str, most: int, drop: str | None = None) -> list[str]:
    """A chunk as the loader stores it (its title and section lines, a blank line, then
    paragraphs separated by blank lines) seen from each of its first ``most`` paragraphs:
    the heading lines, a blank line and that paragraph. A chunk of one paragraph, or one
    without heading lines, is itself. ``drop``, when the head's first line is exactly
    that, is left out of the head (a head left empty leaves the paragraph alone)."""
    head, sep, body = passage.partition("\n\n")
    if not sep:
        return [passage]
    if drop is not None:
        first, _, rest = head.partition("\n")
        if first == drop:
            head = rest
    paras = [p for p in body.split("\n\n") if p.strip()]
    if most <= 1 or len(paras) <= 1:
        paras = [body]
    return [f"{head}\n\n{p}" if head else p for p in paras[:most]]


def shared_first_line(passages: Sequence[str]) -> str | None:
    """The first line of every passage's head when it is the same line for all (the
    title the loader puts on each chunk of one document), else None. A passage without
    a head, or a single passage, shares nothing."""
    if len(passages) < 2:
        return None
    line = None
    for p in passages:
        head, sep, _ = p.partition("\n\n")
        first = head.partition("\n")[0]
        if not sep or not first.strip() or (line is not None and first != line):
            return None
        line = first
    return line


_WORD_RUN = re.compile(r"\S+")
_ALNUM = re.compile(r"[^\W_]")  # a letter or digit of any script


def _first_words(text: str, words: int) -> str:
    """``text`` up to the end of its ``words``-th word holding a letter or digit (each
    gives the tokenizer at least one token: whitespace splits words, and normalising
    never removes a letter or digit), or all of it when it has fewer."""
    n = 0
    for m in _WORD_RUN.finditer(text):
        if _ALNUM.search(m.group()):
            n += 1
            if n >= words:
                return text[: m.end()]
    return text


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a sequence-classification cross-encoder.

    ``session`` is anything with ``get_inputs()`` (objects with ``name`` and
    ``type``) and ``run(output_names, feeds)`` returning logits of shape
    (batch,), (batch, 1) or (batch, 2): an onnxruntime InferenceSession, or a
    recorded fake in tests. Logits become scores in [0, 1] by the sigmoid."""

    name = "cross_encoder"
    drop: str | None = None  # a head line left out of every pair (one_document)

    def __init__(
        self,
        model_path: str | None = None,
        *,
        session=None,
        tokenizer=None,
        batch_size: int = 8,
        max_length: int = 512,
        threads: int = 1,
        word_vectors=None,
    ):
        if session is None or tokenizer is None:
            if not model_path:
                raise RerankFailure("no_model_path")
            session, tokenizer = load_cross_encoder_files(model_path, threads)
        self.session = session
        self.tokenizer = tokenizer
        self.batch_size = max(1, batch_size)
        cfg = read_model_config(model_path) if model_path else ModelConfig()
        self.fused_weight, self.fused_weight_one_document = cfg.fused_weight, cfg.fused_weight_one_document
        self.paragraphs = cfg.paragraphs
        self.max_length = max(8, min(max_length, cfg.max_length or max_length))
        self.max_length_one_document = min(self.max_length, cfg.max_length_one_document or self.max_length)
        self.tokenizer.no_padding()
        # The same vocabulary without truncation, to count a question's tokens.
        self.untruncated = tokenizer.__class__.from_str(tokenizer.to_str())
        self.untruncated.no_truncation()
        self.tokenizer_one_document = tokenizer.__class__.from_str(tokenizer.to_str())
        self.tokenizer_one_document.no_padding()
        self.tokenizer_one_document.enable_truncation(max_length=self.max_length_one_document, strategy="longest_first")
        self.tokenizer.enable_truncation(max_length=self.max_length, strategy="longest_first")
        self.pad_id = next((i for i in (tokenizer.token_to_id(t) for t in ("[PAD]", "<pad>")) if i is not None), 0)
        self.inputs = {i.name: getattr(i, "type", "tensor(int64)") for i in session.get_inputs()}
        # A model whose graph starts from word vectors (inputs_embeds) was trained with the
        # base model's word table frozen and ships without it: the rows come from the
        # installed base (scirag_helpers.embedder.base_word_vectors), or from the caller.
        self.word_vectors = None
        if "inputs_embeds" in self.inputs:
            try:
                from .embedder import base_word_vectors

                self.word_vectors = base_word_vectors() if word_vectors is None else word_vectors
            except Exception as exc:  # the base package missing or unreadable: no model
                raise RerankFailure("model_unavailable") from exc
            if len(self.word_vectors) <= max(tokenizer.get_vocab().values()):
                raise RerankFailure("model_unavailable")  # a table for another vocabulary

    def _heads(self, query: str, passages: list[str]) -> list[str]:
        """Each passage, or its first words when they alone decide the pair's tokens.

        A pair keeps at most max_length tokens, yet tokenizing a whole chunk costs time in
        its length (a QASPER question's twenty chunks, about sixty paragraph openings: 13
        ms on one thread whole, 10 ms cut). A passage cut after a word tokenizes to a prefix
        of the whole passage's tokens; when that prefix is longer than both max_length and
        the question, truncation keeps the same tokens from either (the passage is the
        longer side both times), so the cut one is used. Every word holding a letter or
        digit gives at least one token, so counting such words bounds the prefix's tokens
        from below without tokenizing it; a passage with too few is used whole."""
        need = max(self.max_length, len(self.untruncated.encode(query, add_special_tokens=False).ids)) + 1
        return [_first_words(p, need) for p in passages]

    def _feeds(self, encodings):
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        arrays = {"input_ids": [], "attention_mask": [], "token_type_ids": []}
        for e in encodings:
            pad = width - len(e.ids)
            arrays["input_ids"].append(list(e.ids) + [self.pad_id] * pad)
            arrays["attention_mask"].append(list(e.attention_mask) + [0] * pad)
            arrays["token_type_ids"].append(list(e.type_ids) + [0] * pad)
        feeds = {}
        for name, typ in self.inputs.items():
            if name == "inputs_embeds":
                feeds[name] = np.asarray(self.word_vectors[np.asarray(arrays["input_ids"])], dtype=np.float32)
                continue
            if name not in arrays:
                raise RerankFailure("model_error")  # an input this adapter cannot provide
            feeds[name] = np.asarray(arrays[name], dtype=np.int32 if "int32" in str(typ) else np.int64)
        return feeds

    def at_most(self, paragraphs: int) -> "CrossEncoderReranker":
        """This model scoring a chunk at no more than ``paragraphs`` openings (the rerank
        option: fewer pairs cost less), never more than its reranker.json says. A copy
        sharing the loaded session: the cached model keeps its own setting."""
        view = copy.copy(self)
        view.paragraphs = max(1, min(int(paragraphs), self.paragraphs))
        return view

    def one_document(self, title: str | None) -> "CrossEncoderReranker":
        """This model for a pool drawn from one document, a copy sharing the loaded
        session: pairs of reranker.json's ``max_length_one_document`` tokens, without
        ``title`` (the head line every candidate shares: shared_first_line), which tells
        them apart in nothing and took a dozen of a pair's tokens. On 477 QASPER train
        questions asked of their papers (docs/reranker.md) the model's own 64-token pairs
        ranked no better than these 32-token ones, at twice the cost."""
        view = copy.copy(self)
        view.drop = title
        view.max_length = self.max_length_one_document
        view.tokenizer = self.tokenizer_one_document
        return view

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage: the best of its paragraph openings (reranker.json's
        ``paragraphs``, or fewer: at_most; a passage of one paragraph is scored as it is)."""
        views = [paragraph_openings(p, self.paragraphs, self.drop) for p in passages]
        flat = self._score_pairs(query, [v for vs in views for v in vs])
        out, at = [], 0
        for vs in views:
            out.append(max(flat[at : at + len(vs)]))
            at += len(vs)
        return out

    def _score_pairs(self, query: str, passages: Sequence[str]) -> list[float]:
        import numpy as np

        out: list[float] = []
        for start in range(0, len(passages), self.batch_size):
            batch = list(passages[start : start + self.batch_size])
            try:
                encodings = self.tokenizer.encode_batch([(query, p) for p in self._heads(query, batch)])
                feeds = self._feeds(encodings)
                logits = np.asarray(self.session.run(None, feeds)[0], dtype=np.float64)
            except RerankFailure:
                raise
            except Exception as exc:  # inference errors are one fallback class
                raise RerankFailure("model_error") from exc
            if logits.ndim == 2 and logits.shape[1] == 1:
                logits = logits[:, 0]
            elif logits.ndim == 2 and logits.shape[1] == 2:
                logits = logits[:, 1] - logits[:, 0]  # sigmoid of the difference = softmax of class 1
            if logits.ndim != 1 or logits.shape[0] != len(batch) or not np.all(np.isfinite(logits)):
                raise RerankFailure("bad_output")
            out.extend(_sigmoid(float(x)) for x in logits)
        return out


# ---------------------------------------------------------------------------
# Entity boost and intent bias
# ---------------------------------------------------------------------------

_QUESTION_WORDS = {
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "how",
    "is",
    "are",
    "does",
    "do",
    "did",
    "can",
    "could",
    "should",
    "would",
    "will",
    "compare",
    "define",
    "describe",
    "explain",
    "list",
    "give",
    "name",
    "the",
    "a",
    "an",
    "in",
    "of",
    "for",
    "and",
    "or",
}


def _starts_sentence(text: str, pos: int) -> bool:
    """True when only whitespace separates ``pos`` from the text start or from a
    sentence mark (.!?:) before it. Walks back over that whitespace only, so a scan
    over all matches is linear (it used to regex-search the whole prefix per match)."""
    j = pos - 1
    while j >= 0 and text[j].isspace():
        j -= 1
    return j < 0 or text[j] in ".!?:"


def query_entities(query: str) -> list[str]:
    """Entities named by a question, without a model: quoted phrases, codes and
    acronyms ("HX-40", "DSM-5", "SOC"), and runs of capitalised words that do
    not merely start the sentence ("Osgood County", "Calder Basin").
    Linear in the query; at most MAX_ENTITIES come back."""
    found: list[str] = []
    for m in re.finditer(r'"([^"]+)"|“([^”]+)”', query):
        found.append((m.group(1) or m.group(2)).strip())
    for m in re.finditer(r"[A-Za-z0-9][\w\-/.]*[A-Za-z0-9]|[A-Z]{2,}", query):
        tok = m.group(0)
        has_digit = any(c.isdigit() for c in tok)
        has_alpha = any(c.isalpha() for c in tok)
        if (has_digit and has_alpha) or sum(c.isupper() for c in tok) >= 2:
            found.append(tok)
    for m in re.finditer(r"\b[A-Z][\w\-]*(?:\s+(?:of\s+)?[A-Z][\w\-]*)*", query):
        words = m.group(0).split()
        if _starts_sentence(query, m.start()):
            words = words[1:]
            while words and words[0].lower() in ("of",):
                words = words[1:]
        words = [w for w in words if w.lower() not in _QUESTION_WORDS] if len(words) == 1 else words
        if words:
            found.append(" ".join(words))
    seen, out = set(), []
    for e in found:
        key = e.lower()
        if e and key not in seen and key not in _QUESTION_WORDS:
            seen.add(key)
            out.append(e)
            if len(out) == MAX_ENTITIES:
                break
    return out


def entity_hits(entities: Sequence[str], text: str) -> int:
    """How many of the entities occur in the text (case-insensitive, whole words)."""
    return sum(1 for e in entities if e and re.search(r"(?<!\w)" + re.escape(e) + r"(?!\w)", text, re.IGNORECASE))


def _words(text: str) -> int:
    return len(re.findall(r"\S*\w\S*", text))


def intent_match(intent: str | None, shape: dict | None, text: str) -> float:
    """How well a chunk's shape suits a question intent, in [0, 1] (VulcanLab:
    definitions prefer H2/H3 sections of moderate length; mechanisms H3/H4 or
    detailed chunks; comparisons H2/H3 with tables or lists; study details
    longer, detailed content; plus applications: procedures and practical
    prose; critiques: discussion and limitation sections; quantities: tables and
    prose with numbers)."""
    if not intent or intent == "GENERAL":
        return 0.0
    shape = shape or {}
    level = shape.get("level")
    # A content chunk's level is its section's heading level + 1.
    heading = None if level is None else (level if shape.get("kind") == "section" else level - 1)
    words = _words(text)
    has_list = len(re.findall(r"(?m)^\s*(?:[-*•]|\d+[.)])\s+\S", text)) >= 2
    tabular = bool(shape.get("is_table")) or text.count(" | ") >= 2
    path = (shape.get("section_path") or "").lower()
    if intent == "DEFINITION":
        return 0.5 * (heading in (2, 3)) + 0.5 * (40 <= words <= 300)
    if intent == "MECHANISM":
        return 0.5 * (heading in (3, 4)) + 0.5 * (words >= 150)
    if intent == "COMPARISON":
        return 0.5 * (heading in (2, 3)) + 0.5 * (tabular or has_list)
    if intent == "STUDY_DETAIL":
        return 1.0 if words >= 250 else 0.5 if words >= 150 or tabular else 0.0
    if intent == "QUANTITY":
        # a figure with its unit: a table, or prose that carries numbers
        return 0.5 * tabular + 0.5 * (len(re.findall(r"\d", text)) >= 3)
    if intent == "APPLICATION":
        return 0.5 * has_list + 0.5 * (80 <= words <= 400)
    if intent == "CRITIQUE":
        return 0.5 * bool(re.search(r"discussion|limitation|critique|uncertaint|caveat|conclusion", path)) + 0.5 * (
            words >= 100
        )
    return 0.0


# ---------------------------------------------------------------------------
# The stage
# ---------------------------------------------------------------------------


def _base_scores(n: int, fused: Sequence[float] | None) -> list[float]:
    """The fused order as scores in [0, 1]: the fused scores min-max normalised,
    or 1, (n-1)/n, ... by position when none are given."""
    if fused:
        lo, hi = min(fused), max(fused)
        return [1.0 if hi == lo else (float(s) - lo) / (hi - lo) for s in fused]
    return [(n - i) / n for i in range(n)]


class _Interrupted(Exception):
    """Carries a cancel/timeout from the interrupt hook past the reranker's fallback."""


def check_input(query, ids: Sequence, texts: Sequence) -> None:
    """Refuses inputs past the stage's bounds, naming the bound (before any model runs)."""
    if query is not None and len(query) > MAX_QUERY_CHARS:
        raise OptionsError(f"rerank: the query is {len(query)} characters long, at most {MAX_QUERY_CHARS} allowed")
    if len(ids) > MAX_PASSAGES:
        raise OptionsError(f"rerank: {len(ids)} candidates, at most {MAX_PASSAGES} allowed")
    for t in texts:
        if t is not None and len(t) > MAX_PASSAGE_CHARS:
            raise OptionsError(
                f"rerank: a candidate text is {len(t)} characters long, at most {MAX_PASSAGE_CHARS} allowed"
            )


def rerank(
    query: str,
    chunk_ids: Sequence[int],
    contents: Sequence[str],
    options=None,
    *,
    shapes: dict | None = None,
    classify: Callable[[str], str] | None = None,
    llm=None,
    cross_encoder: Reranker | None = None,
    cache: dict | None = None,
    env: dict | None = None,
    interrupt: Callable[[], None] | None = None,
    clock: Callable[[], float] | None = None,
) -> list[tuple[int, float, str]]:
    """Rows (chunk_id, score, status), best first.

    ``llm`` and ``cross_encoder`` replace the configured client / the model
    loaded from ``model_path`` (tests inject recorded ones); ``shapes`` maps a
    chunk id to its level, kind, is_table and section_path; ``classify`` gives
    the intent when the options do not; ``cache`` (GD) keeps loaded models;
    ``interrupt`` is called between units of work (in the database it calls back
    into the server, which honours statement_timeout and pg_cancel_backend);
    ``clock`` (seconds, default time.monotonic) measures the ``deadline_ms`` option:
    what is scored in time is reordered, the rest keeps its fused order below it."""
    opts = parse_options(options)
    ids = list(chunk_ids or [])
    texts = [t or "" for t in (contents or [])]
    if len(ids) != len(texts):
        raise OptionsError(f"rerank: {len(ids)} chunk ids but {len(texts)} contents")
    check_input(query, ids, texts)
    fused = opts["fused_scores"]
    if fused is not None and len(fused) != len(ids):
        raise OptionsError(f'rerank option "fused_scores" has {len(fused)} scores for {len(ids)} chunks')
    n = len(ids)
    if n == 0:
        return []
    tick = interrupt or (lambda: None)
    base = _base_scores(n, fused)

    status = "disabled"
    if opts["reranker"] != "none":
        clock = clock or time.monotonic
        t0 = clock()  # loading the model counts against the deadline too
        one_document = _one_document(ids, shapes)
        try:
            model = _reranker(opts, llm=llm, cross_encoder=cross_encoder, cache=cache, env=env)
            if opts["paragraphs"] is not None and isinstance(model, CrossEncoderReranker):
                model = model.at_most(opts["paragraphs"])
            if one_document and isinstance(model, CrossEncoderReranker):
                model = model.one_document(shared_first_line(texts))
            # An LLM reranker scores the head of the pool only: each batch is a paid call.
            head = min(n, LLM_MAX_PASSAGES) if getattr(model, "name", "") == "llm" else n
            scores = _scores_in_time(model, query or "", texts[:head], opts["deadline_ms"], tick, clock, t0)
            if not scores:
                raise RerankFailure("deadline")
            scored = "ok" if len(scores) == head else f"partial: deadline, {len(scores)} of {n} scored"
            head = len(scores)
            w = getattr(model, "fused_weight", 0.0) or 0.0
            w_one = getattr(model, "fused_weight_one_document", None)
            if w_one is not None and one_document:
                w = w_one  # a question asked of one paper: its own blend (reranker.json)
            if w > 0:  # the model folder's blend with the fused order (reranker.json)
                scores = [(1.0 - w) * float(s) + w * base[i] for i, s in enumerate(scores)]
            # the unscored tail keeps its fused order, below every scored passage
            floor = min(scores) if scores else 0.0
            tail = [floor - 1.0 + base[i] / 2.0 for i in range(head, n)]
            base = [float(x) for x in scores] + tail
            status = scored
        except _Interrupted as exc:
            raise exc.__cause__ from None
        except RerankFailure as exc:
            return [(cid, base[i], f"fallback: {exc.reason}") for i, cid in enumerate(ids)]
        except Exception:  # never fail retrieval because of a reranker
            return [(cid, base[i], "fallback: unexpected_error") for i, cid in enumerate(ids)]

    final = list(base)
    if opts["entity_boost"] > 0:
        tick()
        entities = opts["entities"] if opts["entities"] is not None else query_entities(query or "")
        if entities:
            boosted = []
            for i, s in enumerate(final):
                if i % 32 == 0:
                    tick()
                boosted.append(s + opts["entity_boost"] * entity_hits(entities, texts[i]))
            final = boosted
    if opts["intent_bias"] and opts["intent_weight"] > 0:
        intent = opts["intent"] or (classify(query or "") if classify else None)
        shapes = shapes or {}
        final = [
            s + opts["intent_weight"] * intent_match(intent, shapes.get(ids[i]), texts[i]) for i, s in enumerate(final)
        ]
    order = sorted(range(n), key=lambda i: (-final[i], i))
    return [(ids[i], final[i], status) for i in order]


def _one_document(ids: Sequence[int], shapes: dict | None) -> bool:
    """Whether every candidate comes from one document (shapes carry document_id): inside
    one paper every chunk shares the topic, so the fused scores separate less and the
    model's blend differs (reranker.json's fused_weight_one_document)."""
    docs = {(shapes or {}).get(i, {}).get("document_id") for i in ids}
    return len(ids) > 1 and len(docs) == 1 and None not in docs


def _scores_in_time(model, query: str, texts: list[str], deadline_ms, tick, clock, t0) -> list[float]:
    """The model's scores of ``texts`` in order, one batch at a time, for as long as the
    deadline allows: a batch is not started when the last one's duration says it would end
    after the deadline (nor any when none is left), so a call overruns by at most its first
    batch. ``tick`` runs before every batch (cancel and statement_timeout end the call
    there)."""
    step = max(1, min(64, int(getattr(model, "batch_size", 64) or 64)))
    scores: list[float] = []
    last = 0.0
    for start in range(0, len(texts), step):
        try:
            tick()
        except Exception as exc:  # a cancel or timeout must end the call, not fall back
            raise _Interrupted() from exc
        began = clock()
        if deadline_ms is not None and (deadline_ms <= 0 or (began - t0 + last) * 1000.0 > deadline_ms):
            break
        batch = model.score(query, texts[start : start + step])
        if len(batch) != len(texts[start : start + step]):
            raise RerankFailure("bad_output")
        scores.extend(batch)
        last = clock() - began
    return scores


def _reranker(opts: dict, *, llm=None, cross_encoder=None, cache=None, env=None) -> Reranker:
    if opts["reranker"] == "llm":
        client = llm
        if client is None:
            try:
                client = get_llm(env)
            except LLMError as exc:
                raise RerankFailure("llm_misconfigured") from exc
        if client is None:
            raise RerankFailure("no_llm_configured")
        return LLMReranker(client, opts["batch_size"], opts["max_length"])
    if cross_encoder is not None:
        return cross_encoder
    if not opts["model_path"]:
        raise RerankFailure("no_model_path")
    # batch_size changes no loaded state, so it is not part of the key; the cache holds
    # MODEL_CACHE_SIZE models (LRU): a backend never accumulates one model per variant.
    key = ("cross_encoder", opts["model_path"], opts["max_length"])
    models = cache.setdefault("scirag_rerankers", {}) if cache is not None else None
    if models is not None and key in models:
        model = models.pop(key)
        models[key] = model  # most recently used last
        model.batch_size = max(1, opts["batch_size"])
        return model
    model = CrossEncoderReranker(opts["model_path"], batch_size=opts["batch_size"], max_length=opts["max_length"])
    if models is not None:
        while len(models) >= MODEL_CACHE_SIZE:
            models.pop(next(iter(models)))
        models[key] = model
    return model


# The folder of the cross-encoder trained here from the fp32 all-MiniLM-L6-v2
# (scripts/train_reranker.py; docs/reranker.md, models/reranker/MODEL_CARD.md): the
# compact model (two layers, 64-token pairs, int8) is committed there as model.onnx.
BUILTIN = "builtin"
BUILTIN_MODEL_DIR = Path(__file__).with_name("models") / "reranker"


def resolve_model_path(value: str | None) -> str | None:
    """A reranker_model_path setting as a folder: "builtin" is the package's model
    folder; empty or missing is no model."""
    if not value:
        return None
    return str(BUILTIN_MODEL_DIR) if value == BUILTIN else value


def admin_model_path(plpy) -> str | None:
    """The cross-encoder folder from scirag.settings (reranker_model_path): only the
    admin chooses which file the server loads, never a caller's options. The deployed
    value is "builtin" (schema/deep_rerank)."""
    rows = plpy.execute("SELECT value FROM scirag.settings WHERE key = 'reranker_model_path'")
    return resolve_model_path(rows[0]["value"]) if rows else None


def rerank_sql(plpy, GD, query, chunk_ids, contents, options) -> list[tuple[int, float, str]]:
    """Body of scirag.rerank: fail closed on an empty scope, drop ids the caller
    cannot read (row-level security decides), look up chunk shapes, rerank."""
    opts = parse_options(options)  # invalid options are the caller's error: raise
    if opts["model_path"] is not None:
        raise OptionsError(
            'rerank option "model_path" is not accepted from callers: the admin sets the model '
            "folder in scirag.settings (key reranker_model_path)"
        )
    ids = list(chunk_ids or [])
    texts = list(contents or [])
    if len(ids) != len(texts):
        raise OptionsError(f"rerank: {len(ids)} chunk ids but {len(texts)} contents")
    check_input(query, ids, texts)  # bounded before any Python text work
    if plpy.execute("SELECT scirag.scope_is_empty() AS e")[0]["e"]:
        return []
    if opts["reranker"] == "cross_encoder":
        opts["model_path"] = admin_model_path(plpy)
    plan = GD.get("scirag_rerank_shapes")
    if plan is None:
        plan = plpy.prepare(
            "SELECT id, document_id, level, kind, is_table, section_path FROM scirag.chunks WHERE id = ANY($1)",
            ["bigint[]"],
        )
        GD["scirag_rerank_shapes"] = plan
    shapes = {r["id"]: dict(r) for r in plpy.execute(plan, [ids])} if ids else {}
    keep = [i for i, cid in enumerate(ids) if cid in shapes]
    if len(keep) != len(ids):
        ids = [ids[i] for i in keep]
        texts = [texts[i] for i in keep]
        if opts["fused_scores"] is not None:
            opts["fused_scores"] = (
                [opts["fused_scores"][i] for i in keep]
                if len(opts["fused_scores"]) == len(chunk_ids)
                else opts["fused_scores"]
            )

    def classify(q: str) -> str:
        return plpy.execute(plpy.prepare("SELECT scirag.classify_intent($1) AS i", ["text"]), [q])[0]["i"]

    def interrupt() -> None:
        # Any SPI call runs CHECK_FOR_INTERRUPTS: statement_timeout and cancel act here.
        plpy.execute("SELECT 1")

    return rerank(query, ids, texts, opts, shapes=shapes, classify=classify, cache=GD, interrupt=interrupt)
