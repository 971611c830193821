"""Tokens of the ClassAd language.

``tokenize(text)`` turns source text into a list of ``Token``s ending with an
``END`` token, and the list of the pieces of text they were read from. It knows
the language's literals (integers, reals, strings with C-style escapes, the
keywords ``true``/``false``/``undefined``/``error``), the ``'quoted attribute'``
form, every operator (longest match first) and both comment styles (``// …`` to
the end of the line and ``/* … */``).

Each piece (a "lexeme") is a token's text with the whitespace and comments before
it, so the pieces put together are the text. A token does not carry its offset:
``Lexemes`` works out where a token starts (for error messages), whether space
came before it (the parser folds ``-1`` into a negative literal while ``- 1``
stays an operator) and whether a name was 'quoted', when the parser asks.
"""

from __future__ import annotations

import enum
import itertools
import re
from typing import Any, Final

from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.values import INT64_MAX, INT64_MIN


class Kind(enum.Enum):
    INTEGER = "integer"
    # an integer written with a leading zero right after '-' ("-05", "-0x1f"): HTCondor
    # accepts it only as a negative literal, so the parser takes it nowhere else
    ZERO_LED = "integer with a leading zero"
    REAL = "real"
    STRING = "string"
    NAME = "name"  # identifiers and 'quoted names'
    KEYWORD = "keyword"  # true false undefined error is isnt
    OP = "operator"
    END = "end of input"


# A token is a plain tuple (cheap to make): (kind, text, value), where ``text`` is the
# operator or name as written (the decoded name when 'quoted') and ``value`` the decoded
# literal or name.
Token = tuple[Kind, str, Any]
KIND: Final = 0
TEXT: Final = 1
VALUE: Final = 2


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


# Every keyword in every mix of case, so classifying a name is one set lookup.
_KEYWORD_SPELLINGS = frozenset(
    "".join(chars) for word in KEYWORDS for chars in itertools.product(*({c, c.upper()} for c in word))
)
# What a lexeme may start with besides its token: whitespace (U+3000 is the last
# character Python counts as whitespace) or a comment ('/' is also an operator).
_SPACEY = frozenset(c for c in map(chr, range(0x3001)) if c.isspace()) | {"/"}
_NUMBER_TAIL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")

# One match per lexeme: the whitespace and comments before a token (atomic, so that a
# comment is never read again as operators), then the token; the space at the end of the
# text is a match of its own (``\Z``), followed by the empty match at the very end. The
# pattern has no groups, so ``findall`` returns plain strings, much cheaper than tuples of
# groups. Malformed input matches nothing, leaving a gap that ``_fail`` reports: a number
# may not run into a letter, digit or '_' (nor an integer into '.', nor have a leading
# zero), '/*' must close. The operators go longest first.
_TOKEN = re.compile(
    r"""
    (?>(?:\s+|//[^\n]*|/\*.*?\*/)*)
    (?:
     [A-Za-z_][A-Za-z0-9_]*
    |[()\[\]{},;]|\.\.|\.(?!\d)|>>>|=\?=|=!=|<<|>>|<=|>=|==|!=|&&|\|\||/(?!\*)|[-<>+*%!~&|^?:=]
    |(?:(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?![A-Za-z0-9_])
    |(?:0|[1-9][0-9]*)(?![A-Za-z0-9_.])
    |(?<=-)0(?:[0-7]+|[xX][0-9A-Fa-f]+)(?![A-Za-z0-9_.])
    |"[^"\\]*(?:\\.[^"\\]*)*"
    |'[^'\\]*(?:\\.[^'\\]*)*'
    |\Z
    )
    """,
    re.S | re.X,
)
_SPACE = re.compile(r"(?>(?:\s+|//[^\n]*|/\*.*?\*/)*)", re.S)
_NUMBER = re.compile(r"(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?")

# The token of each operator: tokens carry no offsets, so one tuple serves every occurrence.
# HTCondor's lexer reads two dots as one selection.
_OPERATORS: dict[str, Token] = {
    op: (Kind.OP, op, op)
    for op in "( ) [ ] { } , ; . >>> =?= =!= << >> <= >= == != && || / - < > + * % ! ~ & | ^ ? : =".split()
}
_OPERATORS[".."] = _OPERATORS["."]

