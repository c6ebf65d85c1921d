"""The sentence selector: which sentence of the evidence answers the question.

A cross-encoder (the MiniLM-L6 encoder with one logit on [CLS]) fine-tuned here on
QASPER's train split by ``scripts/train_answer_sentence.py`` and shipped as int8 ONNX
in ``models/answer_sentence/`` (``MODEL_CARD.md`` says what it was trained on and how
well it does). It reads ``[CLS] question [SEP] sentence [SEP]`` and scores how likely
the sentence answers the question; lexical features cannot tell an answering sentence
from one that merely repeats the question's words, a reader of both can.

The answerer hands it at most ``MAX_SENTENCES`` sentences (its lexical ranking's best
ones) and gets one logit per sentence from one model call, on one thread. Inputs are
bounded: each pair is cut to the model's length (``max_len`` of training.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

MODEL_DIR = Path(__file__).with_name("models") / "answer_sentence"
MAX_SENTENCES = 32  # sentences scored per question (one batch)


class SentenceSelector:
    """Loads the ONNX model and its tokenizer once (kept in GD by the caller)."""

    def __init__(self, model_dir: Path | None = None, threads: int = 1):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_dir = model_dir or MODEL_DIR
        meta = json.loads((model_dir / "training.json").read_text())
        self.max_len = int(meta["max_len"])
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_len, strategy="longest_first")
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads  # inside a backend: one thread, no arena
        opts.inter_op_num_threads = 1
        opts.enable_cpu_mem_arena = False
        self.session = ort.InferenceSession(str(model_dir / "model.onnx"), opts, providers=["CPUExecutionProvider"])

    @staticmethod
    def available(model_dir: Path | None = None) -> bool:
        model_dir = model_dir or MODEL_DIR
        return all((model_dir / f).is_file() for f in ("model.onnx", "tokenizer.json", "training.json"))

    def scores(self, question: str, sentences: list[str]) -> list[float]:
        """One logit per sentence (higher: more likely to answer), in the order given;
        only the first ``MAX_SENTENCES`` are scored."""
        sentences = sentences[:MAX_SENTENCES]
        if not sentences:
            return []
        enc = self.tokenizer.encode_batch([(question, s) for s in sentences])
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        types = np.array([e.type_ids for e in enc], dtype=np.int64)
        logits = self.session.run(["logits"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        return [round(float(x), 4) for x in logits]
