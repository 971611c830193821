"""Tokens of the ClassAd language.

``tokenize(text)`` turns source text into a list of ``Token``s ending with an
``END`` token. It knows the language's literals (integers, reals, strings with
C-style escapes, the keywords ``true``/``false``/``undefined``/``error``), the
``'quoted attribute'`` form, every operator (longest match first) and both
comment styles (``// …`` to the end of the line and ``/* … */``). Each token
remembers its offset and whether whitespace came before it, which the parser
needs to fold ``-1`` into a negative literal while ``- 1`` stays an operator.
"""

from __future__ import annotations

import enum
import re
from typing import Final

from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.values import INT64_MAX, INT64_MIN


class Kind(enum.Enum):
    INTEGER = "integer"
    REAL = "real"
    STRING = "string"
    NAME = "name"  # identifiers and 'quoted names'
    KEYWORD = "keyword"  # true false undefined error is isnt
    OP = "operator"
    END = "end of input"


# A token is a plain tuple (cheap to make): (kind, text, value, pos, spaced, quoted), where
# ``text`` is the operator or name as written, ``value`` the decoded literal or name, ``pos``
# its offset, ``spaced`` whether whitespace or a comment came right before it, and
# ``quoted`` whether it is a 'quoted' name.
Token = tuple[Kind, str, object, int, bool, bool]
KIND: Final = 0
TEXT: Final = 1
VALUE: Final = 2
POS: Final = 3
SPACED: Final = 4
QUOTED: Final = 5


KEYWORDS = {"true", "false", "undefined", "error", "is", "isnt"}

_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
    "\\": "\\", '"': '"', "'": "'", "?": "?",
}  # fmt: skip


def read_quoted(text: str, pos: int, quote: str) -> tuple[str, int]:
    """Decode the quoted text starting at ``text[pos] == quote``; return it and the end offset.

    HTCondor's strings are bytes: an octal escape stands for one byte, and the bytes of
    the result are read as UTF-8 (``"\\303\\251"`` is ``"é"``). Bytes that form no valid
    UTF-8 are kept as lone surrogates (Python's ``surrogateescape``), so printing gives
    them back unchanged.
    """
    out: list[str] = []
    raw = False
    i = pos + 1
    n = len(text)
    while True:
        j = i
        while j < n and text[j] != quote and text[j] != "\\":
            j += 1
        out.append(text[i:j])
        if j >= n:
            what = "string" if quote == '"' else "quoted attribute name"
            raise ClassAdParseError(f"unterminated {what}", text, pos)
        if text[j] == quote:
            value = "".join(out)
            if raw:
                value = value.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
            return value, j + 1
        # a backslash escape
        if j + 1 >= n:
            raise ClassAdParseError("unterminated string", text, pos)
        c = text[j + 1]
        if c in "01234567":
            k = j + 1
            limit = j + (4 if c in "0123" else 3)
            while k < n and k < limit and text[k] in "01234567":
                k += 1
            code = int(text[j + 1 : k], 8)
            if code == 0:
                raise ClassAdParseError("a string may not contain a NUL character", text, j)
            if code >= 0x80:  # one raw byte, combined with its neighbours at the end
                code += 0xDC00
                raw = True
            out.append(chr(code))
            i = k
        else:
            out.append(_ESCAPES.get(c, c))
            i = j + 2


def _number(text: str, pos: int, lexeme: str) -> Token:
    if "." in lexeme or "e" in lexeme or "E" in lexeme:
        try:
            value: object = float(lexeme)
        except ValueError:  # pragma: no cover - the pattern guarantees a float
            raise ClassAdParseError("malformed real literal", text, pos) from None
        return (Kind.REAL, lexeme, value, pos, False, False)
    if len(lexeme) > 1 and lexeme[0] == "0":
        raise ClassAdParseError("integer literals may not have leading zeros", text, pos)
    # The value may be one past INT64_MAX: only its negation is in range.
    return (Kind.INTEGER, lexeme, int(lexeme), pos, False, False)


