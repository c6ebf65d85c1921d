"""The Crossref client and the sparse record, on recorded responses (no network)."""

from __future__ import annotations

import copy
import email.utils
import json
import time
from pathlib import Path

import pytest

from scirag.crossref import CrossrefClient, RecordedSession, normalize_doi, partial_date, sparse_record

RECORDINGS = Path(__file__).parent / "recordings"


def recording(name: str) -> dict:
    return json.loads((RECORDINGS / name).read_text(encoding="utf-8"))


def message(name: str, path: str) -> dict:
    for it in recording(name)["interactions"]:
        if it["request"]["path"] == path:
            return copy.deepcopy(it["responses"][-1]["body"]["message"])
    raise KeyError(path)


class FakeTime:
    """A clock that only moves when the client sleeps, so waits are exact and instant."""

    def __init__(self):
        self.now, self.sleeps = 1000.0, []

    def sleep(self, s):
        self.sleeps.append(round(s, 3))
        self.now += s

    def clock(self):
        return self.now


def client(*names, **kw) -> tuple[CrossrefClient, RecordedSession, FakeTime]:
    session = RecordedSession.from_files([RECORDINGS / n for n in names])
    t = FakeTime()
    kw.setdefault("min_interval", 0.0)
    return CrossrefClient(session=session, sleep=t.sleep, clock=t.clock, **kw), session, t


# -- the record -------------------------------------------------------------------------


def test_journal_article_record_keeps_venue_date_count_and_licenses():
    rec = sparse_record(message("crossref_article.json", "/works/10.5555/scirag.demo.002"))
    assert rec["journal"] == "Journal of Agricultural Residue Science"
    assert rec["publisher"] == "Calder Basin Scientific Press"
    assert rec["type"] == "journal-article"
    assert rec["published"] == "2020-05"
    assert rec["is_referenced_by_count"] == 14
    assert rec["licenses"] == [
        "http://creativecommons.org/licenses/by/4.0/",
        "https://www.elsevier.com/tdm/userlicense/1.0/",
    ]
    assert rec["retracted"] is False and "retraction" not in rec
    # sparse: no author lists, abstracts or index dates
    assert not {"author", "indexed", "abstract", "updated_by"} & set(rec)


def test_retracted_article_is_retracted_with_its_notice():
    rec = sparse_record(message("crossref_retracted.json", "/works/10.5555/scirag.demo.008"))
    assert rec["retracted"] is True
    assert rec["retraction"]["doi"] == "10.5555/scirag.demo.908"
    assert rec["retraction"]["date"] == "2024-02-14"
    assert {u["source"] for u in rec["updated_by"]} == {"publisher", "retraction-watch"}


def test_retraction_found_through_the_notice_when_the_record_has_no_updated_by():
    msg = message("crossref_retracted.json", "/works/10.5555/scirag.demo.008")
    del msg["updated-by"]
    notice = message("crossref_retracted.json", "/works/10.5555/scirag.demo.908")
    assert sparse_record(msg)["retracted"] is False
    rec = sparse_record(msg, [notice])
    assert rec["retracted"] is True and rec["retraction"]["doi"] == "10.5555/scirag.demo.908"
    # a notice about another DOI proves nothing about this one
    other = copy.deepcopy(notice)
    other["update-to"][0]["DOI"] = "10.5555/somebody.else"
    assert sparse_record(msg, [other])["retracted"] is False


@pytest.mark.parametrize(
    "kind,retracted",
    [
        ("retraction", True),
        ("withdrawal", True),
        ("removal", True),
        ("correction", False),
        ("expression_of_concern", False),
        ("partial_retraction", False),
    ],
)
def test_only_retracting_update_types_retract(kind, retracted):
    msg = message("crossref_retracted.json", "/works/10.5555/scirag.demo.008")
    for u in msg["updated-by"]:
        u["type"] = kind
    assert sparse_record(msg)["retracted"] is retracted


def test_the_notice_itself_is_not_retracted_but_records_what_it_updates():
    rec = sparse_record(message("crossref_retracted.json", "/works/10.5555/scirag.demo.908"))
    assert rec["retracted"] is False
    assert rec["update_to"][0] == {
        "type": "retraction",
        "doi": "10.5555/scirag.demo.008",
        "source": "publisher",
        "label": "Retraction",
        "date": "2024-02-14",
    }


