"""Every relative link in README.md and docs/ leads to a file or folder of the checkout.

The README was cut down to a user's tour and its fine print moved to docs/ (issue 40); a page
moved or renamed later must not leave a link pointing nowhere. Links inside fenced code
blocks are examples, not links, and are skipped; so are URLs and in-page anchors.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]

# [text](target) and ![alt](target); the target stops at whitespace or ')'.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def relative_links(page: Path) -> list[tuple[int, str]]:
    """(line number, target) of each link outside code fences that is not a URL or anchor."""
    found: list[tuple[int, str]] = []
    in_fence = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        # inline code spans are literal text, not links
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                continue
            found.append((number, target))
    return found


def test_the_pages_have_links_to_check():
    # A regex that silently matched nothing would pass every page below.
    readme_links = dict(relative_links(REPO / "README.md"))
    assert "docs/index.md" in readme_links.values()
    assert len(relative_links(REPO / "docs" / "index.md")) >= 15


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path):
    broken = [f"{page.relative_to(REPO)}:{number}: {target}"
              for number, target in relative_links(page)
              if not (page.parent / target.split("#", 1)[0]).exists()]
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_docs_index_lists_every_page():
    index = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    unlisted = [p.name for p in (REPO / "docs").glob("*.md")
                if p.name != "index.md" and f"({p.name})" not in index]
    assert not unlisted, f"docs/index.md does not list {unlisted}"


def test_readme_stays_short():
    # Issue 40: a user's README of at most 300 lines; measurements go to docs/.
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


def readme_commands() -> list[str]:
    """Every `svgloo ...` command line in the README's code blocks (comments cut; a line of
    several commands side by side split at runs of spaces)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split(" #", 1)[0].strip()
            for part in re.split(r"\s{3,}|&&", line):
                part = part.strip()
                if part.startswith("svgloo "):
                    out.append(part)
    return out


def test_every_readme_command_is_one_svgloo_takes():
    import shlex

    from svgloo.cli import build_parser

    commands = readme_commands()
    assert len(commands) >= 15, commands
    for command in commands:
        # "[--reference drawing.png]" marks an option: take it as given
        argv = shlex.split(command.replace("[", "").replace("]", ""))[1:]
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:  # argparse's error exit: the README is out of date
            raise AssertionError(f"the README's `{command}` does not parse") from exc
