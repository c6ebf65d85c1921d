"""Active-learning screening (issue 24): the metrics on hand-worked orders, the
screener against random order on a made-up set whose relevant records share words,
bad input, and `scirag eval screening --json` writing the eval tables."""

from __future__ import annotations

import gzip
import json
import math
import os
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest

from scirag import screening

ROOT = Path(__file__).resolve().parents[2]
SCIRAG = ROOT / ".venv" / "bin" / "scirag"


@pytest.fixture
def run_cli(dsn):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env["SCIRAG_DSN"] = dsn
    env["COLUMNS"] = "400"

    def _run(*args, timeout=300):
        return subprocess.run([str(SCIRAG), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)

    return _run


RELEVANT = "straw ash slagging deposits boiler combustion potassium chlorine fouling biomass".split()
OTHER = (
    "cardiac trial placebo dose patients hypertension blood pressure kidney liver enzyme gene protein "
    "mouse model tumour growth therapy cohort survey school children diet exercise sleep"
).split()
FILLER = "the of and in a study results we show method data analysis effect".split()


def make_set(n: int = 300, n_rel: int = 15, seed: int = 1) -> list[dict]:
    """Records: relevant ones draw half their words from RELEVANT, the rest from OTHER."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        rel = i % (n // n_rel) == 0 and sum(r["label_included"] for r in rows) < n_rel
        topic = RELEVANT if rel else OTHER
        words = [
            rng.choice(topic) if rng.random() < (0.5 if rel else 0.6) else rng.choice(FILLER + OTHER) for _ in range(40)
        ]
        rows.append(
            {
                "record_id": str(i),
                "title": " ".join(words[:8]),
                "abstract": " ".join(words[8:]),
                "label_included": int(rel),
            }
        )
    return rows


def write_csv(path, rows, header=("record_id", "title", "abstract", "label_included"), gz=True):
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    for r in rows:
        w.writerow([r.get(h, "") for h in header])
    data = buf.getvalue().encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def test_metrics_hand_worked():
    labels = np.array([1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])  # 20 records, 3 included
    order = [0, 1, 3, 2, 19, 4, 5]  # priors 0 (inc) and 1 (exc); inclusions found at positions 1, 3, 5
    m = screening.metrics(order, labels)
    # 95 % of 3 rounded up is 3: found after 5 screened; (20 - 5) / 20 - 0.05
    assert m["wss95"] == pytest.approx(0.70)
    assert m["records_to_all"] == 5 and m["records_to_95"] == 5
    assert m["recall_at_10pct"] == pytest.approx(1 / 3)  # 2 records screened
    assert m["recall_at_20pct"] == pytest.approx(2 / 3)  # 4 records screened
    # planted error: the last inclusion found later costs work saved
    late = screening.metrics([0, 1, 3, 2, 4, 5, 6, 19], labels)
    assert late["wss95"] == pytest.approx((20 - 8) / 20 - 0.05) and late["wss95"] < m["wss95"]


def test_stopping_rule_fires_after_a_run_of_irrelevant_records():
    labels = np.zeros(1200, dtype=np.int8)
    labels[[0, 5, 900]] = 1
    order = list(range(1200))
    m = screening.metrics(order, labels)
    assert screening.stop_after(1200) == 60
    assert m["stop_at"] == 5 + 60 + 1  # positions are 1-based: 60 irrelevant after the inclusion at 6
    assert m["recall_at_stop"] == pytest.approx(2 / 3)


def test_screener_beats_random_order(tmp_path):
    data = screening.load_dataset(write_csv(tmp_path / "synthetic.csv.gz", make_set()))
    X = screening.features(data.texts)
    learned, random_ = [], []
    for seed in range(3):
        prior = screening.priors(data.labels, seed)
        assert data.labels[prior[0]] == 1 and data.labels[prior[1]] == 0
        order = screening.simulate(X, data.labels, prior)
        assert len(order) == len(set(order)) and order[:2] == prior
        learned.append(screening.metrics(order, data.labels)["wss95"])
        rest = [i for i in range(len(data.labels)) if i not in prior]
        random.Random(seed).shuffle(rest)
        random_.append(screening.metrics(prior + rest, data.labels)["wss95"])
    assert np.mean(learned) > 0.75, learned
    assert np.mean(learned) > np.mean(random_) + 0.5


def test_screener_retrains_as_decisions_arrive(tmp_path):
    data = screening.load_dataset(write_csv(tmp_path / "s.csv.gz", make_set()))
    X = screening.features(data.texts)
    prior = screening.priors(data.labels, 0)
    labeled = {i: int(data.labels[i]) for i in prior}
    first, _ = screening.next_records(screening.Model(), X, labeled, 5)
    for i in first:
        labeled[i] = int(data.labels[i])
    second, _ = screening.next_records(screening.Model(), X, labeled, 5)
    assert not set(first) & set(second), "records already decided are never shown again"
    assert screening.retrain_every(10, "taper") == 1 and screening.retrain_every(2000, "taper") == 10
    assert screening.retrain_every(2000, "every") == 1


@pytest.mark.parametrize("retrain", ["every", "taper", None])
def test_simulation_retrains_at_the_chosen_cadence(tmp_path, monkeypatch, retrain):
    """retrain="every" (the default: None): one fit per decision (600 records to the end
    from 2 priors: 598 fits, as ASReview does); "taper" fits once per 0.5 % growth after
    400 decisions, so fewer fits than decisions."""
    n = 600
    data = screening.load_dataset(write_csv(tmp_path / "c.csv.gz", make_set(n, 15)))
    X = screening.features(data.texts)
    calls = []
    real = screening.Model.scores
    monkeypatch.setattr(screening.Model, "scores", lambda self, *a: calls.append(len(a[1])) or real(self, *a))
    model = screening.Model(retrain=retrain) if retrain else screening.Model()
    order = screening.simulate(X, data.labels, screening.priors(data.labels, 0), model, True)
    assert sorted(order) == list(range(n))
    if retrain != "taper":
        assert len(calls) == n - 2 and calls == list(range(2, n))  # trained on 2, 3, ... decisions
    else:
        # every decision up to 400, then one fit per two decisions (400 // 200): 398 + 100
        assert calls[:398] == list(range(2, 400)) and len(calls) == 498 and calls[398:400] == [400, 402]
    with pytest.raises(ValueError, match="retrain 'sometimes': choose every or taper"):
        screening.Model(retrain="sometimes")


def test_compact_view_keeps_every_dot_product_and_the_scores():
    """The linear models fit on compact(X): the columns only one record has are merged
    into one column per record, so X X^T is unchanged (planted error: dropping those
    columns instead changes it) and the SVM's scores are the same as on X itself."""
    from sklearn.svm import LinearSVC

    rows = make_set(200, 10)
    X = screening.features([f"{r['title']} {r['abstract']} unique{i}x extra{i}y" for i, r in enumerate(rows)])
    V = screening.compact(X)
    assert V.shape[0] == X.shape[0] and V.shape[1] < X.shape[1]
    assert np.allclose((V @ V.T).toarray(), (X @ X.T).toarray(), atol=1e-6)
    once = np.diff(X.tocsc().indptr) == 1
    dropped = X[:, np.flatnonzero(~once)]
    assert not np.allclose((dropped @ dropped.T).toarray(), (X @ X.T).toarray(), atol=1e-6)
    y = np.array([r["label_included"] for r in rows], dtype=np.int8)
    train, pool = np.arange(0, 200, 2), np.arange(1, 200, 2)
    w = screening.Model.weights(y[train], 9.8)
    # liblinear shuffles with a seed drawn from numpy's global generator (the SVM has no
    # random_state), which the tests run before this one leave anywhere: the same draw for
    # both fits, or they differ by more than the tolerance (seen: 0.0025 in CI)
    np.random.seed(0)
    on_x = LinearSVC(C=0.11).fit(X[train], y[train], sample_weight=w).decision_function(X[pool])
    np.random.seed(0)
    assert np.allclose(screening.Model().scores(X, train, y[train], pool), (on_x - on_x.mean()) / on_x.std(), atol=1e-4)


@pytest.mark.parametrize(
    "rows, header, message",
    [
        ([{"title": "a", "abstract": "b", "label_included": 2}], None, "label_included '2' is not 0 or 1"),
        ([{"title": "a", "label_included": 1}], ("record_id", "title", "label_included"), "missing column(s) abstract"),
        ([{"title": "a", "abstract": "b", "label_included": 1}], None, "needs at least 2 included and 2 excluded"),
    ],
)
def test_bad_dataset_is_one_clear_error(tmp_path, rows, header, message):
    path = write_csv(
        tmp_path / "bad.csv", rows, header or ("record_id", "title", "abstract", "label_included"), gz=False
    )
    with pytest.raises(ValueError) as err:
        screening.load_dataset(path)
    assert message in str(err.value)


def test_eval_screening_json_and_eval_tables(tmp_path, run_cli, admin_conn):
    path = write_csv(tmp_path / "syn_set.csv.gz", make_set(200, 10))
    proc = run_cli("eval", "screening", str(path), "--seeds", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) >= {"wss95", "recall_at_10pct", "recall_at_20pct", "per_seed", "run_id"}
    assert len(out["per_seed"]) == 2
    assert out["wss95"] == pytest.approx(np.mean([r["wss95"] for r in out["per_seed"]]))
    assert 0 <= out["recall_at_10pct"] <= out["recall_at_20pct"] <= 1
    run = admin_conn.execute(
        "SELECT kind, dataset, n_questions, metrics FROM scirag.eval_runs WHERE id = %s", (out["run_id"],)
    ).fetchone()
    assert run[:3] == ("screening", "syn_set", 2)
    assert run[3]["wss95"] == pytest.approx(out["wss95"])
    per_seed = admin_conn.execute(
        "SELECT question_id, metrics FROM scirag.eval_results WHERE run_id = %s ORDER BY 1", (out["run_id"],)
    ).fetchall()
    assert [q for q, _ in per_seed] == ["seed-0", "seed-1"]
    assert per_seed[0][1]["wss95"] == pytest.approx(out["per_seed"][0]["wss95"])
    table = run_cli("eval", "screening", str(path), "--seeds", "1", "--no-store")
    assert table.returncode == 0 and "wss95" in table.stdout
    bad = run_cli("eval", "screening", str(tmp_path / "missing.csv"))
    assert bad.returncode != 0 and "no such file" in bad.stderr
    assert math.isfinite(out["records_to_all"])


def test_features_of_a_tiny_or_wordless_campaign_do_not_fail():
    """Five records sharing every word (TF-IDF's max_df 0.95 would prune them all) and
    records with no word at all still get a feature matrix: the screening order of a
    small campaign must not fail."""
    same = ["straw ash paper"] * 5
    X = screening.features(same)
    assert X.shape[0] == 5 and X.shape[1] >= 1 and X.nnz > 0
    assert screening.features(["", "!", "?"]).shape[0] == 3
    picks, _ = screening.next_records(screening.Model(), screening.features(same), {0: 1, 1: 0}, 2)
    assert len(picks) == 2


def test_leave_one_set_out_choice_never_looks_at_the_held_out_set():
    """scripts/tune_screening.py picks the candidate for each held-out set on the other
    sets only: a candidate that is best on the held-out set but worse elsewhere is not
    picked for it."""
    tune = load_tune()
    table = {"A": {"svm": 0.5, "svm+lr": 0.6}, "B": {"svm": 0.5, "svm+lr": 0.6}, "C": {"svm": 0.9, "svm+lr": 0.1}}
    rows, overall = tune.lodo(table, ["svm", "svm+lr"])
    assert {r["held_out"]: (r["candidate"], r["wss95"]) for r in rows} == {
        "A": ("svm", 0.5),
        "B": ("svm", 0.5),
        "C": ("svm+lr", 0.1),
    }
    assert overall == "svm"
    tie = {"A": {"svm": 0.5, "svm+lr": 0.5}, "B": {"svm": 0.4, "svm+lr": 0.4}}
    assert tune.lodo(tie, ["svm", "svm+lr"])[1] == "svm"  # a tie goes to the earlier (simpler) candidate
    assert tune.lodo(tie, ["svm+lr", "svm"])[1] == "svm+lr"
    # every candidate is a real setting of the screener
    for name, (settings, minilm, *title) in tune.CANDIDATES.items():
        assert screening.Model(**settings).name.startswith("tfidf12-svm") and 0 <= minilm <= 4, name
        assert title in ([], [True]), name
    # a candidate naming the default shares the runs (the cache) of the explicit one it equals
    default = screening.Model().retrain
    assert tune.key("svm") == tune.key(f"svm-{default}") == f"tfidf12-svm-{default}"
    assert len({tune.key(c) for c in tune.CANDIDATES}) == len(tune.CANDIDATES) - 1


def load_tune():
    import importlib.util

    spec = importlib.util.spec_from_file_location("tune_screening", ROOT / "scripts" / "tune_screening.py")
    tune = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tune)
    return tune