def test_references_keep_distinct_lower_case_dois_and_count_the_rest():
    rec = sparse_record(message("crossref_references.json", "/works/10.5555/scirag.demo.003"))
    assert rec["references"] == ["10.5555/scirag.demo.001", "10.5555/scirag.demo.002", "10.1016/j.biombioe.2011.01.001"]
    assert rec["references_without_doi"] == 1


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("10.5555/ABC.1", "10.5555/abc.1"),
        ("https://doi.org/10.1000/x", "10.1000/x"),
        ("doi:10.1000/x", "10.1000/x"),
        ("http://dx.doi.org/10.1000/x", "10.1000/x"),
        ("not a doi", None),
        ("", None),
        (None, None),
        ("10.12/short-registrant", None),
    ],
)
def test_normalize_doi(raw, expected):
    assert normalize_doi(raw) == expected


def test_partial_dates():
    assert partial_date({"date-parts": [[2021]]}) == "2021"
    assert partial_date({"date-parts": [[2021, 3, 9]]}) == "2021-03-09"
    assert partial_date({"date-parts": [[None]]}) is None
    assert partial_date(None) is None


# -- the client -------------------------------------------------------------------------


def test_ok_request_is_polite_and_bounded():
    c, session, _ = client("crossref_article.json", mailto="lab@example.org", timeout=(3.0, 20.0))
    got = c.work("https://doi.org/10.5555/SCIRAG.DEMO.002")
    assert got.status == "ok" and got.message["DOI"] == "10.5555/scirag.demo.002"
    call = session.calls[0]
    assert call["path"] == "/works/10.5555/scirag.demo.002"
    assert call["params"]["mailto"] == "lab@example.org"
    assert "mailto:lab@example.org" in call["headers"]["User-Agent"]
    assert call["timeout"] == (3.0, 20.0)


def test_404_is_not_found_not_an_error():
    c, _, _ = client("crossref_not_found.json")
    got = c.work("10.5555/scirag.demo.005")
    assert got.status == "not_found" and got.error is None


def test_429_waits_as_long_as_retry_after_says_then_succeeds():
    c, session, t = client("crossref_rate_limited.json", backoff=0.5)
    got = c.work("10.5555/scirag.demo.006")
    assert got.status == "ok" and got.attempts == 2
    assert t.sleeps == [3.0]  # Retry-After: 3, not the 0.5 s backoff
    assert len(session.calls) == 2
    assert c.min_interval == 0.2  # and from now on at most 5 per second, as the headers said


def test_retry_after_as_an_http_date():
    c, _, _ = client()
    when = email.utils.formatdate(time.time() + 7, usegmt=True)
    assert 5.0 <= c._retry_after(when, 0) <= 7.5
    assert c._retry_after("garbage", 2) == c.backoff * 4


def test_5xx_backs_off_exponentially_and_gives_up():
    rec = {
        "interactions": [
            {"request": {"path": "/works/10.5555/down"}, "responses": [{"status": 503, "headers": {}, "body": "busy"}]}
        ]
    }
    t = FakeTime()
    c = CrossrefClient(
        session=RecordedSession([rec]),
        sleep=t.sleep,
        clock=t.clock,
        min_interval=0.0,
        backoff=1.0,
        max_retries=3,
        max_wait=3.0,
    )
    got = c.work("10.5555/down")
    assert got.status == "error" and "gave up after 4 attempts" in got.error and "HTTP 503" in got.error
    assert t.sleeps == [1.0, 2.0, 3.0]  # doubling, capped by max_wait


def test_transport_errors_are_retried():
    rec = {
        "interactions": [
            {
                "request": {"path": "/works/10.5555/flaky"},
                "responses": [
                    {"raise": "connection reset"},
                    {
                        "status": 200,
                        "body": {"status": "ok", "message-type": "work", "message": {"DOI": "10.5555/flaky"}},
                    },
                ],
            }
        ]
    }
    t = FakeTime()
    c = CrossrefClient(session=RecordedSession([rec]), sleep=t.sleep, clock=t.clock, min_interval=0.0)
    assert c.work("10.5555/flaky").status == "ok"


