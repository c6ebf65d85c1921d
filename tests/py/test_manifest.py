"""scirag.ingest.manifest: one JSON object per line declaring identity and rights.

No database needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scirag.ingest.licenses import LICENSES
from scirag.ingest.manifest import Entry, ManifestError, parse_entry, read_manifest

from conftest import write_manifest

BASE = Path("/corpus")


def entry(obj, line_no=7) -> Entry:
    return parse_entry(json.dumps(obj), line_no, BASE)


def error(raw, line_no=7) -> str:
    if not isinstance(raw, str):
        raw = json.dumps(raw)
    with pytest.raises(ManifestError) as info:
        parse_entry(raw, line_no, BASE)
    return str(info.value)


# ---------------------------------------------------------------------------
# Good lines
# ---------------------------------------------------------------------------


def test_missing_license_is_unknown():
    e = entry({"id": "a", "text": "Some text about straw."})
    assert e.license == "unknown"


@pytest.mark.parametrize("value", [None, ""])
def test_null_or_empty_license_is_unknown(value):
    assert entry({"id": "a", "text": "x", "license": value}).license == "unknown"


@pytest.mark.parametrize("lic", LICENSES)
def test_every_license_class_is_accepted(lic):
    assert entry({"id": "a", "text": "x", "license": lic}).license == lic


def test_full_line_is_parsed_and_path_is_relative_to_the_manifest():
    e = entry(
        {
            "id": " doc-1 ",
            "path": "papers/a.md",
            "title": "  A Title ",
            "authors": ["X", "Y"],
            "year": 2021,
            "doi": "10.1/abc",
            "journal": "J",
            "source": "journal",
            "license": "public",
            "format": "markdown",
        },
        line_no=3,
    )
    assert e.line_no == 3
    assert e.id == "doc-1"  # stripped
    assert e.title == "A Title"
    assert e.path == BASE / "papers" / "a.md"
    assert e.text is None
    assert e.authors == ["X", "Y"]
    assert (e.year, e.doi, e.journal, e.source, e.license, e.fmt) == (
        2021,
        "10.1/abc",
        "J",
        "journal",
        "public",
        "markdown",
    )


def test_defaults_title_source_authors():
    e = entry({"id": "doc-2", "text": "Inline text."})
    assert e.title == "doc-2"
    assert e.source == "unspecified"
    assert e.authors == []
    assert e.path is None and e.text == "Inline text."
    assert e.year is None


def test_year_given_as_digit_string_becomes_int():
    assert entry({"id": "a", "text": "x", "year": "2019"}).year == 2019


def test_semicolon_separated_author_string_is_split():
    assert entry({"id": "a", "text": "x", "authors": "Ada Lovelace; Alan Turing ;"}).authors == [
        "Ada Lovelace",
        "Alan Turing",
    ]


# ---------------------------------------------------------------------------
# Bad lines: a ManifestError naming the line number and the field
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ['{"id": "a", "text": ', "not json at all", '{"id": "a",}'])
def test_invalid_json_names_line(raw):
    msg = error(raw, line_no=12)
    assert "line 12" in msg
    assert "JSON" in msg


@pytest.mark.parametrize("raw", ['["a", "b"]', '"just a string"', "42"])
def test_non_object_json_names_line(raw):
    msg = error(raw, line_no=4)
    assert "line 4" in msg
    assert "object" in msg


@pytest.mark.parametrize(
    "obj",
    [
        {"text": "x"},
        {"id": "", "text": "x"},
        {"id": "   ", "text": "x"},
        {"id": 17, "text": "x"},
        {"id": None, "text": "x"},
    ],
)
def test_missing_or_empty_id_names_line_and_field(obj):
    msg = error(obj, line_no=9)
    assert "line 9" in msg
    assert "'id'" in msg


@pytest.mark.parametrize(
    "obj",
    [
        {"id": "both", "path": "a.md", "text": "x"},
        {"id": "neither"},
        {"id": "neither-empty", "path": "", "text": ""},
    ],
)
def test_path_and_text_exactly_one(obj):
    msg = error(obj, line_no=5)
    assert "line 5" in msg
    assert "'path'" in msg and "'text'" in msg
    assert obj["id"] in msg


# "cc-by", "Public" and "PUBLIC" are accepted since issue 25 (any case; common names map)
@pytest.mark.parametrize("lic", ["cc-by-nd", "GPL-3.0", "open", "secret"])
def test_bad_license_class_names_line_field_and_value(lic):
    msg = error({"id": "doc", "text": "x", "license": lic}, line_no=21)
    assert "line 21" in msg
    assert "license" in msg
    assert lic in msg


@pytest.mark.parametrize("year", ["twenty", "2020a", 2020.5, "", " 2020", [2020]])
def test_bad_year_names_line_and_field(year):
    msg = error({"id": "doc", "text": "x", "year": year}, line_no=2)
    assert "line 2" in msg
    assert "year" in msg


@pytest.mark.parametrize("year", [True, "\u00b2\u00b3"])
def test_bug_year_bool_or_non_ascii_digits_is_manifest_error(year):
    """BUG (reported): manifest.parse_entry accepts ``"year": true`` (bool is an int: stored as
    year 1) and lets ``"year": "²³"`` through str.isdigit() into int(), which raises ValueError
    (not ManifestError) and stops the whole run."""
    msg = error({"id": "doc", "text": "x", "year": year}, line_no=2)
    assert "line 2" in msg and "year" in msg


@pytest.mark.parametrize(
    "obj",
    [
        {"id": "p", "path": 5},
        {"id": "p", "path": ["a.md"]},
        {"id": "t", "text": "x", "title": 5},
        {"id": "a", "text": "x", "authors": 5},
    ],
)
def test_bug_wrongly_typed_fields_are_manifest_errors(obj):
    """BUG (reported): a non-string 'path' or 'title' or a non-list 'authors' raises
    TypeError/AttributeError out of parse_entry; read_manifest only catches ManifestError,
    so one such line aborts the whole ingest run instead of becoming a failed report row."""
    msg = error(obj, line_no=8)
    assert "line 8" in msg


# ---------------------------------------------------------------------------
# read_manifest: errors are yielded, the run goes on
# ---------------------------------------------------------------------------


def test_read_manifest_yields_errors_without_stopping(tmp_path):
    manifest = write_manifest(
        tmp_path,
        [
            {"id": "one", "path": "one.md", "license": "public"},
            '{"id": "broken", ',
            "",
            "// a comment line",
            {"id": "three", "text": "Inline.", "license": "restricted"},
            {"id": "bad-license", "text": "x", "license": "mine"},
            {"title": "no id", "text": "x"},
            {"id": "last", "text": "Last one."},
        ],
    )
    items = list(read_manifest(manifest))
    assert [n for n, _ in items] == [1, 2, 5, 6, 7, 8]  # blank line 3 and comment line 4 skipped
    kinds = [type(x).__name__ for _, x in items]
    assert kinds == ["Entry", "ManifestError", "Entry", "ManifestError", "ManifestError", "Entry"]
    one, broken, three, bad_lic, no_id, last = (x for _, x in items)
    assert one.path == tmp_path / "one.md"
    assert "line 2" in str(broken)
    assert three.license == "restricted" and three.line_no == 5
    assert "line 6" in str(bad_lic) and "license" in str(bad_lic)
    assert "line 7" in str(no_id) and "'id'" in str(no_id)
    assert last.id == "last" and last.line_no == 8


def test_read_manifest_resolves_paths_against_its_own_folder(tmp_path):
    sub = tmp_path / "corpus"
    manifest = write_manifest(sub, [{"id": "x", "path": "docs/x.txt"}])
    ((_, e),) = list(read_manifest(manifest))
    assert e.path == sub / "docs" / "x.txt"


def test_demo_manifest_parses_cleanly():
    from conftest import DEMO_MANIFEST

    items = list(read_manifest(DEMO_MANIFEST))
    assert len(items) == 10
    assert all(isinstance(e, Entry) for _, e in items)
    by_id = {e.id: e for _, e in items}
    assert by_id["soc-retention"].license == "unknown"  # no license key in the manifest
    assert by_id["saccharification-memo"].license == "restricted"
    assert by_id["baling-moisture-note"].path is None and by_id["baling-moisture-note"].text
    for e in by_id.values():
        if e.path is not None:
            assert e.path.is_file(), e.path


def test_bug_read_manifest_survives_a_wrongly_typed_line(tmp_path):
    """BUG (reported): one line with a numeric 'path' makes read_manifest raise TypeError,
    so ingest_manifest (which lists the whole manifest first) crashes before storing anything."""
    manifest = write_manifest(
        tmp_path,
        [
            {"id": "good-1", "text": "First good document."},
            {"id": "bad-path", "path": 5},
            {"id": "good-2", "text": "Second good document."},
        ],
    )
    items = list(read_manifest(manifest))
    assert [type(x).__name__ for _, x in items] == ["Entry", "ManifestError", "Entry"]
    assert "line 2" in str(items[1][1])
