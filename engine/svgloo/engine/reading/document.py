"""bytes -> Document: a safe lxml parse plus the exact source span of every element.

Spans are what the language server underlines and deletes, so they come from our own
scan of the original text (lxml only knows line numbers), cross-checked tag by tag
against lxml's element order.
"""

from __future__ import annotations

import bisect
import gzip
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from svgloo.engine.errors import InputError, LimitError
from svgloo.engine.reading.files import detect_encoding, read_regular_file
from svgloo.engine.limits import DEFAULT_LIMITS, ELEMENTS_HINT, FILE_HINT, Limits

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# libxml2 refuses elements nested deeper than this unless XML_PARSE_HUGE is on, which it
# never is here (the option also lifts the parser's guards on text size).
PARSER_MAX_DEPTH = 256
_PARSER_DEPTH_ERROR = re.compile(r"Excessive depth in document")
_TAG_NAME = re.compile(r"[^\s/>]+")
# The rest of a start tag up to its '>': quoted values may hold '>'. One character or one
# whole quoted value per step, so a tag with no end fails in linear time.
_TAG_REST = re.compile(r"""(?:[^>"']|"[^"]*"|'[^']*')*>""")


@dataclass(frozen=True)
class ElementSpan:
    """One element of the document in document order."""

    index: int          # position in document order (comments and PIs skipped)
    tag: str            # local name, e.g. "path"
    namespace: str | None
    start: int          # offset of "<tag" in the decoded text
    end: int            # offset just past the closing tag or "/>"
    start_tag_end: int  # offset just past the ">" of the start tag


@dataclass
class Document:
    """A parsed SVG document. ``text`` is the decoded source; offsets index into it."""

    name: str
    text: str
    root: etree._Element
    elements: list[ElementSpan]
    nodes: list[etree._Element]
    _line_starts: list[int] = field(repr=False, default_factory=list)
    _index_of: dict = field(repr=False, default_factory=dict)
    # What pure functions of the document computed about it, kept for their next call
    # (features.py's reasons: asked for by scoring, the proof and its reuse). Not an init
    # field, so ``dataclasses.replace`` starts a copy with none.
    memo: dict = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(self.text)]
        self._index_of = {node: i for i, node in enumerate(self.nodes)}

    def position(self, offset: int) -> tuple[int, int]:
        """0-based (line, character) of a text offset; characters are code points."""
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line, offset - self._line_starts[line]

    def offset(self, line: int, character: int) -> int:
        return self._line_starts[line] + character

    def index_of(self, node: etree._Element) -> int:
        return self._index_of[node]

    def span_text(self, index: int) -> str:
        el = self.elements[index]
        return self.text[el.start:el.end]


def read_svg_bytes(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Read a file with the size caps applied; a FIFO or device is refused, never waited
    on or read (engine/files.py)."""
    try:
        return read_regular_file(path, limits.max_file_bytes, str(path))
    except LimitError as exc:   # the one limit a large drawing hits first: say how to raise it
        raise LimitError(exc.file, f"{exc.message}; {FILE_HINT}") from None


def inflate_if_gzipped(data: bytes, name: str, limits: Limits = DEFAULT_LIMITS) -> bytes:
    if not data.startswith(b"\x1f\x8b"):
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            inflated = gz.read(limits.max_inflated_bytes + 1)
    except (OSError, EOFError) as exc:
        raise InputError(name, f"broken gzip (.svgz) data: {exc}") from None
    if len(inflated) > limits.max_inflated_bytes:
        raise LimitError(name, f"compressed file inflates past {limits.max_inflated_bytes} "
                               f"bytes; {FILE_HINT}")
    return inflated


def _decode(data: bytes, declared: str | None, name: str) -> str:
    """The document's text. A UTF-16/32 byte-order mark (or the byte pattern of a '<' in
    UTF-16 without one) decides the codec, as it did for the parser; otherwise the XML
    declaration's encoding does (lxml reports "UTF-8" for a BOM-only UTF-16 file, and a
    bare "UTF-16" leaves the byte order to guess)."""
    sniffed, bom = detect_encoding(data)
    if sniffed.startswith(("utf-16", "utf-32")):
        enc, data = sniffed, data[len(bom):]
    else:
        enc = (declared or "utf-8").lower()
    try:
        text = data.decode(enc)
    except (LookupError, UnicodeDecodeError) as exc:
        raise InputError(name, f"cannot decode text as {enc}: {exc}") from None
    return text[1:] if text.startswith("\ufeff") else text


_MAGIC = ((b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
          (b"GIF87a", "a GIF image"), (b"GIF89a", "a GIF image"), (b"%PDF-", "a PDF file"),
          (b"BM", "a BMP image"), (b"PK\x03\x04", "a ZIP archive"))


def _strip_position(msg: str) -> str:
    """lxml ends its messages with ", line L, column C": the error carries them already."""
    return re.sub(r",? line \d+, column \d+$", "", msg or "")


def binary_kind(raw: bytes) -> str | None:
    """What a non-text file is, from its first bytes (None when it may be text)."""
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "a WebP image"
    for magic, kind in _MAGIC:
        if raw.startswith(magic):
            return kind
    return None


_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def not_markup(raw: bytes) -> str | None:
    """Why bytes that XML refused are not SVG at all, in the user's words: "empty file"
    (nothing but whitespace) or "not SVG (looks like text)" (the first character is not
    '<'); None when they look like markup, and the parser's own message says more."""
    encoding = "utf-8"
    for bom, enc in _BOMS:
        if raw.startswith(bom):
            raw, encoding = raw[len(bom):], enc
            break
    head = raw[:4096].decode(encoding, errors="replace").lstrip()
    if not head:
        return "empty file"
    if not head.startswith("<"):
        return "not SVG (looks like text)"
    return None