def test_malformed_json_is_an_error_and_is_not_cached(tmp_path):
    c, session, _ = client("crossref_malformed.json", cache_dir=tmp_path)
    got = c.work("10.5555/scirag.demo.007")
    assert got.status == "error" and "not JSON" in got.error
    assert list(tmp_path.iterdir()) == []
    c.work("10.5555/scirag.demo.007")
    assert len(session.calls) == 2  # asked again: nothing was cached


def test_rate_limit_spaces_requests():
    c, _, t = client("crossref_article.json", "crossref_not_found.json", min_interval=0.25)
    for doi in ("10.5555/scirag.demo.002", "10.5555/scirag.demo.001", "10.5555/scirag.demo.005"):
        c.work(doi)
    assert t.sleeps == [0.25, 0.25]


def test_cache_answers_repeats_until_it_expires(tmp_path):
    c, session, _ = client("crossref_article.json", "crossref_not_found.json", cache_dir=tmp_path)
    first = c.work("10.5555/scirag.demo.002")
    again = c.work("10.5555/SCIRAG.DEMO.002")
    assert not first.cached and again.cached and again.message == first.message
    assert c.work("10.5555/scirag.demo.005").status == "not_found"
    assert c.work("10.5555/scirag.demo.005").cached  # a 404 is an answer too
    assert len(session.calls) == 2
    assert c.work("10.5555/scirag.demo.002", use_cache=False).cached is False
    c.cache_ttl = 0.0
    time.sleep(0.01)
    assert c.work("10.5555/scirag.demo.002").cached is False
    assert len(session.calls) == 4


def test_notices_come_from_the_updates_filter():
    c, session, _ = client("crossref_retracted.json")
    items = c.notices("10.5555/scirag.demo.008")
    assert [i["DOI"] for i in items] == ["10.5555/scirag.demo.908"]
    assert session.calls[0]["params"]["filter"] == "updates:10.5555/scirag.demo.008"
    assert c.notices("10.5555/nothing.updates.this") == []


def test_configuration_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SCIRAG_CROSSREF_MAILTO", "me@example.org")
    monkeypatch.setenv("SCIRAG_CROSSREF_RATE", "2")
    monkeypatch.setenv("SCIRAG_CROSSREF_CACHE", str(tmp_path))
    monkeypatch.setenv("SCIRAG_CROSSREF_TIMEOUT", "12")
    c = CrossrefClient.from_env()
    assert (c.mailto, c.min_interval, c.cache_dir, c.timeout) == ("me@example.org", 0.5, tmp_path, (5.0, 12.0))
    monkeypatch.setenv("SCIRAG_CROSSREF_RATE", "0")
    with pytest.raises(ValueError, match="SCIRAG_CROSSREF_RATE"):
        CrossrefClient.from_env()


def search_session(items) -> RecordedSession:
    return RecordedSession(
        [
            {
                "interactions": [
                    {
                        "request": {"path": "/works"},
                        "responses": [
                            {
                                "status": 200,
                                "body": {
                                    "status": "ok",
                                    "message-type": "work-list",
                                    "message": {"total-results": len(items), "items": items},
                                },
                            }
                        ],
                    }
                ]
            }
        ]
    )


SEARCH_ITEMS = [
    {
        "DOI": "10.5555/other",
        "title": ["Straw removal and soil carbon: a global meta-analysis"],
        "issued": {"date-parts": [[2021]]},
    },
    {
        "DOI": "10.5555/SOC.BRANNOCK",
        "title": ["Straw removal and soil organic carbon - ten years at the Brannock research farm"],
        "issued": {"date-parts": [[2021, 4]]},
    },
]


def test_search_by_title_accepts_only_a_close_match_in_the_same_year():
    session = search_session(SEARCH_ITEMS)
    c = CrossrefClient(session=session, min_interval=0.0)
    title = "Straw Removal and Soil Organic Carbon: Ten Years at the Brannock Research Farm"
    got = c.search(title, "Teodora Vlasic", 2021)
    assert got.status == "ok" and got.doi == "10.5555/soc.brannock"
    params = session.calls[0]["params"]
    assert params["query.bibliographic"] == title and params["query.author"] == "Vlasic"
    assert c.search(title, "Teodora Vlasic", 2019).status == "not_found"  # the years disagree
    assert c.search("Straw removal and soil carbon", None, None).status == "not_found"  # not close enough
    assert c.search("   ", None, None).status == "error"
