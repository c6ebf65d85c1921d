"""The offline HyDE probe (pseudo-relevance feedback) reads chunk bodies with the one
sentence splitter (scirag_helpers.text)."""

from scirag_helpers.hyde import prf_passage


def test_prf_passage_takes_the_best_sentences_of_the_hits_and_their_terms():
    hits = [
        "Rice straw holds 12.5 % lignin by mass. Farmers burn it in the field.\n\n"
        "A later paragraph: lignin of rice straw varies by cultivar and season.",
        "Oat hulls are a pellet feedstock with little ash content overall.",
    ]
    out = prf_passage("How much lignin does rice straw contain?", hits, {"lignin": 1, "straw": 2}, 10)
    assert out.startswith("How much lignin does rice straw contain? ")
    # sentences are split by the shared splitter, across paragraphs, without a prefix strip
    assert "Rice straw holds 12.5 % lignin by mass." in out
    assert "A later paragraph: lignin of rice straw varies by cultivar and season." in out
    assert "Farmers burn it" not in out  # shares no question term
    assert prf_passage("q?", [], {}, 1) == "q?"
