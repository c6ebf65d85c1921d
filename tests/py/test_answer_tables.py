"""The offline answerer on paper-shaped evidence: table cells named by row and column
(multi-level headers, repeated and negated row labels, sizes), sentences that name the
question's entities and asked-for attribute, definitions, and abstention when the
named document or size is not in the evidence. Texts are written for these tests."""

from __future__ import annotations

from answer_fixtures import row
from scirag_helpers import checks
from scirag_helpers.answer import answer_question, extractive_answer, make_sources, parse_options
from scirag_helpers import answer_forms, prompts
from scirag_helpers.words import terms

FEWSHOT = (
    "Table 1: Few-shot results on Mini-ImageNet.\n"
    "Algorithm | accuracy / 1-shot 5-way | accuracy / 5-shot 5-way\n"
    "MAML | 48.70 ± 1.84% | 63.11 ± 0.92%\n"
    "Reptile | 47.07 ± 0.26% | 62.74 ± 0.37%\n"
    "Reptile + Transduction | 49.97 ± 0.32% | 65.99 ± 0.58%"
)
ZEROSHOT = (
    "Table 4: Zero-shot results.\n"
    "Model | Params (B) | LAMBADA ppl | PIQA acc\n"
    "RWKV-4 | 1.5 | 7.04 | 72.36\n"
    "Pythia | 1.4 | 6.58 | 71.11\n"
    "RWKV-4 | 14.2 | 3.86 | 77.48\n"
    "Pythia | 12 | 3.92 | 76.71"
)
ABLATION = (
    "Table 2: Ablations of the self-taught reasoner on the dev set.\n"
    "Method | Dev accuracy (%) | Train data used (%)\n"
    "GPT-J finetuned | 60.0 | 100\n"
    "STaR without rationalization | 68.8 | 69.7\n"
    "STaR | 72.3 | 86.7"
)
REPTILE_PROSE = (
    "Reptile repeatedly samples a task, trains on it, and moves the initialization towards the "
    "trained weights on that task. We evaluate Reptile on Mini-ImageNet and Omniglot."
)
OTHER_PROSE = (
    "Our tokenizer-free model reaches 71.5% accuracy on Mini-ImageNet in the 5-shot 5-way setting, "
    "which we report for completeness."
)
MFU = (
    "We propose a new metric for efficiency that is implementation-independent, called model FLOPs "
    "utilization (MFU). This is the ratio of the observed throughput relative to the theoretical maximum "
    "throughput of a system operating at peak FLOPs. MFU is reported for every run in Table 3."
)


def sources(*rows_):
    return make_sources(list(rows_), 5)


def answer(question, *rows_):
    src = sources(*rows_)
    return extractive_answer(question, src, quantity=prompts.wants_quantity(question)), src


def test_a_cell_named_by_row_and_column_is_answered_verbatim_with_both_labels():
    out, src = answer(
        "What 5-shot 5-way classification accuracy does Reptile with transduction reach on Mini-ImageNet?",
        row(1, FEWSHOT, ext="reptile", title="Meta-Learning", is_table=True),
    )
    assert not out.abstained and out.reason == "table cell"
    assert out.text == "Algorithm: Reptile + Transduction; accuracy / 5-shot 5-way: 65.99 ± 0.58% [1]"
    assert checks.run_checks(out.text, src)["supports_ok"]


def test_a_column_with_another_number_is_another_column():
    out, _ = answer(
        "What 1-shot 5-way accuracy does MAML reach on Mini-ImageNet?",
        row(1, FEWSHOT, ext="reptile", title="Meta-Learning", is_table=True),
    )
    assert "48.70 ± 1.84%" in out.text and "63.11" not in out.text


def test_repeated_row_labels_are_told_apart_by_the_size_the_question_gives():
    out, _ = answer(
        "What zero-shot LAMBADA perplexity does the 14.2B-parameter RWKV-4 model achieve?",
        row(1, ZEROSHOT, ext="rwkv", title="RWKV", is_table=True),
    )
    assert "3.86" in out.text and "7.04" not in out.text