def parse_document(data: bytes | str, name: str = "<input>",
                   limits: Limits = DEFAULT_LIMITS) -> Document:
    """Parse untrusted SVG bytes (or text). Raises InputError / LimitError, never lxml errors."""
    if isinstance(data, str):
        # Text from an editor: offsets index this very string, whatever the XML
        # declaration claims, so the parser is told the bytes are UTF-8.
        known_text: str | None
        known_text = data[1:] if data.startswith("\ufeff") else data
        raw = known_text.encode("utf-8")
    else:
        known_text = None
        raw = inflate_if_gzipped(data, name, limits)
    if len(raw) > limits.max_inflated_bytes:
        raise LimitError(name, f"document is larger than {limits.max_inflated_bytes} bytes; "
                               f"{FILE_HINT}")
    kind = binary_kind(raw)
    if kind:
        raise InputError(name, f"this is {kind}, not SVG")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False, remove_comments=False, remove_pis=False,
                             recover=False, encoding="utf-8" if known_text is not None else None)
    try:
        root = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        if _PARSER_DEPTH_ERROR.search(exc.msg or ""):
            # lxml's message tells the user to turn on XML_PARSE_HUGE, which no user can
            raise _nesting_error(name, limits) from None
        # lxml's position is (line, column), both 1-based, as its message says them
        why = not_markup(raw)
        if why:  # not malformed XML: no XML at all, and no position worth naming
            raise InputError(name, why) from None
        lxml_line, lxml_col = getattr(exc, "position", None) or (exc.lineno, exc.offset)
        line = (lxml_line - 1) if lxml_line else None
        col = (lxml_col - 1) if lxml_col else None
        raise InputError(name, f"malformed XML: {_strip_position(exc.msg)}", line=line,
                         column=col) from None
    except ValueError as exc:
        raise InputError(name, f"malformed XML: {exc}") from None
    if root is None:
        raise InputError(name, "empty document")
    if etree.QName(root).localname != "svg" or root.nsmap.get(root.prefix) not in (SVG_NS, None):
        raise InputError(name, f"not an SVG file: the root element is <{root.tag}>, not <svg>")
    tree = root.getroottree()
    text = known_text if known_text is not None else _decode(raw, tree.docinfo.encoding, name)
    # Looked for in the parsed DTD and in the decoded text, never in the raw bytes: a
    # UTF-16/32 file spells "<!ENTITY" with other bytes (and then reached CairoSVG's parser)
    dtd = tree.docinfo.internalDTD
    if dtd is not None and (any(True for _ in dtd.iterentities()) or "<!ENTITY" in text):
        raise InputError(name, "DTD entity declarations are not supported (they are refused "
                               "for safety); inline the entities and try again")
    nodes = [el for el in root.iter() if isinstance(el.tag, str)]
    if len(nodes) > limits.max_elements:
        raise LimitError(name, f"document has {len(nodes)} elements; the limit is "
                               f"{limits.max_elements}; {ELEMENTS_HINT}")
    if limits.max_nesting_depth < PARSER_MAX_DEPTH and nesting_depth(root) > \
            limits.max_nesting_depth:
        raise _nesting_error(name, limits)
    spans = scan_element_spans(text, name)
    if len(spans) != len(nodes):
        raise InputError(name, f"could not map elements to source positions "
                               f"({len(spans)} tags in the text, {len(nodes)} parsed)")
    elements = []
    for i, ((start, end, stag_end, qname), node) in enumerate(zip(spans, nodes)):
        qn = etree.QName(node)
        if qname.split(":")[-1] != qn.localname:
            raise InputError(name, f"source scan disagrees with the parser at element {i} "
                                   f"(<{qname}> vs <{qn.localname}>)")
        elements.append(ElementSpan(i, qn.localname, qn.namespace, start, end, stag_end))
    return Document(name=name, text=text, root=root, elements=elements, nodes=nodes)


