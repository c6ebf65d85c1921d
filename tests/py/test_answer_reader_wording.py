"""Questions worded as a reader words them, against paper-shaped evidence: a reason
given in the sentence that goes on about the thing before it, a term the reader
quotes or places in its paper ("What does 'X' mean in the Y method?"), a definition
written after the description ("..., called the X"), and bulleted items the PDF's
text ran into one line. Texts are written for these tests."""

from __future__ import annotations

import pytest

from answer_fixtures import row
from scirag_helpers import answer_forms, prompts, text
from scirag_helpers.answer import extractive_answer, make_sources
from scirag_helpers.answer.question import _defines, defined_term
from scirag_helpers.answer.units import units_of
from scirag_helpers.words import terms
from scirag_helpers.answer import answer_question, parse_options


def answer(question, *rows_):
    src = make_sources(list(rows_), 5)
    return extractive_answer(question, src, quantity=prompts.wants_quantity(question)), src


GATING = (
    "Gated Pooling: The searched model pools every head with learnable scalars, which lowers perplexity "
    "for inputs of one fixed length. However, these scalars cannot be applied to inputs of other lengths "
    "and so we do not include this change in the final model. The final model trains on four corpora."
)


def test_asked_why_the_sentence_going_on_about_the_thing_before_gives_the_reason():
    out, _ = answer("Why is the gated pooling left out of the final model?", row(1, GATING, ext="s", title="Search"))
    assert "cannot be applied to inputs of other lengths" in out.text, out.text
    # the sentence it goes on from is quoted first, so "these scalars" has its referent
    assert out.text.startswith("Gated Pooling: The searched model pools"), out.text
    # the same, asked after a statement that sets the scene
    scene = "The searched model pools every head with learnable scalars; why is this gated pooling left out of it?"
    assert answer_forms.question_type(scene) == "description"
    out, _ = answer(scene, row(1, GATING, ext="s", title="Search"))
    assert "cannot be applied to inputs of other lengths" in out.text, out.text
    assert answer_forms.question_type("The model has gating; does it help on long inputs?") == "yes_no"
    assert answer_forms.question_type("In STaR, after each round of sampling, is the model restarted?") == "yes_no"
    # not asked why, a sentence is read on its own
    plain, _ = answer("What does the searched model pool every head with?", row(1, GATING, ext="s", title="Search"))
    assert "other lengths" not in plain.text, plain.text


def test_bulleted_items_run_into_one_line_are_sentences_of_their_own():
    ran = (
        "For this reason we keep the wider projection only at small sizes. • Gated Pooling: The searched "
        "model pools every head with learnable scalars. ▪ Shared Norms: one norm serves both sub-blocks."
    )
    said = text.paragraph_sentences(ran)
    assert said == [
        "For this reason we keep the wider projection only at small sizes.",
        "Gated Pooling: The searched model pools every head with learnable scalars.",
        "Shared Norms: one norm serves both sub-blocks.",
    ], said
    # the answerer's units and the form's sentences are cut the same way
    src = make_sources([row(1, ran, ext="s", title="Search")], 5)
    assert [u.text for u in units_of(src[0])] == said
    table = answer_forms.sentence_table("What is gated pooling?", src, terms)
    assert [x["sentence"] for x in table] == said


def test_a_definition_question_as_a_reader_words_it_names_its_term():
    cases = {
        "What does 'warm restarting' mean in the Foo method?": "warm restarting",
        "In the adaptive setting, what is meant by 'think time'?": "think time",
        "As described in the paper, what kind of data structure is an FM-index?": "FM-index",
        "What is Multi-Head Pooling (MHP) in Primer?": "MHP",
        "What is the 'model FLOPs utilization' (MFU) metric proposed in the PaLM paper?": "MFU",
        "What is Planner Replay?": "Replay",
        "How is model FLOPs utilization (MFU) defined?": "MFU",
        # an apposition describes the term; a relative clause says whose it is
        "What is 'model FLOPs utilization' (MFU), the efficiency metric proposed in the PaLM paper?": "MFU",
        "What is the FM-index that SEAL relies on?": "FM-index",
    }
    for question, term in cases.items():
        got = defined_term(question)
        assert got is not None and got.replace("\\", "") == term, (question, got)
    # a value asked of a thing is not a definition, quoted or placed in a paper or not
    for question in (
        "What is the ash content of barley straw?",
        "What is the learning rate used in BERT?",
        "How many 'warm restarts' are used in the Foo method?",
        "What is the learning rate that they use?",
        "What is the accuracy, the main metric?",
    ):
        assert defined_term(question) is None, question