def test_a_negated_row_label_is_not_the_plain_one():
    q_with = "What percentage of the training data does the final STaR model use?"
    q_without = "What dev accuracy does STaR achieve without rationalization?"
    a, _ = answer(q_with, row(1, ABLATION, ext="star", title="STaR", is_table=True))
    b, _ = answer(q_without, row(1, ABLATION, ext="star", title="STaR", is_table=True))
    assert "86.7" in a.text and "68.8" not in a.text
    assert "68.8" in b.text and "72.3" not in b.text


def test_no_table_fits_so_the_sentence_answers():
    out, _ = answer(
        "How does Reptile update the initialization after training on a task?",
        row(1, FEWSHOT, ext="reptile", title="Meta-Learning", is_table=True),
        row(2, REPTILE_PROSE, ext="reptile", title="Meta-Learning", document_id=11),
    )
    assert out.reason == "ok" and "moves the initialization towards the trained weights" in out.text


def test_a_sentence_from_another_document_than_the_one_the_question_names_is_not_cited():
    # the other paper's sentence has the question's words and a number, but not "Reptile"
    out, src = answer(
        "What 5-shot 5-way accuracy does Reptile reach on Mini-ImageNet?",
        row(1, OTHER_PROSE, ext="other", title="Tokenizer-free models", document_id=21),
        row(2, FEWSHOT, ext="reptile", title="Meta-Learning", is_table=True, document_id=22),
    )
    assert "71.5" not in out.text and checks.citation_numbers(out.text) == [2]


def test_abstains_when_no_source_names_the_thing_the_question_names():
    out, _ = answer(
        "What 5-shot 5-way accuracy does Reptile reach on CIFAR-FS?",
        row(1, FEWSHOT, ext="reptile", title="Meta-Learning", is_table=True),
    )
    assert out.abstained and '"CIFAR-FS"' in out.text and checks.is_abstention(out.text)


def test_abstains_when_the_size_the_question_gives_is_not_in_the_evidence():
    out, _ = answer(
        "What zero-shot LAMBADA perplexity does the 30B-parameter RWKV-4 model achieve?",
        row(1, ZEROSHOT, ext="rwkv", title="RWKV", is_table=True),
    )
    assert out.abstained and not checks.numbers_in(out.text)


def test_a_definition_question_gets_the_defining_sentence():
    out, _ = answer("How is model FLOPs utilization (MFU) defined?", row(1, MFU, ext="palm", title="PaLM"))
    assert out.text.startswith("This is the ratio of the observed throughput"), out.text


def test_reference_markers_in_a_quote_do_not_become_citations():
    text = "Surprisingly, and in contrast to previous work [1], only 6 simulations per move were enough for Pacman."
    out, src = answer(
        "How many simulations per move were enough for Pacman?",
        row(1, "Intro text about planning.", ext="a", title="A", document_id=31),
        row(2, text, ext="b", title="B", document_id=31),
    )
    assert checks.citation_numbers(out.text) == [2] and "[1]" not in out.text


def test_answer_question_reports_supports_in_its_checks():
    src_rows = [row(1, FEWSHOT, ext="reptile", title="Meta-Learning", is_table=True)]
    res = answer_question(
        "What 5-shot 5-way accuracy does Reptile with transduction reach?",
        src_rows,
        options=parse_options({"answerer": "extractive"}),
        template=prompts.default_template("answer"),
        intents=prompts.default_intents(),
    )
    assert res["checks"]["supports_ok"] and res["checks"]["claims"] == 1 and "65.99" in res["answer"]


def test_a_cell_answer_leads_with_the_cell_and_its_short_answer_is_the_value():
    # the sentence model, trained on prose, used to lead with the caption ("Table 1:
    # Few-shot results on Mini-ImageNet.") and call that the short answer
    res = answer_question(
        "Few-shot results on Mini-ImageNet: what is the accuracy 5-shot 5-way of Reptile?",
        [row(1, FEWSHOT, ext="reptile", title="Meta-Learning", is_table=True)],
        options=parse_options({"answerer": "extractive"}),
        template=prompts.default_template("answer"),
        intents=prompts.default_intents(),
    )
    assert res["answer"] == "Algorithm: Reptile; accuracy / 5-shot 5-way: 62.74 ± 0.37% [1]"
    assert res["short_answer"] == "62.74 ± 0.37%" and res["evidence"]["reason"] == "table cell"
    assert res["confidence"] == res["evidence"]["coverage"] > answer_forms.LOW_CONFIDENCE


