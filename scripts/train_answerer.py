#!/usr/bin/env python3
"""Trains the answer-form models (python/plpy_helpers/scirag_helpers/models/answer_forms.json)
on the QASPER *train* split only: a sentence scorer (a softmax over each question's
sentences, fitted to their token F1 against the annotators), a span scorer (ridge
regression on each candidate span's token F1), a yes/no decider and an abstainer
(logistic regressions). Dev is never read here.

    scripts/train_answerer.py [--papers 888] [--data ../shared/data/qasper]

It loads the papers through `scirag eval qasper --split train --papers N` first if
they are missing (the same database, scirag_qasper_train), asks every question as a
reader scoped to its paper to see exactly the sources the answerer is shown, and
splits the papers 80/20 (seeded) into a fitting part and a checking part, whose
figures it prints and stores in the model file. numpy only; deterministic.

The yes/no decider ships only if it beats the prior "Yes" in 5-fold cross-validation
by paper; ``--part yes_no --papers 888`` refits it alone on every train paper's yes/no
questions (about 470) and leaves the other models in the file as they are;
``--part abstain_threshold --papers 888`` chooses the abstainer's threshold again with
the weights in the file (at least MIN_ABSTENTIONS abstentions on the fitting part, right
ABSTAIN_PRECISION of the time, or never); ``--part abstain_report --papers 888`` writes
nothing and prints how well the abstainer in the file tells unanswerable questions
apart on each part (AUROC, and its best precision at recall >= 0.5 against the base
rate).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / d) for d in ("loader", "plpy_helpers")]

from scirag.evaluation import qasper  # noqa: E402
from scirag.evaluation.qa import reader_connection  # noqa: E402
from scirag_helpers import answer, answer_forms  # noqa: E402

SEED = 13
RIDGE = 1.0
LISTWISE_L2 = 1.0
ABSTAIN_PRECISION = 0.6  # the bar for abstaining on unanswerable questions
# Abstentions a threshold must make on the fitting part before its precision counts: at
# 3 (the earlier rule) one lucky paper set the shipped threshold (0.25), at which the
# abstainer was then right on 2 of its 6 abstentions over all 2,593 train questions.
MIN_ABSTENTIONS = 20


OPTIONS = {"k": 10, "profile": "interactive", "answerer": "extractive", "max_sources": 5}  # as eval qasper asks


def train_papers(data: Path, n: int, dsn: str | None) -> tuple[dict, list, str]:
    """The first ``n`` train papers (id order) and their questions, loaded into the train
    database if missing (once), and that database's DSN."""
    papers, items = qasper.read_split(data / "train.tar.gz")
    papers, items = qasper.select(papers, items, n)
    dsn = qasper.qasper_dsn(dsn, "train")
    qasper.build(dsn, papers)
    return papers, items, dsn


def collect(dsn: str, items: list[qasper.Item], options: dict) -> list[dict]:
    """Each question with the sources the answerer is shown."""
    out = []
    # the sentence answer alone (form off): what the form model is added to
    opts = {**options, "include_content": True, "form": False}
    t0 = time.monotonic()
    with reader_connection(dsn) as reader:
        for i, it in enumerate(items, 1):
            reader.execute("SELECT set_config('scirag.documents', %s, false)", (qasper.doc_id(it.paper_id),))
            res = reader.execute("SELECT scirag.answer(%s, %s)", (it.question, json.dumps(opts))).fetchone()[0]
            out.append(
                {
                    "item": it,
                    "shown": res.get("prompt_sources") or [],
                    "sentence_answer": None if res["abstained"] else res["answer"],
                    "abstain_reason": (res.get("evidence") or {}).get("reason") if res["abstained"] else None,
                }
            )
            if i % 100 == 0 or i == len(items):
                print(f"collected {i}/{len(items)} ({i / (time.monotonic() - t0):.1f}/s)", file=sys.stderr)
    return out