def test_a_definition_written_around_its_term_defines_it():
    assert _defines(
        "This probability sets the number of steps, called the “think time”, of each input.", "think\\ time"
    )
    assert _defines("We add warm restarting, where the rate is reset every ten epochs.", "warm\\ restarting")
    assert _defines("The structure that serves our needs is the FM-index (Ferragina, 2000).", "FM\\-index")
    assert _defines("Multi-Head Pooling (MHP): Another change adds pooling after each projection.", "MHP")
    # naming a term in passing is no definition
    assert not _defines("We compare warm restarting with plain decay in Table 2.", "warm\\ restarting")
    assert not _defines("The FM-index of the corpus takes 8 GB.", "FM\\-index")


def test_the_team_that_did_something_is_not_asked_for():
    # like "they" and "the authors' ... we": who did it frames the question; a paper
    # says "we", so "team" would count as a word no source holds
    assert terms("How did the PaLM team work around the loss spikes?") == terms(
        "How did PaLM work around the loss spikes?"
    )


def test_a_term_described_by_a_quantity_word_is_still_a_definition_question():
    body = (
        "We report the efficiency of every run in Table 3 and compare it with earlier systems trained on "
        "the same hardware, for which the efficiency is often reported differently. We propose a metric "
        "called token throughput utilization (TTU). This is the ratio of the observed throughput to the "
        "theoretical peak of the system."
    )
    q = "What is token throughput utilization (TTU), the efficiency metric proposed in the paper?"
    out = answer_question(
        q,
        [row(1, body, ext="ttu", title="Scaling")],
        options=parse_options({"answerer": "extractive"}),
        template=prompts.default_template("answer"),
        intents=prompts.default_intents(),
    )
    assert not out["abstained"] and "ratio of the observed throughput" in out["answer"], out["answer"]


def test_a_greek_letter_typed_out_is_the_letter():
    assert terms("Why set beta1 to zero in the inner loop?")[1] == "beta1"
    assert "beta1" in terms("We used Adam with β1 = 0 in the inner loop.")
    body = "We used Adam with β1 = 0 in the inner loop, because momentum reduced performance across the board."
    out, _ = answer("Why did they set Adam's beta1 to 0 in the inner loop?", row(1, body, ext="meta", title="Meta"))
    assert not out.abstained and "momentum reduced performance" in out.text, out.text


CONTINUED_FIGURES = {
    "they": (
        "We showed 20 pairs of rationales from both models to a third party in a random order. "
        "They picked the rationales of the larger model for 65% of the problems. The rest were ties.",
        "When a third party compared the pairs of rationales, in what fraction of cases did they choose the larger model's?",
        "65%",
    ),
    "thus": (
        "Training the baseline for this experiment cost 3.1E+22 FLOPs, so the search saved 2.2E+22 FLOPs. "
        "Thus, for this single training, the return on investment for the search is roughly 7.5X.",
        "Roughly what return on investment did the search give in this training experiment?",
        "7.5X",
    ),
}


@pytest.mark.parametrize("case", sorted(CONTINUED_FIGURES))
def test_a_figure_given_by_they_or_thus_is_read_with_the_sentence_before(case):
    body, question, figure = CONTINUED_FIGURES[case]
    out, _ = answer(question, row(1, body, ext=case, title="Study"))
    assert not out.abstained and figure in out.text and out.text.startswith(body[:20]), out.text


INDEX_SIZES = (
    "Table 1: Index sizes on the passage corpus (around 21M passages).\n"
    "System | Model Params | Size | Index Params | GPU?\n"
    "Dense | 220M | 64.6 GB | 16.1B | ✓\n"
    "Ours | 406M | 8.8GB | - | ✗"
)


def test_asked_how_big_the_size_column_answers():
    q = "How big is the index of Ours for the corpus of roughly 21M passages?"
    out, _ = answer(q, row(1, INDEX_SIZES, ext="idx", title="Index", is_table=True))
    assert out.short == "8.8GB", out.text


def test_a_sentence_announcing_a_list_brings_its_items():
    body = (
        "To compare the update rules fairly, we simplified our experimental setup in several ways. "
        "First, we used plain SGD in both loops. Second, we did not use meta-batches. Third, we kept to "
        "one 5-way task family. With these simplifications, tuning mattered less."
    )
    out, _ = answer(
        "Which simplifications were made to the experimental setup to compare the update rules?",
        row(1, body, ext="m", title="Meta"),
    )
    assert "First, we used plain SGD" in out.text and "Third, we kept to one 5-way task family" in out.text, out.text
    assert "tuning mattered less" not in out.text, out.text