def test_a_yes_no_question_about_a_cell_is_answered_yes_or_no_with_the_cell_as_support():
    # the cell path used to answer "is X above 60%?" with the bare value as its verdict
    q = "In the few-shot results on Mini-ImageNet, is the accuracy 5-shot 5-way of Reptile above 60%?"
    assert answer_forms.question_type(q) == "yes_no"
    res = answer_question(
        q,
        [row(1, FEWSHOT, ext="reptile", title="Meta-Learning", is_table=True)],
        options=parse_options({"answerer": "extractive"}),
        template=prompts.default_template("answer"),
        intents=prompts.default_intents(),
    )
    assert res["answer_type"] == "yes_no" and res["short_answer"] in ("Yes", "No"), res["short_answer"]
    assert "62.74" in res["answer"] and res["checks"]["supports_ok"]


PAI = (
    "Table 7: Paired associative inference, length 3.\n"
    "Trial Type | MEMO | UT | PonderNet\n"
    "A-B | 99.82(0.30) | 97.43 | 98.01(2.39)\n"
    "B-C | 99.76(0.38) | 98.28 | 97.43(1.97)"
)
ATARI = (
    "Table S1: Evaluation of MuZero in Atari with 30 random no-op starts.\n"
    "Game | Random | Human | MuZero | MuZero normalized\n"
    "ms pacman | 307.30 | 6,951.60 | 243,401.10 | 3,658.7 %\n"
    "pong | -20.70 | 14.60 | 21.00 | 118.3 %"
)


def test_a_row_named_by_a_code_and_a_column_named_after_the_subject():
    out, _ = answer(
        "What score does PonderNet reach on A-B trials?", row(1, PAI, ext="ponder", title="PonderNet", is_table=True)
    )
    assert "98.01(2.39)" in out.text and "99.82" not in out.text
    out, _ = answer(
        "What score does MuZero obtain on Ms. Pacman with 30 random no-op starts?",
        row(1, ATARI, ext="muzero", title="MuZero", is_table=True),
    )
    assert "MuZero: 243,401.10" in out.text and "307.30" not in out.text


def test_a_caption_does_not_outrank_the_cell_it_describes():
    caption_prose = (
        "Table 7: MEMO, UT and PonderNet on paired associative inference trials of length 3, "
        "the score on each trial type."
    )
    out, _ = answer(
        "What score does PonderNet reach on A-B trials?",
        row(1, caption_prose, ext="ponder", title="PonderNet", document_id=41),
        row(2, PAI, ext="ponder", title="PonderNet", is_table=True, document_id=41),
    )
    assert "98.01" in out.text


def test_a_header_with_names_like_a_at_20_is_not_a_data_row():
    t = checks.parse_table("System | Constr. | A@20 | A@100\nSEAL | yes | 47.3 | 75.2")
    # the header is not a row; "yes" (no number) is a second label column
    assert [r["label"] for r in t["rows"]] == ["SEAL yes"] and t["columns"][2] == "A@20"


def test_a_sentence_pointing_back_brings_the_sentence_it_points_to():
    text = (
        "Two changes matter most: squaring ReLU activations and adding depthwise convolutions after "
        "each projection. We call the model with just these two changes Primer-EZ."
    )
    out, _ = answer("Which two changes make up Primer-EZ?", row(1, text, ext="primer", title="Primer"))
    assert out.text.startswith("Two changes matter most: squaring ReLU") and "Primer-EZ. [1]" in out.text


def test_a_figure_given_by_this_is_read_with_the_sentence_it_continues():
    text = (
        "The forum threads were flattened by keeping the longest reply chain of every thread. "
        "This reduced the forum corpus by about 41%. The remaining corpora were used as released."
    )
    q = "By roughly what percentage did keeping the longest reply chain reduce the forum data?"
    out, src = answer(q, row(1, text, ext="lm", title="Data"))
    assert not out.abstained and "41%" in out.text, out.text
    assert out.text.startswith("The forum threads were flattened") and checks.run_checks(out.text, src)["supports_ok"]
    # without the figure question the continuation is not pulled in
    plain, _ = answer("How were the forum threads flattened?", row(1, text, ext="lm", title="Data"))
    assert "41%" not in plain.text


