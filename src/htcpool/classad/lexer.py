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
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class Token:
    kind: Kind
    text: str  # operator text, or the name / keyword as written
    value: object  # decoded literal value, or the name
    pos: int
    spaced: bool  # whitespace or a comment came right before
    quoted: bool = False  # a 'quoted' name


KEYWORDS = {"true", "false", "undefined", "error", "is", "isnt"}

_OPERATORS = sorted(
    [
        ">>>", "=?=", "=!=", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
        "<", ">", "+", "-", "*", "/", "%", "!", "~", "&", "|", "^", "?", ":",
        "(", ")", "[", "]", "{", "}", ",", ";", ".", "=",
    ],
    key=len,
    reverse=True,
)  # fmt: skip

_NUMBER = re.compile(r"(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(r"\s+")

_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
    "\\": "\\", '"': '"', "'": "'", "?": "?",
}  # fmt: skip


def _skip(text: str, pos: int) -> int:
    """Skip whitespace and comments; raise on an unterminated ``/*``."""
    n = len(text)
    while pos < n:
        c = text[pos]
        if c.isspace():
            m = _SPACE.match(text, pos)
            assert m is not None
            pos = m.end()
        elif text.startswith("//", pos):
            end = text.find("\n", pos)
            pos = n if end < 0 else end + 1
        elif text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            if end < 0:
                raise ClassAdParseError("unterminated comment", text, pos)
            pos = end + 2
        else:
            break
    return pos


def read_quoted(text: str, pos: int, quote: str) -> tuple[str, int]:
    """Decode the quoted text starting at ``text[pos] == quote``; return it and the end offset."""
    out: list[str] = []
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
            return "".join(out), j + 1
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
        return Token(Kind.REAL, lexeme, value, pos, False)
    if len(lexeme) > 1 and lexeme[0] == "0":
        raise ClassAdParseError("integer literals may not have leading zeros", text, pos)
    # The value may be one past INT64_MAX: only its negation is in range.
    return Token(Kind.INTEGER, lexeme, int(lexeme), pos, False)


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    n = len(text)
    pos = 0
    while True:
        start = pos
        pos = _skip(text, pos)
        spaced = pos > start
        if pos >= n:
            tokens.append(Token(Kind.END, "", None, pos, spaced))
            return tokens
        c = text[pos]
        if c.isdigit() or (c == "." and pos + 1 < n and text[pos + 1].isdigit()):
            m = _NUMBER.match(text, pos)
            assert m is not None
            lexeme = m.group()
            end = m.end()
            if end < n and (text[end].isalnum() or text[end] == "_" or text[end] == "."):
                raise ClassAdParseError(f"malformed number {text[pos:end + 1]!r}", text, pos)
            tok = _number(text, pos, lexeme)
            tokens.append(Token(tok.kind, tok.text, tok.value, pos, spaced))
            pos = end
            continue
        if c.isalpha() or c == "_":
            m = _NAME.match(text, pos)
            assert m is not None
            word = m.group()
            low = word.lower()
            kind = Kind.KEYWORD if low in KEYWORDS else Kind.NAME
            tokens.append(Token(kind, word, word, pos, spaced))
            pos = m.end()
            continue
        if c == '"':
            value, end = read_quoted(text, pos, '"')
            tokens.append(Token(Kind.STRING, text[pos:end], value, pos, spaced))
            pos = end
            continue
        if c == "'":
            value, end = read_quoted(text, pos, "'")
            tokens.append(Token(Kind.NAME, value, value, pos, spaced, quoted=True))
            pos = end
            continue
        for op in _OPERATORS:
            if text.startswith(op, pos):
                tokens.append(Token(Kind.OP, op, op, pos, spaced))
                pos += len(op)
                break
        else:
            raise ClassAdParseError(f"unexpected character {c!r}", text, pos)


def negate_literal(tok: Token) -> object:
    """The value of ``-<literal>`` folded into one literal."""
    if tok.kind is Kind.INTEGER:
        v = -int(tok.text)
        if v < INT64_MIN or v > INT64_MAX:
            return 0
        return v
    return -float(tok.text)