def test_asked_how_the_sentence_that_overcomes_the_problem_before_answers():
    body = (
        "Since in many environments the value is unbounded, the search rule must be adjusted for it. "
        "To overcome this, we normalise the action values with the minimum and maximum values seen in the tree. "
        "The tree is rebuilt at every step."
    )
    q = "How does the planner keep the search rule working with unbounded values?"
    out, _ = answer(q, row(1, body, ext="p", title="Planner"))
    assert "minimum and maximum values seen in the tree" in out.text, out.text
    assert out.text.startswith("Since in many environments the value is unbounded"), out.text


def test_how_a_thing_compares_does_not_define_it():
    assert not _defines("As can be seen, the FM-index is more than 7 times lighter than the embeddings.", "FM\\-index")
    assert not _defines("The FM-index is faster than a flat index.", "FM\\-index")
    assert _defines("The FM-index is a compressed suffix array.", "FM\\-index")


def test_a_sentence_of_a_paper_is_about_the_name_the_paper_goes_by():
    # "Sealion" names most of its paper's passages, not the sentence that answers
    passages = [
        "Sealion retrieves passages by generating substrings of them with a language model.",
        "The FM-index of Sealion is more than 7 times lighter than the dense index of the baseline.",
        "The core data structure that satisfies our requirements is the FM-index, i.e., a compressed suffix array.",
    ]
    rows = [row(i + 1, p, ext="sealion", title="Generating substrings", document_id=7) for i, p in enumerate(passages)]
    out, _ = answer("What kind of data structure is the FM-index that Sealion relies on?", *rows)
    assert out.text.startswith("The core data structure"), out.text


def test_a_list_question_may_open_with_a_preposition_and_gets_the_announced_list():
    assert answer_forms.question_type("Into which categories were the benchmarks sorted?") == "list"
    body = (
        "We evaluate the model on the same 29 benchmarks as earlier work and report every score. "
        "We can roughly divide the 29 benchmarks into four categories:\n\n"
        "• Wholesale contamination – datasets that appear on the open web.\n"
        "• Constructed from web – datasets extracted from the open web."
    )
    out, _ = answer("Into which categories are the 29 benchmarks sorted?", row(1, body, ext="b", title="Benchmarks"))
    assert "four categories:" in out.text and "Wholesale contamination" in out.text, out.text


# question, paper title, text, how the answer must begin: the sentence that answers,
# not the one that shares the most words with the question
ANSWERING_SENTENCE = {
    "a quoted term gets the sentence that defines it": (
        "What does 'warm restarting' mean in the Foo method?",
        "Foo",
        "Warm restarting and plain decay are compared for the Foo method in every run of the Foo method. "
        "We complement the schedule with warm restarting, where the learning rate is reset to its first value "
        "every ten epochs.",
        "We complement the schedule with warm restarting, where",
    ),
    "what a thing is good for is asked like a reason": (
        "What is the advantage of the parallel formulation?",
        "Model",
        "Parallel Layers: we use a parallel formulation in each layer rather than the serialized formulation. "
        "The parallel formulation results in roughly 15% faster training at large scales, since the two input "
        "products can be fused.",
        "The parallel formulation results in roughly 15% faster training",
    ),
}


@pytest.mark.parametrize("case", sorted(ANSWERING_SENTENCE))
def test_the_sentence_that_answers_leads(case):
    question, title, body, lead = ANSWERING_SENTENCE[case]
    out, _ = answer(question, row(1, body, ext="x", title=title))
    assert out.text.startswith(lead), out.text


def test_the_clause_after_a_formula_is_read_with_the_sentence_that_introduced_it():
    body = (
        "The channel-mixing block of the recurrent model is given by:\n\n"
        "rt = Wr · xt, (16) kt = Wk · xt, (17) ot = σ(rt) ⊙ (Wv · max(kt, 0)2), (18)\n\n"
        "where we adopt squared ReLU activation (So et al., 2021).\n\n"
        "Activation statistics of the time-mixing block are reported for every layer in the appendix."
    )
    out, _ = answer(
        "Which activation does the recurrent model use in its channel-mixing block?", row(1, body, ext="r", title="RNN")
    )
    assert "squared ReLU" in out.text, out.text


NOTES = (
    "Surprisingly, the larger encoder does not beat the small encoder on the field notes. "
    "This gap may be attributed to the short sentences of the notes, which leave the encoders little context. "
    "We report every run in the appendix."
)


def test_asked_what_reason_the_sentence_attributing_it_gives_it():
    # "what reason ..." asks why; "may be attributed to" gives a reason, in the sentence
    # that goes on about the finding before it
    q = "What reason do the authors suggest for the larger encoder not beating the small one on the field notes?"
    out, _ = answer(q, row(1, NOTES, ext="n", title="Results"))
    assert "attributed to the short sentences" in out.text, out.text
    assert out.text.startswith("Surprisingly, the larger encoder"), out.text