def test_a_count_written_out_before_what_it_counts_is_a_figure():
    text = (
        "Each configuration of the meta-learner was trained on the full task distribution. "
        "Every experiment was repeated with three different random seeds to compute confidence intervals."
    )
    out, _ = answer("How many random seeds was each experiment repeated with?", row(1, text, ext="meta", title="Meta"))
    assert not out.abstained and "three different random seeds" in out.text, out.text
    # "the three tasks", "a two step system", "two-level" count nothing new: no figure
    for said in ("We treat the three tasks alike in each run.", "We build a two step system of two-level cells."):
        weak, _ = answer("How many seeds were used in each run?", row(1, said, ext="x", title="X"))
        assert weak.abstained, weak.text


def test_words_that_frame_a_question_are_not_asked_for():
    text = "The recurrent model struggles with fine details over long contexts because of its single state vector."
    src = row(1, text, ext="rnn", title="Limitations")
    q = "According to the acronym, what is the recurrent model meant to struggle with?"
    # the words no document in scope holds, as the database finds them (answer/indb.py)
    out = extractive_answer(q, sources(src), quantity=False, unknown_words=["According", "acronym", "meant"])
    assert not out.abstained, out.text


def test_a_sentence_ending_in_a_colon_brings_the_list_it_opens():
    text = (
        "We compare the searched model against three Transformer variants:\n\n"
        "- Vanilla Transformer with ReLU activations\n- Transformer with GELU activations\n\n"
        "All models share the same tokenizer."
    )
    out, _ = answer(
        "Which Transformer variants is the searched model compared against?", row(1, text, ext="s", title="S")
    )
    assert "three Transformer variants:" in out.text and "Vanilla Transformer" in out.text, out.text


def test_asked_why_the_reason_before_a_for_this_reason_is_quoted():
    text = (
        "The gating scalars are tied to one sequence length and cannot serve inputs of other lengths. "
        "For this reason we leave the gating out of the final model. The final model trains faster."
    )
    out, _ = answer("Why is the gating left out of the final model?", row(1, text, ext="gate", title="Search"))
    assert "cannot serve inputs of other lengths" in out.text, out.text


def test_asked_why_a_sentence_giving_a_reason_wins():
    text = (
        "The model reads the past sixteen frames of the screen and the actions taken so far. "
        "The model reads past actions with the frames because an action often leaves no visible trace."
    )
    out, _ = answer(
        "Why does the model read the past actions and not only the frames?", row(1, text, ext="rl", title="RL")
    )
    assert out.text.startswith("The model reads past actions with the frames because"), out.text


def test_what_a_thing_does_in_the_present_defines_it_but_its_score_does_not():
    text = (
        "Planner Replay achieved 731% median normalised score on the suite. "
        "Planner Replay revisits its past time-steps and repeats its search with the latest parameters."
    )
    out, _ = answer("What is Planner Replay?", row(1, text, ext="rl", title="RL"))
    assert out.text.startswith("Planner Replay revisits"), out.text


def test_a_question_naming_two_things_with_a_slash_names_each():
    text = "Reptile and FOMAML both degrade when the inner batches overlap, at four or more steps."
    out, _ = answer(
        "In the Reptile/FOMAML overlap study, when do they degrade?", row(1, text, ext="meta", title="Meta")
    )
    assert not out.abstained, out.text


def test_a_column_named_by_initials_and_a_row_by_a_size():
    table = (
        "Table 1: Model architecture details.\n"
        "Model | #L | #H | d model | LR | Batch\n"
        "13B | 40 | 40 | 5120 | 1.0e-4 | 4M\n"
        "30B | 48 | 56 | 7168 | 1.0e-4 | 4M\n"
        "175B | 96 | 96 | 12288 | 1.2e-4 | 2M"
    )
    out, _ = answer("What learning rate does the 175B model use?", row(1, table, ext="opt", title="OPT", is_table=True))
    assert out.text == "Model: 175B; LR: 1.2e-4 [1]"
    out, _ = answer(
        "What model dimension does the 30B model use?", row(1, table, ext="opt", title="OPT", is_table=True)
    )
    assert "7168" in out.text and "12288" not in out.text


SETTINGS = (
    "Table 5: Hyper-parameters for the transfer experiments. All outer step sizes were annealed to zero.\n"
    "Parameter | Value\n"
    "Inner learning rate | 0.003\n"
    "Inner batch size | 25\n"
    "Outer step size | 0.25\n"
    "Outer iterations | 40K"
)


