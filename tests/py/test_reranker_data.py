"""The reranker's training data (scripts/reranker_data.py, pure Python: no torch here;
the trainer itself runs in .venv-train and is not run by the tests) on a tiny
hand-written sample, the fixed held-out split, and the rerank protocol's pieces the
shipped model relies on: the "builtin" setting and a model folder's blend
(reranker.json)."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import random
import sys
import tarfile
from pathlib import Path

import pytest

from scirag_helpers import rerank as rr

ROOT = Path(__file__).resolve().parents[2]


def load_script(name: str):
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------------------
# The trainer's data assembly, on a tiny sample
# ---------------------------------------------------------------------------


def _ids_in(part_name, dataset, n, data):
    return [i for i in (str(x) for x in range(1000)) if data.part(dataset, i) == part_name][:n]


def _tiny_data(tmp: Path, data) -> dict:
    """A hand-written sample in the shared data's layout (nothing copied from it)."""
    train_q = _ids_in("train", "scifact", 2, data)
    held_q = _ids_in("heldout", "scifact", 1, data)
    sf = tmp / "scifact"
    (sf / "qrels").mkdir(parents=True)
    topics = ["aspirin platelet", "insulin glucose", "statin cholesterol", "vaccine antibody", "sleep memory"]
    docs = [
        {"_id": f"d{i}", "title": f"Study of {t}", "text": f"We measured {t} effects in {20 + i} patients."}
        for i, t in enumerate(topics)
    ]
    (sf / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = {train_q[0]: "aspirin lowers platelet activity", train_q[1]: "insulin controls glucose"}
    queries[held_q[0]] = "statin lowers cholesterol"
    (sf / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items()))
    (sf / "qrels" / "train.tsv").write_text(
        f"query-id\tcorpus-id\tscore\n{train_q[0]}\td0\t1\n{train_q[1]}\td1\t1\n{held_q[0]}\td2\t1\n"
    )
    st = tmp / "scitab"
    st.mkdir()
    tables = [
        {"table_id": f"t{i}", "paper": f"Paper {i}", "paper_id": f"p{i}", "caption": f"Table {i}: {w} results",
         "columns": ["Model", "F1"], "rows": [[f"[BOLD] {w}", f"0.{i}1"], ["base", "0.50"]]}
        for i, w in enumerate(["parsing", "tagging", "translation", "summarization", "retrieval"])
    ]  # fmt: skip
    (st / "tables.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tables))
    claim_ids = _ids_in("train", "scitab", 1, data) + _ids_in("heldout", "scitab", 1, data)
    claims = [
        {"id": claim_ids[0], "claim": "parsing F1 improves", "label": "supports", "table_id": "t0"},
        {"id": claim_ids[1], "claim": "tagging F1 improves", "label": "supports", "table_id": "t1"},
    ]
    (st / "claims_dev.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims))
    paper = "\n\n".join(
        ["# A Tiny Paper", "## Introduction", "We study tiny models for tagging.", "## Data",
         "We use the Penn Treebank for all experiments reported here.", "Sentences longer than 40 words are dropped.",
         "## Results", "The tagger reaches 97.1 accuracy.", "Errors concentrate on rare words."]
    )  # fmt: skip
    questions = [
        {"paper_id": "tiny", "question_id": "q1", "question": "Which dataset do they use?",
         "answers": [{"unanswerable": False, "evidence": ["We use the Penn Treebank for all experiments reported here."]}]},
        {"paper_id": "tiny", "question_id": "q2", "question": "What is in Figure 2?",
         "answers": [{"unanswerable": True, "evidence": []}]},
    ]  # fmt: skip
    (tmp / "qasper").mkdir()
    with tarfile.open(tmp / "qasper" / "train.tar.gz", "w:gz") as tar:
        for name, body in (("train/papers/tiny.txt", paper), ("train/questions.json", json.dumps(questions))):
            raw = body.encode()
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    return {"train_q": train_q, "held_q": held_q, "claims": claims}


def test_training_data_assembly_on_a_tiny_sample(tmp_path):
    data = load_script("reranker_data")
    tiny = _tiny_data(tmp_path, data)
    groups = data.assemble(tmp_path, seed=13, negatives=2)
    by = {}
    for q, pos, negs, src in groups:
        by.setdefault(src, []).append((q, pos, negs))
    # SciFact: the training claims with their cited abstract formatted as the loader stores a chunk;
    # the held-out claim never appears; negatives never include the cited abstract
    assert sorted(q for q, _, _ in by["scifact"]) == ["aspirin lowers platelet activity", "insulin controls glucose"]
    for q, pos, negs in by["scifact"]:
        want = "Study of aspirin platelet" if "aspirin" in q else "Study of insulin glucose"
        assert pos.startswith(want + "\n\n") and len(negs) == 2 and all(not n.startswith(want) for n in negs)
    # SciTab: only the training claim, its own table as positive, in the benchmark's table text
    assert [q for q, _, _ in by["scitab"]] == ["parsing F1 improves"]
    pos = by["scitab"][0][1]
    assert pos.startswith("Paper 0\n\nTable 0: parsing results\n\nModel | F1\nparsing | 0.01")
    assert "Paper 0" not in "".join(by["scitab"][0][2])
    # QASPER: the answerable question, the window that opens with its evidence, same-paper negatives
    assert [q for q, _, _ in by["qasper"]] == ["Which dataset do they use?"]
    q, pos, negs = by["qasper"][0]
    assert pos.startswith("A Tiny Paper\nData\n\nWe use the Penn Treebank")
    assert all(n.startswith("A Tiny Paper\n") and "Penn Treebank" not in n for n in negs)
    # seeded: the same seed gives the same list, another seed another order or sample
    assert data.assemble(tmp_path, seed=13, negatives=2) == groups
    assert any(data.assemble(tmp_path, seed=s, negatives=2) != groups for s in (1, 2, 3))
    assert tiny["held_q"] and all(q != "statin lowers cholesterol" for q, _, _, _ in groups)


def test_trainer_table_text_is_the_benchmarks():
    from scirag.evaluation.scitab import table_text

    data = load_script("reranker_data")
    t = {"caption": "Table 2: scores", "columns": ["[BOLD] A", "B"], "rows": [["[ITALIC] x", 1], ["y", "2"]]}
    assert data.table_text(t) == table_text(t)


def test_held_out_split_is_fixed_by_id():
    data = load_script("reranker_data")
    parts = [data.part("scifact", str(i)) for i in range(2000)]
    share = parts.count("heldout") / len(parts)
    assert 0.25 < share < 0.35 and parts == [data.part("scifact", str(i)) for i in range(2000)]
    # the bucket is a hash of dataset and id, not of a random state
    random.seed(1)
    first = data.bucket("scitab", "abc")
    random.seed(2)
    assert data.bucket("scitab", "abc") == first == int(hashlib.sha256(b"scitab:abc").hexdigest(), 16) % 10


# ---------------------------------------------------------------------------
# The protocol pieces: the builtin setting, a folder's blend
# ---------------------------------------------------------------------------


def test_builtin_setting_names_the_shipped_folder():
    assert rr.resolve_model_path("builtin") == str(rr.BUILTIN_MODEL_DIR)
    assert rr.BUILTIN_MODEL_DIR == ROOT / "python" / "plpy_helpers" / "scirag_helpers" / "models" / "reranker"
    assert rr.resolve_model_path("/srv/models/bge") == "/srv/models/bge"
    assert rr.resolve_model_path("") is None and rr.resolve_model_path(None) is None


def test_a_folders_blend_weight_and_trained_length(tmp_path):
    assert rr.read_model_config(str(tmp_path)) == (0.0, None, None, 1, None)  # no reranker.json: the model alone
    (tmp_path / "reranker.json").write_text('{"fused_weight": 0.25}')
    assert rr.read_model_config(str(tmp_path)) == (0.25, None, None, 1, None)
    (tmp_path / "reranker.json").write_text('{"fused_weight": 0.25, "max_length": 64}')
    assert rr.read_model_config(str(tmp_path / "model.onnx")) == (0.25, 64, None, 1, None)  # the .onnx path: beside it
    (tmp_path / "reranker.json").write_text('{"fused_weight": 0.9, "fused_weight_one_document": 0.5, "paragraphs": 6}')
    cfg = rr.read_model_config(str(tmp_path))
    assert (cfg.fused_weight, cfg.fused_weight_one_document, cfg.paragraphs) == (0.9, 0.5, 6)
    (tmp_path / "reranker.json").write_text('{"max_length": 64, "max_length_one_document": 32}')
    assert rr.read_model_config(str(tmp_path)).max_length_one_document == 32
    for bad in (
        '{"fused_weight": 2}',
        '{"fused_weight": "x"}',
        '{"fused_weight_one_document": -0.1}',
        '{"fused_weight_one_document": "half"}',
        '{"max_length": 4}',
        '{"max_length": 64.5}',
        '{"max_length": true}',
        '{"max_length": 100000}',
        '{"paragraphs": 0}',
        '{"paragraphs": 2.5}',
        '{"paragraphs": 1000}',
        '{"max_length_one_document": 4}',
        '{"max_length_one_document": 32.5}',
        '{"max_length_one_document": true}',
        '{"max_length": 64, "max_length_one_document": 96}',  # longer than the model was trained at
        "not json",
    ):
        (tmp_path / "reranker.json").write_text(bad)
        with pytest.raises(rr.RerankFailure, match="model_unavailable"):
            rr.read_model_config(str(tmp_path))


class _Scorer:
    name = "cross_encoder"

    def __init__(self, scores, fused_weight):
        self.scores, self.fused_weight = scores, fused_weight

    def score(self, query, passages):
        return self.scores[: len(passages)]


def test_blend_mixes_model_and_fused_scores():
    opts = {"reranker": "cross_encoder", "entity_boost": 0, "fused_scores": [10.0, 5.0, 0.0]}
    alone = rr.rerank("q", [1, 2, 3], ["a", "b", "c"], opts, cross_encoder=_Scorer([0.1, 0.5, 0.9], 0.0))
    assert [r[0] for r in alone] == [3, 2, 1]
    half = rr.rerank("q", [1, 2, 3], ["a", "b", "c"], opts, cross_encoder=_Scorer([0.1, 0.5, 0.9], 0.5))
    # (1 - w) * model + w * min-max fused: 0.55, 0.5, 0.45
    assert [r[0] for r in half] == [1, 2, 3] and [round(r[1], 6) for r in half] == [0.55, 0.5, 0.45]
    assert {r[2] for r in half} == {"ok"}


def test_one_documents_pool_takes_its_own_blend():
    opts = {"reranker": "cross_encoder", "entity_boost": 0, "fused_scores": [10.0, 5.0, 0.0]}
    model = _Scorer([0.1, 0.5, 0.9], 0.9)
    model.fused_weight_one_document = 0.1
    one = {1: {"document_id": 7}, 2: {"document_id": 7}, 3: {"document_id": 7}}
    many = {1: {"document_id": 7}, 2: {"document_id": 8}, 3: {"document_id": 7}}
    # one paper: 0.9 * model + 0.1 * fused = 0.19, 0.5, 0.81 -> the model's order
    got = rr.rerank("q", [1, 2, 3], ["a", "b", "c"], opts, shapes=one, cross_encoder=model)
    assert [r[0] for r in got] == [3, 2, 1]
    # several papers, or documents unknown: the library blend (0.1 * model + 0.9 * fused)
    for shapes in (many, None, {1: {"document_id": 7}}):
        got = rr.rerank("q", [1, 2, 3], ["a", "b", "c"], opts, shapes=shapes, cross_encoder=model)
        assert [r[0] for r in got] == [1, 2, 3]


def test_a_chunk_is_scored_at_its_paragraph_openings():
    chunk = "Title\nResults\n\nFirst paragraph.\n\nSecond paragraph.\n\nThird paragraph."
    assert rr.paragraph_openings(chunk, 2) == [
        "Title\nResults\n\nFirst paragraph.",
        "Title\nResults\n\nSecond paragraph.",
    ]
    assert rr.paragraph_openings(chunk, 1) == [chunk]
    for whole in ("Title\nMethods\n\nOne paragraph only.", "no heading lines at all", "Title\n\n\n\n"):
        assert rr.paragraph_openings(whole, 8) == [whole]

    class Pairs(rr.CrossEncoderReranker):
        def __init__(self, paragraphs):  # no model: the pairs are scored by a rule
            self.paragraphs, self.seen = paragraphs, []

        def _score_pairs(self, query, passages):
            self.seen.append(list(passages))
            # a pair holds the first few dozen words: only an opening "Second" is seen
            return [0.9 if p.partition("\n\n")[2].startswith("Second") else 0.2 for p in passages]

    other = "Title\nMethods\n\nOne paragraph only."
    model = Pairs(8)
    assert model.score("q", [chunk, other]) == [0.9, 0.2]  # the chunk takes its best opening
    assert model.seen == [rr.paragraph_openings(chunk, 8) + [other]]
    head_only = Pairs(1)
    assert head_only.score("q", [chunk, other]) == [0.2, 0.2] and head_only.seen == [[chunk, other]]

    # the rerank option paragraphs scores fewer openings, never more than the folder says,
    # and leaves the (cached) model as it was
    def at_most(paragraphs):
        opts = {"reranker": "cross_encoder", "entity_boost": 0, "paragraphs": paragraphs}
        return rr.rerank("q", [1, 2], [chunk, other], opts, cross_encoder=model)

    two = at_most(2)
    assert [r[0] for r in two] == [1, 2] and model.paragraphs == 8
    assert model.seen[-1] == rr.paragraph_openings(chunk, 2) + [other]
    one = at_most(1)
    assert model.seen[-1] == [chunk, other] and {r[1] for r in one} == {0.2}
    assert head_only.at_most(8).paragraphs == 1 and model.at_most(3).paragraphs == 3
    for bad in (0, 9, True, "2", 2.5):
        with pytest.raises(rr.OptionsError, match="paragraphs"):
            rr.parse_options({"paragraphs": bad})


def test_a_pool_from_one_document_is_scored_without_the_title_its_chunks_share():
    chunk = "A Paper\nResults\n\nFirst paragraph.\n\nSecond paragraph."
    lone = "A Paper\n\nA paragraph under no heading."
    other = "A Paper\nMethods\n\nOne paragraph only."
    assert rr.shared_first_line([chunk, lone, other]) == "A Paper"
    # nothing is shared by one passage, by passages with different first lines, or when
    # a passage has no head lines at all
    for pool in ([chunk], [chunk, "Another Paper\nResults\n\nText."], [chunk, "no heading lines"], []):
        assert rr.shared_first_line(pool) is None
    assert rr.paragraph_openings(chunk, 2, drop="A Paper") == [
        "Results\n\nFirst paragraph.",
        "Results\n\nSecond paragraph.",
    ]
    assert rr.paragraph_openings(lone, 2, drop="A Paper") == ["A paragraph under no heading."]
    assert rr.paragraph_openings(chunk, 1, drop="A Paper") == ["Results\n\nFirst paragraph.\n\nSecond paragraph."]
    assert rr.paragraph_openings(chunk, 2, drop="Other") == rr.paragraph_openings(chunk, 2)  # only that line

    class Pairs(rr.CrossEncoderReranker):
        def __init__(self):  # no model: records what each call would feed it
            self.paragraphs, self.seen, self.drop = 2, [], None
            self.max_length, self.max_length_one_document = 64, 32
            self.tokenizer, self.tokenizer_one_document = "64-token pairs", "32-token pairs"

        def _score_pairs(self, query, passages):
            self.seen.append((self.tokenizer, self.max_length, list(passages)))
            return [0.5] * len(passages)

    model = Pairs()
    opts = {"reranker": "cross_encoder", "entity_boost": 0}
    one = {1: {"document_id": 7}, 2: {"document_id": 7}}
    rr.rerank("q", [1, 2], [chunk, lone], opts, shapes=one, cross_encoder=model)
    assert model.seen[-1] == (
        "32-token pairs",
        32,
        ["Results\n\nFirst paragraph.", "Results\n\nSecond paragraph.", "A paragraph under no heading."],
    )
    # a library's pool keeps the title and the model's own length; the cached model is unchanged
    rr.rerank(
        "q", [1, 2], [chunk, lone], opts, shapes={1: {"document_id": 7}, 2: {"document_id": 8}}, cross_encoder=model
    )
    assert model.seen[-1] == ("64-token pairs", 64, rr.paragraph_openings(chunk, 2) + [lone])
    assert (model.drop, model.max_length, model.tokenizer) == (None, 64, "64-token pairs")


# ---------------------------------------------------------------------------
# The blend's choice and where it is written (scripts/tune_reranker_blend.py)
# ---------------------------------------------------------------------------


def test_blend_choice_takes_the_best_mean_and_breaks_ties_towards_the_fused_order():
    tune = load_script("tune_reranker_blend")
    result = {
        "scifact_tuning_ndcg@10": {"0.5": 0.735, "0.6": 0.7361, "0.7": 0.7306, "1.0": 0.72},
        "scitab_tuning_hit@5": {"0.5": 0.8333, "0.6": 0.85, "0.7": 0.825, "1.0": 0.825},
    }
    assert tune.choose(result) == 0.6
    # equal means: the larger weight, nearer the fused order the stage falls back to
    tied = {"scifact_tuning_ndcg@10": {"0.4": 0.70, "0.8": 0.72}, "scitab_tuning_hit@5": {"0.4": 0.86, "0.8": 0.84}}
    assert tune.choose(tied) == 0.8
    # only weights scored on both sets count
    assert tune.choose({"scifact_tuning_ndcg@10": {"0.2": 0.9, "0.3": 0.5}, "scitab_tuning_hit@5": {"0.3": 0.5}}) == 0.3
    with pytest.raises(ValueError, match="both tuning sets"):
        tune.choose({"scifact_tuning_ndcg@10": {"0.2": 0.9}, "scitab_tuning_hit@5": {"0.3": 0.5}})


def test_the_tuner_leaves_out_the_questions_the_model_was_trained_on(tmp_path):
    tune = load_script("tune_reranker_blend")
    rd = load_script("reranker_data")
    defaults = (rd.SEED, rd.NEGATIVES, rd.QASPER_GROUPS)
    assert tune.trainer_settings(tmp_path) == defaults  # the committed folder: no log, the trainer's defaults
    log = [{"event": "start", "args": {"seed": "5", "negatives": "2", "qasper_groups": "1700"}}, {"event": "loss"}]
    (tmp_path / "train_log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in log))
    assert tune.trainer_settings(tmp_path) == (5, 2, 1700)  # a trainer's --out folder: what it ran with


def test_written_blend_keeps_the_pair_length_and_the_stage_reads_both(tmp_path):
    tune = load_script("tune_reranker_blend")
    (tmp_path / "reranker.json").write_text('{"max_length": 64}\n')
    assert tune.write_blend(tmp_path, 0.6) == {"max_length": 64, "fused_weight": 0.6}
    assert rr.read_model_config(str(tmp_path))[:2] == (0.6, 64)
    (tmp_path / "reranker.json").write_text("[64]\n")
    with pytest.raises(ValueError, match="expected a JSON object"):
        tune.write_blend(tmp_path, 0.6)


def test_the_one_document_length_is_the_shortest_that_ranks_as_well_as_the_models_own():
    tune = load_script("tune_reranker_length")
    assert tune.choose_length({24: 0.853, 32: 0.870, 40: 0.866, 64: 0.862}, 64) == 32
    assert tune.choose_length({24: 0.853, 32: 0.861, 40: 0.859, 64: 0.862}, 64) == 64  # every cut loses
    assert tune.choose_length({24: 0.862, 64: 0.862}, 64) == 24  # a tie is no loss


def test_the_openings_to_compare_must_be_whole_numbers_of_at_least_one():
    tune = load_script("tune_reranker_length")
    with pytest.raises(SystemExit, match=r"--openings '4,six': give whole numbers"):
        tune.main(["some-folder", "--openings", "4,six"])
    with pytest.raises(SystemExit, match=r"--openings '0,4': each must be at least 1"):
        tune.main(["some-folder", "--openings", "0,4"])
