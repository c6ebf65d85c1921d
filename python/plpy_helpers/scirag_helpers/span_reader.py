"""The span reader: which words of the sentence the offline answerer chose answer the
question, so the short answer is those words and the sentence stays their cited support.

The first two layers of the embedder's base MiniLM, trained here on QASPER train (scripts/train_span_reader.py; its card
is models/span_reader/MODEL_CARD.md) gives each token of a (question, sentence) pair a
start and an end logit; [CLS] is "no span". The best span is cut only when its score
beats "no span" by the margin in span_reader.json, chosen on train papers the model never
saw: a whole sentence is the safer answer when the reader is unsure. One pair, one
thread, at most ``max_length`` tokens: a few milliseconds. A missing or broken model
leaves the sentence whole (the answer says which in its details), never fails the answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

MODEL_DIR = Path(__file__).with_name("models") / "span_reader"
MAX_QUESTION_CHARS = 4000  # the answerer's own bound on a question
MAX_SENTENCE_CHARS = 2000  # a longer "sentence" is a table or a run-on; it is cut to this

_CACHE: dict = {}


class Span(NamedTuple):
    text: str  # the words of the sentence, as written there
    start: int  # character offsets in the sentence
    end: int
    margin: float  # span score minus "no span" score (logits)


class SpanReader:
    def __init__(self, folder: Path = MODEL_DIR, *, session=None, tokenizer=None, word_vectors=None):
        cfg = json.loads((Path(folder) / "span_reader.json").read_text(encoding="utf-8"))
        self.max_length = int(cfg["max_length"])
        self.max_span = int(cfg["max_span"])
        self.margin = float(cfg.get("margin", 0.0))
        # the question types it cuts for (answer_forms.QTYPES), chosen with the margin
        self.types = frozenset(cfg.get("types") or ())
        if session is None or tokenizer is None:
            from .embedder import model_files
            from .rerank import load_cross_encoder_files

            # trained on the base model's vocabulary: its tokenizer, not a copy
            session, tokenizer = load_cross_encoder_files(str(folder), tokenizer_file=model_files()[1])
        self.session = session
        self.tokenizer = tokenizer.__class__.from_str(tokenizer.to_str())
        self.tokenizer.no_padding()
        # longest first: the sentence is cut as in training (the question is the shorter
        # side), and an overlong question is cut too instead of failing the pair
        self.tokenizer.enable_truncation(max_length=self.max_length, strategy="longest_first")
        if word_vectors is None:
            from .embedder import base_word_vectors

            word_vectors = base_word_vectors()
        self.word_vectors = word_vectors

    def read(self, question: str, sentence: str) -> Span | None:
        """The best span of ``sentence`` and its margin over "no span" (negative when "no
        span" scores higher), whatever the cutting margin; None for a sentence without
        words."""
        import numpy as np

        question, sentence = question[:MAX_QUESTION_CHARS], sentence[:MAX_SENTENCE_CHARS]
        if not sentence.strip():
            return None
        enc = self.tokenizer.encode(question, sentence)
        ids = np.asarray([enc.ids], dtype=np.int64)
        feeds = {
            "inputs_embeds": np.asarray(self.word_vectors[ids], dtype=np.float32),
            "attention_mask": np.asarray([enc.attention_mask], dtype=np.int64),
            "token_type_ids": np.asarray([enc.type_ids], dtype=np.int64),
        }
        starts, ends = (np.asarray(x[0], dtype=np.float64) for x in self.session.run(None, feeds))
        return self._best(sentence, enc, starts, ends)

    def _best(self, sentence: str, enc, starts, ends) -> Span | None:
        import numpy as np

        ctx = [k for k, sid in enumerate(enc.sequence_ids) if sid == 1]
        if not ctx:
            return None
        null = starts[0] + ends[0]
        best, at = -np.inf, None
        # Linear in the sentence: each start looks at most max_span ends ahead.
        for a_i, a in enumerate(ctx):
            window = ctx[a_i : a_i + self.max_span]
            e = ends[window]
            j = int(np.argmax(e))
            if starts[a] + e[j] > best:
                best, at = starts[a] + e[j], (a, window[j])
        lo, hi = enc.offsets[at[0]][0], enc.offsets[at[1]][1]
        # whole words: a span never starts or ends inside one
        while lo > 0 and sentence[lo - 1].isalnum():
            lo -= 1
        while hi < len(sentence) and sentence[hi].isalnum():
            hi += 1
        return Span(sentence[lo:hi], lo, hi, float(best - null))


def load(folder: Path = MODEL_DIR) -> SpanReader | None:
    """The shipped reader, loaded once per process; None when it cannot be loaded."""
    key = str(folder)
    if key not in _CACHE:
        try:
            _CACHE[key] = SpanReader(folder)
        except Exception:  # a missing or broken model: answers keep whole sentences
            _CACHE[key] = None
    return _CACHE[key]