def test_double_balance_repeats_the_few_inclusions_and_keeps_the_size():
    """ASReview's double balance: the training set keeps its size, every inclusion is
    in it (repeated), and their share is the one its formula gives; the same seed
    draws the same set."""
    y = np.zeros(200, dtype=np.int8)
    y[[3, 50, 120]] = 1
    rows = screening.double_balance(y, np.random.default_rng(0))
    assert len(rows) == 200 and set(np.flatnonzero(y == 1)) <= set(rows.tolist())
    w1 = 2.155 * (3 / 197) ** -0.94
    w0 = 1 - (1 - 0.789) * (1 + math.log(200)) ** -1.0
    share = w1 * 3 * 200 / (w1 * 3 + w0 * 197)
    assert math.floor(share) <= int(y[rows].sum()) <= math.ceil(share)
    assert 60 < y[rows].sum() < 200 - 2  # far more than 3: the inclusions are repeated
    assert np.array_equal(rows, screening.double_balance(y, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="choose weights or double"):
        screening.Model(balance="triple")


@pytest.mark.parametrize(
    "settings, name",
    [
        ({"lr_weight": 1.0}, "tfidf12-svm+lr1"),
        ({"balance": "double"}, "tfidf12-svm-double"),
        ({"nb_weight": 1.0, "fuse": "rank"}, "tfidf12-svm+nb1-rrf"),
    ],
)
def test_other_candidates_find_the_planted_relevant_records(tmp_path, settings, name):
    """The candidates the tuning script weighs are real screeners: on the made-up set
    whose relevant records share words they beat random order by far."""
    data = screening.load_dataset(write_csv(tmp_path / "synthetic.csv.gz", make_set()))
    model = screening.Model(**settings)
    assert model.name == name
    res = screening.evaluate(data, 2, model)
    assert res["model"] == name and res["wss95"] > 0.75, res["wss95"]


def test_minilm_embeddings_are_kept_on_disk(tmp_path, monkeypatch):
    """With a cache folder the embeddings are computed once; a rerun over the same texts
    reads the file (the embedder is not even loaded), other texts are embedded anew."""
    texts = ["straw ash slagging in boilers", "blood pressure trial"]
    E = screening.minilm_embeddings(texts, tmp_path)
    assert E.shape == (2, 384) and len(list(tmp_path.glob("minilm-*.npy"))) == 1

    import scirag_helpers.embedder as emb

    class Refuse:
        def __init__(self, *a, **k):
            raise AssertionError("embedded again")

    monkeypatch.setattr(emb, "Embedder", Refuse)
    assert np.array_equal(screening.minilm_embeddings(texts, tmp_path), E)
    with pytest.raises(AssertionError, match="embedded again"):
        screening.minilm_embeddings(texts + ["a third record"], tmp_path)
    X = screening.features(texts, 1.0, embeddings=E)
    assert X.shape[1] == screening.features(texts).shape[1] + 384
    with pytest.raises(ValueError, match="expected 2 x 384"):
        screening.features(texts, 1.0, embeddings=E[:1])


def test_minilm_features_sit_beside_tfidf_and_the_eval_names_them(tmp_path, run_cli):
    """--minilm W appends W x the project's MiniLM embedding (384 columns) to the TF-IDF
    columns; the eval run names the features; naive Bayes refuses them."""
    from scirag_helpers.embedder import Embedder

    texts = ["straw ash slagging in boilers", "blood pressure trial", "potassium fouling of superheaters"]
    T = screening.features(texts)
    X = screening.features(texts, minilm=0.5)
    assert X.shape == (3, T.shape[1] + 384)
    assert np.allclose(X[:, : T.shape[1]].toarray(), T.toarray())
    assert np.allclose(X[:, T.shape[1] :].toarray(), 0.5 * Embedder().embed(texts), atol=1e-6)
    data = screening.load_dataset(write_csv(tmp_path / "m.csv.gz", make_set(120, 6)))
    with pytest.raises(ValueError, match="naive Bayes needs non-negative features"):
        screening.evaluate(data, 1, screening.Model(nb_weight=1.0), minilm=0.5)
    proc = run_cli("eval", "screening", str(tmp_path / "m.csv.gz"), "--seeds", "1", "--json", "--no-store", "--minilm", "0.5")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["model"] == "tfidf12-svm+minilm0.5" and 0 <= out["wss95"] <= 1


def test_rank_fusion_adds_reciprocal_ranks_of_svm_and_naive_bayes():
    """fuse="rank": each model's scores become 1 / (60 + rank) and are added (weighted);
    the same scores as fusing the SVM alone and naive Bayes alone by hand, and not the
    standardised-score mix (planted error: fuse="score" gives other values)."""
    rr = screening.reciprocal_rank(np.array([0.2, 3.0, -1.0, 3.0]))
    assert np.allclose(rr, [1 / 63, 1 / 61, 1 / 64, 1 / 62])  # a tie: the earlier ranks first
    rows = make_set(200, 10)
    X = screening.features([f"{r['title']} {r['abstract']}" for r in rows])
    y = np.array([r["label_included"] for r in rows], dtype=np.int8)
    train, pool = np.arange(0, 200, 2), np.arange(1, 200, 2)

    def scores(**settings):
        # liblinear shuffles with a seed drawn from numpy's global generator (the SVM
        # has no random_state): the same draw for every fit, so the SVM parts are equal
        np.random.seed(0)
        return screening.Model(**settings).scores(X, train, y[train], pool)

    fused = scores(nb_weight=1.0, fuse="rank")
    svm = scores()
    nb_only = scores(nb_weight=1.0) - svm  # the NB part, standardised
    assert np.allclose(fused, screening.reciprocal_rank(svm) + screening.reciprocal_rank(nb_only))
    mixed = scores(nb_weight=1.0)
    assert not np.allclose(fused, mixed)
    assert screening.Model(fuse="rank").name == "tfidf12-svm"  # one model: nothing to fuse
    with pytest.raises(ValueError, match="fuse 'vote': choose score or rank"):
        screening.Model(fuse="vote")


def test_title_counted_twice_weighs_title_words_and_joins_no_copies(tmp_path):
    """titles=...: a title's words and bigrams count twice (so weigh more than the same
    word in the abstract only), and no bigram joins the title's copy to the text: the
    vocabulary is the text's own. The eval names the features."""
    texts = ["ash slagging in straw boilers ash", "blood pressure trial adults", "straw bales for housing"]
    titles = ["ash slagging", "blood pressure", "straw bales"]
    plain = screening.features(texts)
    twice = screening.features(texts, titles=titles)
    assert plain.shape == twice.shape  # no new column: no "slagging ash" bigram across the copies
    from sklearn.feature_extraction.text import TfidfVectorizer

    vocab = TfidfVectorizer(ngram_range=(1, 2), max_df=0.95).fit(texts).vocabulary_
    row0p, row0t = plain[0].toarray().ravel(), twice[0].toarray().ravel()
    # "slagging" (in the title) and "boilers" (text only) weigh the same in the plain features;
    # with the title counted twice "slagging" has tf 2: (1 + ln 2) times the weight of "boilers"
    assert row0p[vocab["slagging"]] == pytest.approx(row0p[vocab["boilers"]])
    assert row0t[vocab["slagging"]] / row0t[vocab["boilers"]] == pytest.approx(1 + math.log(2), rel=1e-5)
    with pytest.raises(ValueError, match="titles: expected 3, got 2"):
        screening.features(texts, titles=titles[:2])
    data = screening.load_dataset(write_csv(tmp_path / "t.csv.gz", make_set()))
    res = screening.evaluate(data, 1, title_twice=True)
    assert res["model"] == "tfidf12-svm+title2" and res["wss95"] > 0.75


# ---------------------------------------------------------------------------------
# ASReview LAB beside scirag: `scirag eval screening --asreview PATH`
# ---------------------------------------------------------------------------------

ASREVIEW = Path(os.environ.get("SCIRAG_ASREVIEW") or ROOT / ".venv-asreview" / "bin" / "asreview")


def test_asreview_that_is_no_program_is_refused_before_any_work(tmp_path, run_cli):
    path = write_csv(tmp_path / "a.csv.gz", make_set(60, 4))
    proc = run_cli("eval", "screening", str(path), "--no-store", "--asreview", str(tmp_path / "missing"))
    assert proc.returncode == 2
    assert "--asreview" in proc.stderr and "not an executable file" in proc.stderr


def test_asreview_that_fails_is_one_line_naming_the_set_and_seed(tmp_path, run_cli):
    path = write_csv(tmp_path / "a.csv.gz", make_set(60, 4))
    fake = tmp_path / "asreview"  # a program that fails as a broken install would
    fake.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named asreview' >&2\nexit 1\n")
    fake.chmod(0o755)
    proc = run_cli("eval", "screening", str(path), "--no-store", "--seeds", "1", "--asreview", str(fake))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "asreview simulate failed on a seed 0: ModuleNotFoundError" in proc.stderr


@pytest.mark.skipif(
    not ASREVIEW.is_file(), reason="ASReview LAB not installed (scripts/bench_screening.sh installs it)"
)
def test_eval_screening_runs_asreview_side_by_side_on_the_same_priors(tmp_path, run_cli):
    path = write_csv(tmp_path / "side.csv.gz", make_set(150, 8))
    proc = run_cli("eval", "screening", str(path), "--no-store", "--seeds", "2", "--json", "--asreview", str(ASREVIEW))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    side = result["asreview"]
    assert [r["seed"] for r in side["per_seed"]] == [0, 1]
    assert side["scirag_wss95"] == pytest.approx(result["wss95"], abs=1e-4)
    # the default screener is ASReview's default model (TF-IDF, SVM, class weights,
    # retrained after every decision): from the same priors it screens the same order
    assert side["diff_wss95"] == 0.0
    assert side["asreview_recall_at_10pct"] == pytest.approx(result["recall_at_10pct"], abs=1e-4)
    table = run_cli("eval", "screening", str(path), "--no-store", "--seeds", "1", "--asreview", str(ASREVIEW))
    assert "Side by side" in table.stdout and "asreview_wss95" in table.stdout