def gold(it: qasper.Item) -> dict:
    kinds = [qasper.reference(a)[1] for a in it.answers]
    yes = [a["yes_no"] for a in it.answers if a.get("yes_no") is not None and not a.get("unanswerable")]
    return {
        "unanswerable": kinds.count("unanswerable") * 2 > len(kinds),
        # the metric takes the best annotator: "Yes" scores when any annotator said yes
        "yes_no": any(yes) if yes and len(yes) * 2 >= len(kinds) else None,
        "texts": [
            qasper.reference(a)[0] for a in it.answers if qasper.reference(a)[1] in ("extractive", "abstractive")
        ],
    }


def matrix(feats: list[dict], names: list[str]) -> np.ndarray:
    index = {n: i for i, n in enumerate(names)}
    x = np.zeros((len(feats), len(names)))
    for r, f in enumerate(feats):
        for k, v in f.items():
            if k in index:
                x[r, index[k]] = v
    return x


def ridge(x: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    a = x.T @ x + lam * np.eye(x.shape[1])
    return np.linalg.solve(a, x.T @ y)


def logistic(x: np.ndarray, y: np.ndarray, lam: float = 1.0, iters: int = 50) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method."""
    w = np.zeros(x.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(x @ w, -30, 30)))
        g = x.T @ (p - y) + lam * w
        h = (x * (p * (1 - p))[:, None]).T @ x + lam * np.eye(x.shape[1])
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def listwise(groups: list[tuple[np.ndarray, np.ndarray]], lam: float = LISTWISE_L2, iters: int = 30) -> np.ndarray:
    """Weights w of a softmax over each question's sentences (scores x @ w), fitted by
    Newton's method to each question's target distribution (its sentences' token F1
    against the annotators, normalised), L2-regularised.

    Why not a regression on each sentence's F1 (the first scorer): the answerer only
    needs the *order* of one question's sentences, and a pointwise fit spends its
    weights on telling easy questions from hard ones (every sentence of an easy question
    scores high), which changes no question's choice. In 5-fold cross-validation by paper
    on all train papers, the listwise fit chose better sentences: held-out Answer F1
    0.2078 -> 0.2142 (higher in all five folds), extractive 0.156 -> 0.165 (in four);
    with the context features of answer_forms.sentence_table, 0.2154 and 0.169."""
    d = groups[0][0].shape[1]
    w = np.zeros(d)
    for _ in range(iters):
        g, h = lam * w, lam * np.eye(d)
        for x, t in groups:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            g += x.T @ (p - t)
            xp = x * p[:, None]
            h += x.T @ xp - np.outer(xp.sum(0), xp.sum(0))
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w


def fitted_listwise(groups: list[tuple[list[dict], list[float]]]) -> dict:
    if not groups:
        raise ValueError(
            "the sentence scorer has nothing to rank: no answerable question of the fitting"
            " papers has a shown sentence that shares a word with its gold answers"
            " (too few papers, or retrieval showed nothing: try more --papers)"
        )
    names = names_of([f for feats, _ in groups for f in feats])
    w = listwise([(matrix(feats, names), np.array(y) / sum(y)) for feats, y in groups])
    return {
        "weights": {n: round(float(v), 6) for n, v in zip(names, w)},
        "examples": len(groups),
        "objective": "listwise softmax over a question's sentences, targets their token F1",
    }


def names_of(feats: list[dict]) -> list[str]:
    return sorted({k for f in feats for k in f})


def fitted(feats: list[dict], y: list[float], how) -> dict:
    names = names_of(feats)
    w = how(matrix(feats, names), np.array(y))
    return {"weights": {n: round(float(v), 6) for n, v in zip(names, w)}, "examples": len(y)}


def fit(rows: list[dict], span_types: tuple = ()) -> dict:
    terms = answer.terms
    model: dict = {"span_types": sorted(span_types)}
    # 1. sentences: which sentence of the shown sources answers, fitted listwise (one
    #    question's sentences against each other; see listwise)
    groups = []
    for r in rows:
        g = r["gold"]
        if g["unanswerable"] or not g["texts"]:
            continue
        table = answer_forms.sentence_table(r["item"].question, r["shown"], terms)
        y = [max(qasper.token_f1(x["sentence"], t) for t in g["texts"]) for x in table]
        if table and max(y) > 0:  # a question no shown sentence answers ranks nothing
            groups.append(([x["features"] for x in table], y))
    model["sentence"] = fitted_listwise(groups)
    # 2. spans within the best sentences, yes/no, and abstention features
    span_feats, span_y, ab_feats, ab_y = [], [], [], []
    for r in rows:
        it, shown, g = r["item"], r["shown"], r["gold"]
        qtype, cands, ranked = answer_forms.candidates(it.question, shown, terms, model, r["sentence_answer"])
        if not ranked:
            continue
        ab_feats.append(answer_forms.abstain_features(it.question, ranked, shown, terms, qtype))
        ab_y.append(float(g["unanswerable"]))
        if g["unanswerable"]:
            continue
        if g["texts"] and qtype != "yes_no":
            for c in cands:
                span_feats.append(c.features)
                span_y.append(max(qasper.token_f1(c.text, t) for t in g["texts"]))
    model["span"] = fitted(span_feats, span_y, lambda x, y: ridge(x, y, RIDGE))
    model["yes_no"] = fit_yes_no(rows, model)
    model["abstain"] = {**fitted(ab_feats, ab_y, logistic), "share_unanswerable": round(float(np.mean(ab_y)), 4)}
    # 3. the abstention threshold: the lowest at which abstentions on the fitting part
    #    are right at least ABSTAIN_PRECISION of the time (Answer F1 alone would abstain
    #    at a 20 % chance of "unanswerable", which a reader would not call an answer);
    #    none (2.0) when no threshold is that precise
    model["abstain"].update(abstain_threshold(abstain_outcomes(rows, model)))
    return model


def abstain_outcomes(rows: list[dict], model: dict) -> list[tuple[float, bool]]:
    """(P(unanswerable), gold unanswerable) for each question the form model may answer
    (the sentence answerer's own abstentions stand whatever the threshold)."""
    off = {**model, "abstain": {**model["abstain"], "threshold": 2.0}}
    out = []
    for r in rows:
        if not answer.form_may_answer(r["item"].question, r["abstain_reason"] is not None, r["abstain_reason"]):
            continue
        form = answer_forms.decide(r["item"].question, r["shown"], answer.terms, off, r["sentence_answer"])
        out.append((form.details.get("p_unanswerable", 0.0), r["gold"]["unanswerable"]))
    return out


def abstain_threshold(outcomes: list[tuple[float, bool]]) -> dict:
    """The lowest threshold at which at least MIN_ABSTENTIONS abstentions are right
    ABSTAIN_PRECISION of the time, or 2.0 (never) when none is."""
    chosen = 2.0
    for th in [x / 100 for x in range(5, 100)]:
        hits = [u for p, u in outcomes if p >= th]
        if len(hits) >= MIN_ABSTENTIONS and sum(hits) / len(hits) >= ABSTAIN_PRECISION:
            chosen = th
            break
    return {"threshold": chosen, "min_precision": ABSTAIN_PRECISION, "min_abstentions": MIN_ABSTENTIONS}


def abstain_separation(outcomes: list[tuple[float, bool]]) -> dict:
    """How well P(unanswerable) tells the unanswerable questions apart: AUROC, and the
    best precision over the thresholds that reach recall 0.5 (the operating point the
    project's target names), beside the base rate that a guess gets. Linear after the
    sort; tied probabilities are taken together, as a threshold takes them."""
    pos = [p for p, u in outcomes if u]
    neg = [p for p, u in outcomes if not u]
    ordered = sorted(outcomes, key=lambda o: -o[0])
    best, right, i = None, 0, 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and ordered[j][0] == ordered[i][0]:
            j += 1
        right += sum(1 for k in range(i, j) if ordered[k][1])
        i = j
        if pos and right / len(pos) >= 0.5:
            best = max(best or 0.0, right / j)
    return {
        "questions": len(outcomes),
        "unanswerable": len(pos),
        "base_rate": round(len(pos) / len(outcomes), 4) if outcomes else None,
        "auroc": qasper.auroc(pos, neg),
        "precision_at_recall_0.5": round(best, 4) if best is not None else None,
    }


def yes_no_rows(rows: list[dict], model: dict) -> list[tuple]:
    """(paper, features, F1 of "Yes", F1 of "No", label) for each yes/no-form question."""
    out = []
    for r in rows:
        it, shown = r["item"], r["shown"]
        qtype, _, ranked = answer_forms.candidates(it.question, shown, answer.terms, model, r["sentence_answer"])
        if qtype != "yes_no" or not ranked:
            continue
        f = answer_forms.yes_no_features(it.question, ranked, shown, answer.terms, r["sentence_answer"] is not None)
        label = r["gold"]["yes_no"]
        out.append((it.paper_id, f, qasper.score("Yes", it.answers)[0], qasper.score("No", it.answers)[0], label))
    return out


def fit_yes_no(rows: list[dict], model: dict) -> dict:
    return choose_yes_no(yes_no_rows(rows, model))


def choose_yes_no(data: list[tuple], folds: int = 5) -> dict:
    """The yes/no decider (a logistic regression) if it beats the prior "Yes" in
    cross-validation by paper (Answer F1 of its calls), else the prior alone: a decider
    that only looks good on the questions it was fitted on must not ship."""
    labelled = [d for d in data if d[4] is not None]
    share_yes = round(float(np.mean([float(d[4]) for d in labelled])), 4) if labelled else 1.0
    names = names_of([d[1] for d in data])
    papers = sorted({d[0] for d in data})
    random.Random(SEED).shuffle(papers)
    fold = {p: i % folds for i, p in enumerate(papers)}
    model_f1, prior_f1 = [], []
    for k in range(folds):
        train = [d for d in labelled if fold[d[0]] != k]
        test = [d for d in data if fold[d[0]] == k]
        if not train or not test:
            continue
        w = logistic(matrix([d[1] for d in train], names), np.array([float(d[4]) for d in train]))
        p = matrix([d[1] for d in test], names) @ w
        model_f1 += [d[2] if x >= 0 else d[3] for d, x in zip(test, p)]
        prior_f1 += [d[2] if share_yes >= 0.5 else d[3] for d in test]
    cv = {"model": round(float(np.mean(model_f1)), 4), "prior": round(float(np.mean(prior_f1)), 4)}
    out = {"share_yes": share_yes, "examples": len(labelled), "questions": len(data), "cv_answer_f1": cv}
    if labelled and cv["model"] > cv["prior"]:
        out.update(fitted([d[1] for d in labelled], [float(d[4]) for d in labelled], logistic))
        out["examples"] = len(labelled)
    else:
        out["weights"] = {}  # the prior answers (answer_forms.says_yes)
    return out


def score_row(r: dict, model: dict) -> tuple[float, str, bool]:
    """One question as scirag.answer would answer it: the sentence answerer's own
    abstention stands (answer.with_form), the form model may add one."""
    if not answer.form_may_answer(r["item"].question, r["abstain_reason"] is not None, r["abstain_reason"]):
        return (*qasper.score(qasper.UNANSWERABLE, r["item"].answers), True)
    form = answer_forms.decide(r["item"].question, r["shown"], answer.terms, model, r["sentence_answer"])
    pred = qasper.UNANSWERABLE if form.abstain else (form.short or "")
    f1, kind = qasper.score(pred, r["item"].answers)
    return f1, kind, form.abstain


def report(rows: list[dict], model: dict | None) -> dict:
    by: dict = {}
    total = []
    for r in rows:
        f1, kind, _ = score_row(r, model) if model is not None else (0.0, "", False)
        total.append(f1)
        by.setdefault(kind, []).append(f1)
    out = {"questions": len(rows), "answer_f1": round(float(np.mean(total)), 4)}
    out.update({f"f1_{k}": round(float(np.mean(v)), 4) for k, v in sorted(by.items())})
    return out


def refit_yes_no(path: Path, dsn: str, papers: dict, items: list, options: dict) -> None:
    model = json.loads(path.read_text(encoding="utf-8"))
    items = [it for it in items if answer_forms.question_type(it.question) == "yes_no"]
    rows = collect(dsn, items, options)
    for r in rows:
        r["gold"] = gold(r["item"])
    model["yes_no"] = fit_yes_no(rows, model)
    model["yes_no"]["trained"] = {
        "data": "QASPER v0.3 train split (CC BY 4.0), first papers by id",
        "papers": len(papers),
        "seed": SEED,
        "options": options,
        "date": date.today().isoformat(),
    }
    path.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps(model["yes_no"], indent=1))
    print(f"wrote {path}", file=sys.stderr)


def rechoose_threshold(path: Path, fit_rows: list[dict], check_rows: list[dict]) -> None:
    """The abstainer's threshold chosen again by abstain_threshold on the fitting part,
    its weights and every other model kept; the checking part's figures before and
    after are printed and stored with it."""
    model = json.loads(path.read_text(encoding="utf-8"))
    before = report(check_rows, model)
    old = model["abstain"].get("threshold")
    model["abstain"].update(abstain_threshold(abstain_outcomes(fit_rows, model)))
    model["abstain"]["threshold_rechosen"] = {
        "date": date.today().isoformat(),
        "was": old,
        "check_before": before,
        "check_after": report(check_rows, model),
    }
    path.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps(model["abstain"], indent=1))
    print(f"wrote {path}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "qasper")
    ap.add_argument(
        "--papers",
        type=int,
        default=888,
        help="first N train papers (by id) with questions (888: all of them, as shipped)",
    )
    ap.add_argument("--dsn", default=None)
    ap.add_argument("--out", type=Path, default=answer_forms.MODEL_PATH)
    ap.add_argument(
        "--span-types",
        default="",
        help="question forms answered by spans shorter than a sentence, e.g. list,number (default: none)",
    )
    ap.add_argument(
        "--part",
        choices=("all", "yes_no", "abstain_threshold", "abstain_report"),
        default="all",
        help="yes_no: refit only the yes/no decider, on the yes/no questions of the papers chosen, "
        "into the existing model file (the other models stay as they are); abstain_threshold: "
        "choose only the abstainer's threshold again, on the fitting part, with the weights in the file; "
        "abstain_report: print how well the abstainer in the file separates unanswerable questions "
        "on each part, writing nothing",
    )
    args = ap.parse_args()
    papers, items, dsn = train_papers(args.data, args.papers, args.dsn)
    options = OPTIONS
    if args.part == "yes_no":
        return refit_yes_no(args.out, dsn, papers, items, options)
    rows = collect(dsn, items, options)
    for r in rows:
        r["gold"] = gold(r["item"])
    ids = sorted(papers)
    random.Random(SEED).shuffle(ids)
    check_ids = set(ids[: len(ids) // 5])
    fit_rows = [r for r in rows if r["item"].paper_id not in check_ids]
    check_rows = [r for r in rows if r["item"].paper_id in check_ids]
    if args.part == "abstain_threshold":
        return rechoose_threshold(args.out, fit_rows, check_rows)
    if args.part == "abstain_report":
        model = json.loads(args.out.read_text(encoding="utf-8"))
        parts = {"fit": fit_rows, "check": check_rows}
        print(json.dumps({k: abstain_separation(abstain_outcomes(v, model)) for k, v in parts.items()}, indent=1))
        return None
    t0 = time.monotonic()
    span_types = tuple(x for x in args.span_types.split(",") if x)
    bad = set(span_types) - set(answer_forms.QTYPES)
    if bad:
        ap.error(f"--span-types: unknown form(s) {', '.join(sorted(bad))} (use {', '.join(answer_forms.QTYPES)})")
    model = fit(fit_rows, span_types)
    model["trained"] = {
        "data": "QASPER v0.3 train split (CC BY 4.0), first papers by id",
        "papers": len(papers),
        "questions_fit": len(fit_rows),
        "questions_check": len(check_rows),
        "seed": SEED,
        "ridge": RIDGE,
        "options": options,
        "date": date.today().isoformat(),
        "fit_seconds": round(time.monotonic() - t0, 1),
        "fit": report(fit_rows, model),
        "check": report(check_rows, model),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps(model["trained"], indent=1))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
