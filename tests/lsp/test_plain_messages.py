"""Messages a designer reads (issue 40): every diagnostic the editor shows, and every note
under a row of `svgloo score`'s table, is one line of at most MAX_MESSAGE characters that
names the element and says what to do; the proof's and the finding's numbers move to the
diagnostic's related information, the hover and the JSON (a finding's ``detail``).

Checked on real corpus files scored for real, each picked for what it exercises (below),
and on one corpus file with an invisible filtered element added (the proof cannot vouch
for filters, so it is "unverified").
"""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from svgloo.engine.wording.plain_words import MAX_MESSAGE, fit, named, unverified_why
from svgloo.engine.scoring.score import ScoreSettings, score_text
from svgloo.lsp.convert import DiagnosticOptions, LineIndex, document_diagnostics, hover_markdown

REPO = Path(__file__).resolve().parents[2]
URI = "file:///drawing.svg"

# An element that draws nothing (opacity 0) under a filter: no footprint, and a feature
# CairoSVG does not draw as browsers do, so its removal stays unverified.
FILTERED = ('<defs><filter id="soft"><feGaussianBlur stdDeviation="1"/></filter></defs>'
            '<rect id="veiled" x="4" y="4" width="8" height="8" opacity="0" '
            'filter="url(#soft)"/></svg>')

# name -> (file text, reference or None, diagnostic codes it must produce)
CASES = {
    # 23 mostly hidden, 15 invisible elements rolled up on the root; 4 single specks
    "noto-1f487": ("noto/emoji_u1f487_200d_2640.svg", None,
                   {"mostly_hidden", "invisible", "speck"}),
    # single invisible and mostly hidden elements, each on its own
    "oauth": ("logos/oauth.svg", None, {"mostly_hidden", "invisible"}),
    # two invisible subpaths of one path, and the filtered element added above
    "twemoji-1f5c2+filter": ("twemoji/1f5c2.svg", None, {"invisible", "unverified"}),
    # a stray rectangle against the clean drawing: harmful
    "billiards": ("examples/billiards-with-stray.svg", "examples/billiards.svg", {"harmful"}),
}


@pytest.fixture(scope="module")
def scored(corpus_dir, render_pool):
    out = {}
    for case, (name, reference, _) in CASES.items():
        path = REPO / name if name.startswith("examples/") else corpus_dir / name
        text = path.read_text(encoding="utf-8")
        if case.endswith("+filter"):
            text = text.replace("</svg>", FILTERED)
        settings = ScoreSettings(backbone="pixel",
                                 reference=str(REPO / reference) if reference else None)
        out[case] = (text, score_text(text, str(path), settings, pool=render_pool).result)
    return out


@pytest.mark.parametrize("case", CASES)
def test_each_diagnostic_is_one_short_line_and_keeps_its_detail(scored, case):
    text, result = scored[case]
    diags = document_diagnostics(result, None, LineIndex(text), DiagnosticOptions(), 1, URI)
    assert {str(d.code) for d in diags} >= CASES[case][2], [d.code for d in diags]
    for d in diags:
        assert len(d.message) <= MAX_MESSAGE and "\n" not in d.message, d.message
        # no proof jargon in what a designer reads first
        assert not any(word in d.message for word in ("/255", "CairoSVG", "resvg", "alpha")), \
            d.message
        # the long text is one click away: related information with more words than the
        # message (the numbers, the proof), never dropped
        assert d.related_information, d
        assert max(len(r.message) for r in d.related_information) > len(d.message) or \
            d.code in ("speck", "mostly_hidden"), d
    by_code = {str(d.code): d for d in diags}
    if "invisible" in by_code:
        assert "safe to remove" in by_code["invisible"].message
        proofs = " ".join(r.message for r in by_code["invisible"].related_information)
        assert "resvg" in proofs and "/255" in proofs
    if "unverified" in by_code:
        assert by_code["unverified"].message == \
            "rect#veiled: looks invisible, but it uses a filter: check before removing"
        assert "filter" in by_code["unverified"].related_information[0].message
    if "harmful" in by_code:
        assert by_code["harmful"].message.startswith("rect#stray: ")
        assert "delta -" in by_code["harmful"].related_information[0].message


@pytest.mark.parametrize("case", CASES)
def test_findings_keep_their_numbers_in_the_json_and_the_hover(scored, case):
    _, result = scored[case]
    findings = [(row, f) for row in result["units"] for f in row["findings"]]
    for row, f in findings:
        assert len(f["message"]) <= MAX_MESSAGE
        assert "threshold" in f["detail"] and any(ch.isdigit() for ch in f["detail"])
        assert f["detail"] in hover_markdown(row, None, result)


@pytest.mark.parametrize("case", CASES)
def test_the_tables_notes_are_short(scored, case):
    from svgloo.cli_score import print_table

    _, result = scored[case]
    out = io.StringIO()
    print_table(result, out)
    # the note lines under unit rows (units with no footprint the proof did not prove)
    notes = [line.strip() for line in out.getvalue().splitlines()
             if line.startswith("        ") and line.strip()]
    if case.endswith("+filter"):
        assert "looks invisible, but it uses a filter: check before removing" in notes
    assert all(len(note) <= MAX_MESSAGE for note in notes), notes


def test_long_names_are_cut_before_the_advice():
    name = "path#" + "very-long-generated-identifier-" * 5
    message = named(name, "no visible effect: safe to remove")
    assert len(message) <= MAX_MESSAGE
    assert message.endswith(": no visible effect: safe to remove")
    assert fit("word " * 40, 20) == "word word word word…"


@pytest.mark.parametrize("reason, words", [
    ("an SVG filter (filter: url(#f)), which CairoSVG draws differently", "it uses a filter"),
    ("it draws where CairoSVG's and resvg's pictures of the document differ (3 px by more "
     "than 12/255)", "renderers disagree around it"),
    ("the proof stopped before reaching it", "too many elements to check them all"),
    ("an external file (cat.png), which svgloo does not fetch; browsers show it",
     "it shows an external file"),
])
def test_unverified_reasons_in_a_few_words(reason, words):
    assert unverified_why(reason) == words
