"""The sentence selector: a second opinion on which of the offline answerer's best
sentences answers the question.

The answerer's sentence scorer (answer_forms.rank_sentences) is linear over word
overlap, position and context features; it cannot read. This model, the first two
layers of the embedder's base MiniLM trained here on QASPER train
(scripts/train_sentence_selector.py; its card is models/sentence_selector/MODEL_CARD.md),
reads each (question, sentence) pair of the scorer's top ``top`` sentences and gives a
logit that was fitted to correct the linear score: the pair's new score is the linear
score plus ``weight`` times that logit, and the top is reordered by it. ``top`` and
``weight`` (selector.json) were chosen on train papers the model never saw.

It scores pairs with the reranker's cross-encoder code (rerank.CrossEncoderReranker:
one thread, the base model's word table and tokenizer), one batch of ``top`` pairs of at
most ``max_length`` tokens. A missing or broken model leaves the linear order (the
answer's details say which), never fails the answer.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

MODEL_DIR = Path(__file__).with_name("models") / "sentence_selector"
MAX_QUESTION_CHARS = 4000  # the answerer's own bound on a question
MAX_SENTENCE_CHARS = 2000  # a longer "sentence" is a table or a run-on; it is cut to this
MAX_TOP = 16  # a selector.json asking to read more sentences is an unusable model

_CACHE: dict = {}


class SentenceSelector:
    def __init__(self, folder: Path = MODEL_DIR, *, scorer=None):
        cfg = json.loads((Path(folder) / "selector.json").read_text(encoding="utf-8"))
        self.top = int(cfg["top"])
        self.weight = float(cfg["weight"])
        self.max_length = int(cfg["max_length"])
        if not (1 <= self.top <= MAX_TOP and 0 <= self.weight <= 10 and 8 <= self.max_length <= 512):
            raise ValueError(f"selector.json: top {self.top}, weight {self.weight} or max_length out of bounds")
        if scorer is None:
            from .embedder import model_files
            from .rerank import CrossEncoderReranker, load_cross_encoder_files

            # trained on the base model's vocabulary: its tokenizer, not a copy
            session, tokenizer = load_cross_encoder_files(str(folder), tokenizer_file=model_files()[1])
            scorer = CrossEncoderReranker(
                session=session, tokenizer=tokenizer, batch_size=self.top, max_length=self.max_length
            )
        self.scorer = scorer  # anything with score(query, passages) -> probabilities

    def reorder(self, question: str, ranked: list[tuple], clean=str) -> list[tuple]:
        """``ranked`` (score, source n, sentence, source rank), best first, with its first
        ``top`` rows rescored (linear score + weight * the model's logit of ``clean(sentence)``)
        and reordered; the rows below keep their place and their score."""
        head = ranked[: self.top]
        if not head:
            return ranked
        probs = self.scorer.score(question[:MAX_QUESTION_CHARS], [clean(x[2])[:MAX_SENTENCE_CHARS] for x in head])
        if len(probs) != len(head):
            raise ValueError(f"the selector scored {len(probs)} of {len(head)} sentences")
        rescored = [(x[0] + self.weight * _logit(p), *x[1:]) for x, p in zip(head, probs)]
        rescored.sort(key=lambda x: -x[0])
        return rescored + list(ranked[self.top :])


def _logit(p: float) -> float:
    p = min(max(float(p), 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def load(folder: Path = MODEL_DIR) -> SentenceSelector | None:
    """The shipped selector, loaded once per process; None when it cannot be loaded."""
    key = str(folder)
    if key not in _CACHE:
        try:
            _CACHE[key] = SentenceSelector(folder)
        except Exception:  # a missing or broken model: the linear order stands
            _CACHE[key] = None
    return _CACHE[key]