# The alternatives are ordered by how often they occur; the operators keep longest first.
_TOKEN = re.compile(
    r"""
    (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<space>(?:\s+|//[^\n]*|/\*.*?\*/)+)
    |(?P<op>[()\[\]{},;]|\.\.|\.(?!\d)|>>>|=\?=|=!=|<<|>>|<=|>=|==|!=|&&|\|\||[-<>+*/%!~&|^?:=])
    |(?P<number>(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?)
    |(?P<string>"[^"\\]*(?:\\.[^"\\]*)*")
    |(?P<qname>'[^'\\]*(?:\\.[^'\\]*)*')
    """,
    re.S | re.X,
)
_NUMBER_TAIL = re.compile(r"[A-Za-z0-9_.]")


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens.

    The scanning runs in C (one compiled pattern); the loop only classifies each match.
    A match that does not start where the previous one ended means a character no token
    can start with, which ``_fail`` reports.
    """
    tokens: list[Token] = []
    append = tokens.append
    pos = 0
    spaced = False
    keywords = KEYWORDS
    op_kind, name_kind, keyword_kind = Kind.OP, Kind.NAME, Kind.KEYWORD
    for m in _TOKEN.finditer(text):
        start = m.start()
        if start != pos:
            _fail(text, pos)
        pos = m.end()
        kind = m.lastgroup
        if kind == "space":
            spaced = True
            continue
        lexeme = m.group()
        if kind == "op":
            if lexeme == "/" and text.startswith("/*", start):
                raise ClassAdParseError("unterminated comment", text, start)
            if lexeme == "..":  # HTCondor's lexer reads two dots as one selection
                lexeme = "."
            append((op_kind, lexeme, lexeme, start, spaced, False))
        elif kind == "name":
            append((keyword_kind if lexeme.lower() in keywords else name_kind, lexeme, lexeme, start, spaced, False))
        elif kind == "number":
            # a letter, digit or '_' may not follow a number, nor '.' an integer ("1.a");
            # a real may be followed by a selection ("1.5.a")
            if pos < len(text) and _NUMBER_TAIL.match(text, pos) and (
                text[pos] != "." or not ("." in lexeme or "e" in lexeme or "E" in lexeme)
            ):
                raise ClassAdParseError(f"malformed number {text[start:pos + 1]!r}", text, start)
            k, _, value, _, _, _ = _number(text, start, lexeme)
            append((k, lexeme, value, start, spaced, False))
        elif kind == "string":
            value = lexeme[1:-1] if "\\" not in lexeme else read_quoted(text, start, '"')[0]
            append((Kind.STRING, lexeme, value, start, spaced, False))
        else:  # a 'quoted' name
            value = lexeme[1:-1] if "\\" not in lexeme else read_quoted(text, start, "'")[0]
            append((name_kind, value, value, start, spaced, True))
        spaced = False
    if pos != len(text):
        _fail(text, pos)
    append((Kind.END, "", None, pos, spaced, False))
    return tokens


def _fail(text: str, pos: int) -> None:
    """Raise the error for the first character of ``text`` that starts no token.

    ``pos`` is only where the mismatch was noticed; the scan starts over from the beginning.
    """
    match = _TOKEN.match
    pos = 0
    while pos < len(text):
        m = match(text, pos)
        if m is None:
            _fail_at(text, pos)
            return
        pos = m.end()
    raise ClassAdParseError("unexpected end of input", text, pos)  # pragma: no cover


def _fail_at(text: str, pos: int) -> None:
    c = text[pos]
    if text.startswith("/*", pos):
        raise ClassAdParseError("unterminated comment", text, pos)
    if c == '"' or c == "'":
        read_quoted(text, pos, c)  # raises with the precise reason
    raise ClassAdParseError(f"unexpected character {c!r}", text, pos)


def negate_literal(tok: Token) -> object:
    """The value of ``-<literal>`` folded into one literal."""
    if tok[KIND] is Kind.INTEGER:
        v = -int(tok[TEXT])
        if v < INT64_MIN or v > INT64_MAX:
            return 0
        return v
    return -float(tok[TEXT])