def nesting_depth(root: etree._Element) -> int:
    """How deep elements nest below and including ``root`` (a lone root is 1)."""
    deepest, level = 0, {root: 1}
    for el in root.iter(etree.Element):  # elements only: comments are not a level
        if el is not root:
            level[el] = level[el.getparent()] + 1
        deepest = max(deepest, level[el])
    return deepest


def _nesting_error(name: str, limits: Limits) -> LimitError:
    limit = min(limits.max_nesting_depth, PARSER_MAX_DEPTH)
    return LimitError(name, f"elements nest more than {limit} levels deep (svgloo's nesting "
                            "limit); flatten some groups to analyse it")


def load_document(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> Document:
    return parse_document(read_svg_bytes(path, limits), str(path), limits)


def _skip_to(text: str, needle: str, start: int, name: str) -> int:
    pos = text.find(needle, start)
    if pos < 0:
        raise InputError(name, f"unterminated markup (missing {needle!r})")
    return pos + len(needle)


def _end_of_markup(text: str, pos: int, name: str, what: str, brackets: bool = False) -> int:
    """Offset just past the '>' that closes markup from ``pos``; quoted values may hold
    '>', and with ``brackets`` so may a DOCTYPE's [internal subset]."""
    depth = 0
    quote = None
    for i in range(pos, len(text)):
        c = text[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif brackets and c == "[":
            depth += 1
        elif brackets and c == "]":
            depth -= 1
        elif c == ">" and depth <= 0:
            return i + 1
    raise InputError(name, f"unterminated {what}")


def scan_element_spans(text: str, name: str = "<input>") -> list[tuple[int, int, int, str]]:
    """Scan well-formed XML text for elements; returns (start, end, start_tag_end, qname)
    in document order (the order of start tags)."""
    result: list[list] = []
    stack: list[int] = []
    i = 0
    while True:
        j = text.find("<", i)
        if j < 0:
            break
        if text.startswith("<!--", j):
            i = _skip_to(text, "-->", j + 4, name)
        elif text.startswith("<![CDATA[", j):
            i = _skip_to(text, "]]>", j + 9, name)
        elif text.startswith("<?", j):
            i = _skip_to(text, "?>", j + 2, name)
        elif text.startswith("<!", j):
            i = _end_of_markup(text, j + 2, name, "DOCTYPE", brackets=True)
        elif text.startswith("</", j):
            i = _skip_to(text, ">", j + 2, name)
            if not stack:
                raise InputError(name, "unbalanced end tag")
            result[stack.pop()][1] = i
        else:
            m = _TAG_NAME.match(text, j + 1)
            if not m:
                raise InputError(name, "bad start tag")
            rest = _TAG_REST.match(text, m.end())
            if rest is None:
                raise InputError(name, "unterminated start tag")
            end = rest.end()
            entry = [j, end, end, m.group(0)]
            if text[end - 2] == "/":
                result.append(entry)
            else:
                stack.append(len(result))
                result.append(entry)
            i = end
    if stack:
        raise InputError(name, "unclosed element")
    return [tuple(e) for e in result]