def test_a_table_caption_is_evidence_its_rows_are_read_in_its_light():
    # "transfer experiments" is only in the caption: it names the table, so the answer
    # comes from the table instead of an abstention that no source mentions it
    out, _ = answer(
        "In the transfer experiments, what is the value of the outer step size?",
        row(1, SETTINGS, ext="reptile", title="Meta-Learning", is_table=True),
    )
    assert not out.abstained and "0.25" in out.text and "40K" not in out.text


def test_a_question_in_the_captions_words_is_answered_from_the_rows_under_it():
    # the caption shares the rows' block: the old reading dropped it, then abstained
    # saying no source mentions "Enwik8", which the table's own caption does
    table = (
        "Table 5: Enwik8 results, measured in bits per character (bpc): the lower the better.\n"
        "Method | Train bpc | Test bpc\n"
        "Transformer | 0.977 | 1.137\n"
        "Reformer | 1.040 | 1.195\n"
        "RWKV-RNN | 0.720 | -"
    )
    prose = "We compare RWKV with efficient transformers. The training curves are shown in Figure 3 for every method."
    out, _ = answer(
        "How did Reformer do on Enwik8, in test bits per character?",
        row(1, table, ext="rwkv", title="RWKV", is_table=True, document_id=5),
        row(2, prose, ext="rwkv", title="RWKV", document_id=5),
    )
    assert not out.abstained and "Test bpc: 1.195" in out.text


def test_what_is_the_attribute_of_a_row_names_its_column():
    from scirag_helpers.answer.question import asked_attribute

    assert asked_attribute("What is the learning rate of the 175B model?") == ["learn", "rate"]
    # a bare "what is X?" asks for a definition, not an attribute
    assert asked_attribute("What is MFU?") == []
    out, _ = answer(
        "What is the Value of Inner batch size?", row(1, SETTINGS, ext="reptile", title="Meta-Learning", is_table=True)
    )
    assert out.reason == "table cell" and out.text == "Parameter: Inner batch size; Value: 25 [1]"


def test_a_value_with_its_magnitude_is_a_cell_value():
    out, _ = answer(
        "What is the value of outer iterations in the transfer experiments?",
        row(1, SETTINGS, ext="reptile", title="Meta-Learning", is_table=True),
    )
    assert out.text == "Parameter: Outer iterations; Value: 40K [1]"


def test_a_row_label_in_another_order_is_another_row():
    table = (
        "Table 13: Translation BLEU scores.\n"
        "Src Tgt | 0-shot | 1-shot\n"
        "en de | 31.8 | 26.2\n"
        "de en | 43.8 | 43.9\n"
        "en fr | 37.5 | 37.2"
    )
    out, _ = answer("What is the 1-shot BLEU score of de en?", row(1, table, ext="palm", title="PaLM", is_table=True))
    assert "43.9" in out.text and "26.2" not in out.text


def test_a_setting_named_like_20_way_heads_its_column():
    t = checks.parse_table("Parameter | 5-way | 20-way\nAdam learning rate | 0.001 | 0.0005\nInner iterations | 5 | 10")
    assert t["columns"] == ["Parameter", "5-way", "20-way"] and len(t["rows"]) == 2
    assert checks.row_columns(t, t["rows"][0])[1] == ("20-way", "0.0005")


def test_a_table_of_words_is_read_row_by_row():
    table = (
        "Table 1: Complexity comparison with different Transformers.\n"
        "Method | Time Complexity | Space Complexity\n"
        "Transformer | O(T2d) | O(T2 + Td)\n"
        "Reformer | O(T log Td) | O(T log T + Td)\n"
        "RWKV | O(Td) | O(d)"
    )
    t = checks.parse_table(table)
    assert [r["label"] for r in t["rows"]] == ["Transformer", "Reformer", "RWKV"]
    assert checks.row_columns(t, t["rows"][1])[0] == ("Time Complexity", "O(T log Td)")
    out, _ = answer("What is the time complexity of Reformer?", row(1, table, ext="rwkv", title="RWKV", is_table=True))
    assert "O(T log Td)" in out.text and "O(T2d)" not in out.text
    # formulas and prose with a bar in them are not tables of words
    formulas = "$$p(y | x)$$ (Eq. 1)\n$$p(x | y)$$ (Eq. 2)\n$$-\\log p(y | x)$$ (Eq. 3)"
    assert checks.parse_table(formulas) is None
    prose = (
        "The annotators read each conditional distribution p(y | x) over the candidate labels first,\n"
        "then they compare it with the prior distribution p(y | z) that the baseline model assigns,\n"
        "and finally they report the divergence between p(y | x) and p(y | z) for every example."
    )
    assert checks.parse_table(prose) is None
    # a words line over value rows is still read as a header line, as before
    mixed = checks.parse_table(
        "Total size = 780 billion | tokens\nData source | Proportion of data\nBooks (English) | 13%"
    )
    assert len(mixed["rows"]) == 1 and mixed["columns"][1].endswith("Proportion of data")