# What a token's first character says it is.
_NAME, _OPERATOR, _DIGIT, _STRING, _QNAME, _DOT = range(6)
_FIRST = {chr(c): _OPERATOR for c in range(128)}
_FIRST.update({c: _NAME for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"})
_FIRST.update({c: _DIGIT for c in "0123456789"})
_FIRST.update({'"': _STRING, "'": _QNAME, ".": _DOT})


def tokenize(text: str) -> tuple[list[Token], list[str]]:
    """Split ``text`` into tokens; also return the lexemes they were read from (see ``Lexemes``).

    The scanning runs in C (``findall`` of one compiled pattern); the loop only classifies
    each lexeme by its token's first character. Characters no token can start with are
    skipped by ``findall``, so the lexemes then add up to less than the text, and
    ``_fail`` finds and reports the first such character.
    """
    tokens: list[Token] = []
    append = tokens.append
    keywords = _KEYWORD_SPELLINGS
    first = _FIRST
    spacey = _SPACEY
    operators = _OPERATORS
    name_kind, keyword_kind = Kind.NAME, Kind.KEYWORD
    integer_kind, real_kind, string_kind = Kind.INTEGER, Kind.REAL, Kind.STRING
    lexemes = _TOKEN.findall(text)
    lexemes.pop()  # the empty match at the end
    for lex in lexemes:
        c = lex[0]
        if c in spacey:  # whitespace or a comment before the token, or the operator '/'
            tok = lex.lstrip()
            if not tok or tok[0] == "/":
                tok = lex[_SPACE.match(lex).end() :]  # type: ignore[union-attr]
                if not tok:  # the space at the end of the text
                    break
            c = tok[0]
        else:
            tok = lex
        what = first[c]
        if what == _NAME:
            append((keyword_kind if tok in keywords else name_kind, tok, tok))
        elif what == _OPERATOR:
            append(operators[tok])
        elif what == _DOT and (tok == "." or tok == ".."):
            append(operators[tok])
        elif what == _DIGIT or what == _DOT:
            if tok.isdigit():
                # The value may be one past INT64_MAX: only its negation is in range.
                if c != "0" or len(tok) == 1:
                    append((integer_kind, tok, int(tok)))
                else:
                    append((Kind.ZERO_LED, tok, int(tok)))
            elif c == "0" and tok[1] in "xX":
                append((Kind.ZERO_LED, tok, 0))
            else:
                append((real_kind, tok, float(tok)))
        elif what == _STRING:
            value = tok[1:-1] if "\\" not in tok else _decode(text, lexemes, len(tokens), tok)
            append((string_kind, tok, value))
        else:  # a 'quoted' name
            value = tok[1:-1] if "\\" not in tok else _decode(text, lexemes, len(tokens), tok)
            append((name_kind, value, value))
    if sum(map(len, lexemes)) != len(text):  # characters no token starts with were skipped
        _fail(text)
    append((Kind.END, "", None))
    return tokens, lexemes


def _decode(text: str, lexemes: list[str], index: int, tok: str) -> str:
    """The value of the quoted token ``tok``, lexeme ``index`` of ``text``, with escapes."""
    try:
        return read_quoted(tok, 0, tok[0])[0]
    except ClassAdParseError as e:
        start = Lexemes(lexemes).offset(index)
        if _first_gap(text)[0] <= start:  # a character before this string starts no token
            _fail(text)
        raise ClassAdParseError(e.reason, text, start + e.pos) from None


class Lexemes:
    """The lexemes of a text, one per token (the END token's is the space at the end, if
    any), for what the tokens themselves leave out."""

    __slots__ = ("lexemes", "_offsets")

    def __init__(self, lexemes: list[str]) -> None:
        self.lexemes = lexemes
        self._offsets: list[int] | None = None

    def offset(self, index: int) -> int:
        """Where token ``index`` starts in the text."""
        offsets = self._offsets
        if offsets is None:
            offsets = self._offsets = list(itertools.accumulate(map(len, self.lexemes), initial=0))
        if index >= len(self.lexemes):
            return offsets[-1]
        return offsets[index] + _SPACE.match(self.lexemes[index]).end()  # type: ignore[union-attr]

    def spaced(self, index: int) -> bool:
        """Whether whitespace or a comment comes right before token ``index``."""
        if index >= len(self.lexemes):
            return False
        lex = self.lexemes[index]
        return lex[0] in _SPACEY and (lex[0] != "/" or lex[1:2] == "/" or lex[1:2] == "*")

    def quoted(self, index: int) -> bool:
        """Whether token ``index`` is a 'quoted' name (or other quoted token)."""
        return index < len(self.lexemes) and self.lexemes[index][-1] == "'"


def _fail(text: str) -> None:
    """Raise the error for the first character of ``text`` that starts no token."""
    stop, gap = _first_gap(text)
    if gap >= len(text):  # pragma: no cover - findall would have reached the end
        raise ClassAdParseError("unexpected end of input", text, gap)
    _fail_at(text, gap)


def _first_gap(text: str) -> tuple[int, int]:
    """Where reading ``text`` token by token stops, and the first character there (past
    any space) that starts no token; both are ``len(text)`` when every token reads."""
    match = _TOKEN.match
    pos = 0
    while True:
        m = match(text, pos)
        if m is None:
            return pos, _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if m.end() == len(text):
            return len(text), len(text)
        pos = m.end()


def _fail_at(text: str, pos: int) -> None:
    c = text[pos]
    if text.startswith("/*", pos):
        raise ClassAdParseError("unterminated comment", text, pos)
    if c == '"' or c == "'":
        read_quoted(text, pos, c)  # raises with the precise reason
    m = _NUMBER.match(text, pos)
    if m is not None:
        end = m.end()
        number = m.group()
        real = "." in number or "e" in number or "E" in number
        # a letter, digit or '_' may not follow a number, nor '.' an integer ("1.a");
        # a real may be followed by a selection ("1.5.a")
        if end < len(text) and text[end] in _NUMBER_TAIL and (text[end] != "." or not real):
            raise ClassAdParseError(f"malformed number {text[pos:end + 1]!r}", text, pos)
        if not real and len(number) > 1 and number[0] == "0":
            raise ClassAdParseError("integer literals may not have leading zeros", text, pos)
    raise ClassAdParseError(f"unexpected character {c!r}", text, pos)


def negate_literal(tok: Token) -> object:
    """The value of ``-<literal>`` folded into one literal.

    A zero-led integer is read the way HTCondor reads it, as decimal digits up to the
    first that is not one: ``-010`` is -10 and ``-0x1f`` is 0.
    """
    if tok[KIND] is Kind.INTEGER or tok[KIND] is Kind.ZERO_LED:
        v = -tok[VALUE]
        if v < INT64_MIN or v > INT64_MAX:
            return 0
        return v
    return -float(tok[TEXT])