def test_a_column_the_question_asks_for_beats_a_column_named_after_its_subject():
    atari = (
        "Table S2: Evaluation of MuZero in Atari for individual games from human start.\n"
        "Game | Human | Ape-X [18] | R2D2 [21] | MuZero\n"
        "star gunner | 10,250.00 | 432,958.00 | 506,327.00 | 539,342.70\n"
        "qbert | 13,455.00 | 302,391.30 | 408,850.00 | 72,276.00"
    )
    out, _ = answer(
        "What R2D2 score does qbert reach in the evaluation of MuZero in Atari from human start?",
        row(1, atari, ext="muzero", title="MuZero", is_table=True),
    )
    assert "408,850.00" in out.text and "72,276.00" not in out.text
    # the label's reference marker is the paper's, not a citation of a source 21
    assert "[21]" not in out.text and out.text.endswith("[1]")


def test_a_summary_row_is_named_by_a_stop_word():
    crows = (
        "Table 4: CrowS-Pairs evaluation. Lower is better for all categories.\n"
        "Category | GPT-3 | OPT-175B\n"
        "Gender | 62.6 | 65.7\n"
        "Religion | 73.3 | 68.6\n"
        "Overall | 67.2 | 69.5"
    )
    out, _ = answer(
        "What overall CrowS-Pairs score does OPT-175B reach?", row(1, crows, ext="opt", title="OPT", is_table=True)
    )
    assert out.reason == "table cell" and "69.5" in out.text and "65.7" not in out.text


def test_a_possessive_question_names_the_column_and_a_row_of_words_is_a_row():
    from scirag_helpers.answer.question import asked_attribute

    assert asked_attribute("What is PaLM's accuracy on GSM8K?") == ["accura"]
    assert asked_attribute("What is the size of SEAL's FM-index?") == ["size"]
    settings = (
        "Table 3: Hyperparameters used for bAbI experiments.\n"
        "Parameter name | Value\n"
        "Optimizer algorithm | Adam\n"
        "Learning rate | 3e-4\n"
        "Transition function | MLP(1 Layer)\n"
        "Transition hidden size | 128"
    )
    t = checks.parse_table(settings)
    # the words rows are rows, not a second header line or labels of the rows under them
    assert t["columns"] == ["Parameter name", "Value"]
    assert [r["label"] for r in t["rows"]] == [
        "Optimizer algorithm",
        "Learning rate",
        "Transition function",
        "Transition hidden size",
    ]
    out, _ = answer(
        "What is the transition hidden size's Value in the bAbI experiments?",
        row(1, settings, ext="ponder", title="PonderNet", is_table=True),
    )
    assert out.text == "Parameter name: Transition hidden size; Value: 128 [1]"


def test_row_labels_that_differ_by_one_letter_are_different_rows():
    assert terms("ARC-c") != terms("ARC-e") and terms("GPT-J") == ["gptj"]
    table = (
        "Table 4: Results on reasoning tasks.\n"
        "Task | 0-shot Foo 8B | 0-shot Foo 540B | 1-shot Foo 8B | 1-shot Foo 540B\n"
        "ARC-e | 69.2 | 76.6 | 71.3 | 85.0\n"
        "ARC-c | 39.2 | 53.0 | 42.3 | 60.1"
    )
    out, _ = answer("What is the 1-shot Foo 540B of ARC-c?", row(1, table, ext="foo", title="Foo", is_table=True))
    assert out.short == "60.1", out.text
