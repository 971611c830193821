"""Parse ClassAd expressions and ads (new syntax) into node trees.

A Pratt parser: binary operators and their binding powers are one table
(``_BINARY``); unary operators, postfix selection/subscripts and the ternary
are handled around it. The grammar, from loosest to tightest binding:

    ? : (right-assoc)  ||  &&  |  ^  &  == != =?= =!= is isnt  < <= > >=
    << >> >>>  + -  * / %  unary - + ! ~  postfix . [ ] ?:  primary

As in HTCondor, the "elvis" operator ``a ?: b`` is a postfix operator binding
tighter than any other (``1 ?: 2 + 3`` is ``(1 ?: 2) + 3``, ``-x ?: 7`` is
``-(x ?: 7)``), and its right operand is a primary with its selections and
subscripts (``x ?: -y`` does not parse, ``x ?: -1`` does: ``-1`` is a literal).

``parse_expression`` caches results by source text (trees are immutable), so
parsing the same text again costs one dictionary lookup.

Nesting is limited the way HTCondor's parser limits it: every expression, every
unary-operator level and every postfix expression counts one level (so a
parenthesis costs three, a unary minus one), and input nested more than
``MAX_NESTING`` levels is refused with a ``ClassAdParseError``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.lexer import (
    KEYWORDS,
    KIND,
    POS,
    QUOTED,
    SPACED,
    TEXT,
    VALUE,
    Kind,
    Token,
    negate_literal,
    tokenize,
)
from htcpool.classad.nodes import (
    AdExpr,
    AttrRef,
    BinaryOp,
    FnCall,
    ListExpr,
    Literal,
    Node,
    Paren,
    Subscript,
    Ternary,
    UnaryOp,
)
from htcpool.classad.values import ERROR, INT64_MAX, UNDEFINED

# binding power of each binary operator (higher binds tighter)
_BINARY: dict[str, int] = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6, "!=": 6, "=?=": 6, "=!=": 6, "is": 6, "isnt": 6,
    "<": 7, "<=": 7, ">": 7, ">=": 7,
    "<<": 8, ">>": 8, ">>>": 8,
    "+": 9, "-": 9,
    "*": 10, "/": 10, "%": 10,
}  # fmt: skip
_CANONICAL = {"is": "=?=", "isnt": "=!="}
_UNARY = {"-", "+", "!", "~"}
MAX_NESTING = 500


class _Parser:
    __slots__ = ("text", "tokens", "i", "depth")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0

    # -- token helpers
    def peek(self) -> Token:
        return self.tokens[self.i]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def at_op(self, op: str) -> bool:
        tok = self.tokens[self.i]
        return tok[KIND] is Kind.OP and tok[TEXT] == op

    def expect_op(self, op: str, what: str) -> Token:
        tok = self.tokens[self.i]
        if tok[KIND] is not Kind.OP or tok[TEXT] != op:
            self.fail(f"expected {what}", tok)
        self.i += 1
        return tok

    def fail(self, message: str, tok: Token | None = None) -> None:
        tok = tok or self.peek()
        found = tok[KIND].value if tok[KIND] is Kind.END else repr(tok[TEXT])
        raise ClassAdParseError(f"{message}, found {found}", self.text, tok[POS])

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ClassAdParseError(
                f"expression nested too deeply (more than {MAX_NESTING} levels)", self.text, self.peek()[POS]
            )

    # -- grammar
    def expression(self) -> Node:
        self.enter()
        cond = self.binary(0)
        if self.at_op("?"):
            self.advance()
            then = self.expression()
            self.expect_op(":", "':' of a conditional expression")
            node: Node = Ternary(cond, then, self.expression())
        else:
            node = cond
        self.depth -= 1
        return node

    def binary(self, min_power: int) -> Node:
        left = self.unary()
        tokens = self.tokens
        while True:
            tok = tokens[self.i]
            if tok[KIND] is Kind.OP:
                op = tok[TEXT]
            elif tok[KIND] is Kind.KEYWORD and tok[TEXT].lower() in ("is", "isnt"):
                op = tok[TEXT].lower()
            else:
                return left
            power = _BINARY.get(op)
            if power is None or power <= min_power:
                return left
            self.i += 1
            right = self.binary(power)
            left = BinaryOp(_CANONICAL.get(op, op), left, right)

    def unary(self) -> Node:
        self.enter()
        tok = self.tokens[self.i]
        if tok[KIND] is Kind.OP and tok[TEXT] in _UNARY:
            self.i += 1
            nxt = self.tokens[self.i]
            if tok[TEXT] == "-" and nxt[KIND] in (Kind.INTEGER, Kind.REAL) and not nxt[SPACED]:
                # ``-1`` is one literal (so ``-1[0]`` subscripts -1); ``- 1`` stays an operator
                self.advance()
                node: Node = self.postfix(Literal(negate_literal(nxt)))
            else:
                node = UnaryOp(tok[TEXT], self.unary())
        else:
            node = self.postfix(None)
        self.depth -= 1
        return node

    def postfix(self, node: Node | None, elvis: bool = True) -> Node:
        """Selections, subscripts and ``?:`` after ``node`` (after a primary when None)."""
        self.enter()
        if node is None:
            node = self.primary()
        tokens = self.tokens
        while True:
            tok = tokens[self.i]
            t = tok[TEXT] if tok[KIND] is Kind.OP else ""
            if t == "?" and elvis and self._next_is_op(":"):
                self.i += 2
                node = Ternary(node, None, self.postfix(self._elvis_operand(), False))
            elif t == ".":
                self.i += 1
                name = self.advance()
                if name[KIND] is not Kind.NAME:
                    self.fail("expected an attribute name after '.'", name)
                node = AttrRef(str(name[VALUE]), node)
            elif t == "[":
                self.i += 1
                index = self.expression()
                self.expect_op("]", "']' closing a subscript")
                node = Subscript(node, index)
            else:
                self.depth -= 1
                return node

    def _next_is_op(self, op: str) -> bool:
        tok = self.tokens[self.i + 1]
        return tok[KIND] is Kind.OP and tok[TEXT] == op

    def _elvis_operand(self) -> Node:
        """The primary right of ``?:``; ``-1`` counts as one (it is a single literal)."""
        tok = self.peek()
        if tok[KIND] is Kind.OP and tok[TEXT] == "-":
            nxt = self.tokens[self.i + 1]
            if nxt[KIND] in (Kind.INTEGER, Kind.REAL) and not nxt[SPACED]:
                self.i += 2
                return Literal(negate_literal(nxt))
        return self.primary()

    def primary(self) -> Node:
        tok = self.advance()
        kind = tok[KIND]
        if kind is Kind.INTEGER:
            v = tok[VALUE]
            assert isinstance(v, int)
            return Literal(v if v <= INT64_MAX else 0)
        if kind is Kind.REAL:
            return Literal(tok[VALUE])
        if kind is Kind.STRING:
            return Literal(tok[VALUE])
        if kind is Kind.KEYWORD:
            low = tok[TEXT].lower()
            if low == "true":
                return Literal(True)
            if low == "false":
                return Literal(False)
            if low == "undefined":
                return Literal(UNDEFINED)
            if low == "error":
                return Literal(ERROR)
            self.fail("expected an expression", tok)
        if kind is Kind.NAME:
            name = str(tok[VALUE])
            if not tok[QUOTED] and self.at_op("("):
                return self.call(name)
            return AttrRef(name)
        if kind is Kind.OP:
            op = tok[TEXT]
            if op == "(":
                inner = self.expression()
                self.expect_op(")", "')'")
                return Paren(inner)
            if op == "{":
                return self.list_body()
            if op == "[":
                return self.ad_body()
            if op == ".":
                name_tok = self.advance()
                if name_tok[KIND] is not Kind.NAME:
                    self.fail("expected an attribute name after '.'", name_tok)
                return AttrRef(str(name_tok[VALUE]), None, absolute=True)
        self.i -= 1
        self.fail("expected an expression", tok)
        raise AssertionError("unreachable")

    def call(self, name: str) -> Node:
        self.advance()  # (
        args: list[Node] = []
        if not self.at_op(")"):
            while True:
                args.append(self.expression())
                if self.at_op(","):
                    self.advance()
                    continue
                break
        self.expect_op(")", "',' or ')' in the arguments of " + name + "()")
        return FnCall(name, tuple(args))

    def list_body(self) -> Node:
        items: list[Node] = []
        if not self.at_op("}"):
            while True:
                items.append(self.expression())
                if self.at_op(","):
                    self.advance()
                    continue
                break
        self.expect_op("}", "',' or '}' in a list")
        return ListExpr(tuple(items))

    def ad_body(self) -> AdExpr:
        """The attributes of ``[ ... ]`` after the opening bracket (stray ``;`` are skipped)."""
        exprs: dict[str, Node] = {}
        names: dict[str, str] = {}
        while not self.at_op("]"):
            tok = self.advance()
            while tok[KIND] is Kind.OP and tok[TEXT] == ";":  # as HTCondor: then a name must follow
                tok = self.advance()
            if tok[KIND] is not Kind.NAME:
                self.fail("expected an attribute name or ']' in an ad", tok)
            name = str(tok[VALUE])
            self.expect_op("=", f"'=' after attribute name {name!r}")
            value = self.attribute_value()
            key = name.lower()
            if key not in names:
                names[key] = name
            exprs[key] = value
            if not self.at_op(";") and not self.at_op("]"):
                self.fail("expected ';' or ']' in an ad")
        self.advance()
        return AdExpr(exprs, names)

    def attribute_value(self) -> Node:
        """The expression of one attribute of an ad, shared with every identical one.

        Ads repeat the same expressions (every slot of a pool has the same START), so the
        text of each value is parsed through the expression cache: identical texts give
        the same tree, parsed once and compiled once.
        """
        if self.depth > 0:  # inside an expression: parse in place, counting the nesting
            return self.expression()
        tokens = self.tokens
        i = j = self.i
        depth = 0
        while True:
            tok = tokens[j]
            if tok[KIND] is Kind.END:
                break
            if tok[KIND] is Kind.OP:
                t = tok[TEXT]
                if t in "([{":
                    depth += 1
                elif t in ")]}":
                    if depth == 0:
                        break
                    depth -= 1
                elif t == ";" and depth == 0:
                    break
            j += 1
        if j == i:
            self.fail("expected an expression", tokens[i])
        start = tokens[i][POS]
        source = self.text[start : tokens[j][POS]]
        try:
            node = parse_expression(source.rstrip())
        except ClassAdParseError as e:
            raise ClassAdParseError(e.reason, self.text, start + e.pos) from None
        self.i = j
        return node

    def finish(self) -> None:
        tok = self.peek()
        if tok[KIND] is not Kind.END:
            self.fail("expected end of input", tok)


@lru_cache(maxsize=65536)
def parse_expression(text: str) -> Node:
    """Parse one expression; raise ``ClassAdParseError`` on bad input."""
    p = _Parser(text)
    if p.peek()[KIND] is Kind.END:
        raise ClassAdParseError("expected an expression, found end of input", text, 0)
    node = p.expression()
    p.finish()
    return node


_STRUCTURE = re.compile(r"[;\[\]{}()\"'/]")
_QUOTED = {'"': re.compile(r'"(?:[^"\\]|\\.)*"', re.S), "'": re.compile(r"'(?:[^'\\]|\\.)*'", re.S)}
_AD_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=")
_SPACE = re.compile(r"\s*")
_INT = re.compile(r"-?[1-9][0-9]{0,17}|-?0")
_REAL = re.compile(r"-?(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|-?[1-9]\d*[eE][+-]?\d+")
_PLAIN_STRING = re.compile(r'"[^"\\]*"')
_WORDS = {"true": True, "false": False, "undefined": UNDEFINED, "error": ERROR}
# ``name = <plain literal>`` followed by ``;`` or ``]``, the commonest attribute, in one match
_SIMPLE_ATTR = re.compile(
    r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:"
    r"(-?[1-9][0-9]{0,17}|-?0)"
    r"|(-?(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|-?[1-9]\d*[eE][+-]?\d+)"
    r'|"([^"\\]*)"'
    r"|(?i:(true|false|undefined|error))"
    r")\s*([;\]])"
)


def _simple_value(source: str) -> Node | None:
    """A literal written plainly (``12``, ``-1.5``, ``"text"``, ``true``), without tokenizing."""
    if _INT.fullmatch(source):
        return Literal(int(source))
    if _REAL.fullmatch(source):
        return Literal(float(source))
    if _PLAIN_STRING.fullmatch(source):
        return Literal(source[1:-1])
    word = _WORDS.get(source.lower(), _NO_WORD)
    if word is not _NO_WORD:
        return Literal(word)
    return None


_NO_WORD = object()


def _scan_ad(text: str, pos: int) -> tuple[AdExpr, int] | None:
    """Read ``[ name = expr; ... ]`` starting at the ``[`` at ``pos`` by scanning for its structure.

    Each value's text is cut out at the ``;`` or ``]`` that ends it and parsed through the
    expression cache, so an ad's expressions are shared with every ad that has the same
    text (every slot of a pool has the same START). Returns None for input this fast path
    does not handle (comments, quoted names, anything malformed); the token parser then
    reads it and reports errors precisely.
    """
    exprs: dict[str, Node] = {}
    names: dict[str, str] = {}
    n = len(text)
    i = pos + 1
    search = _STRUCTURE.search
    while True:
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if i < n and text[i] == "]":
            return AdExpr(exprs, names), i + 1
        m = _SIMPLE_ATTR.match(text, i)
        if m is not None:
            name, integer, real, string, word, end = m.groups()
            if name.lower() in KEYWORDS:
                return None
            if integer is not None:
                value: Any = int(integer)
            elif real is not None:
                value = float(real)
            elif string is not None:
                value = string
            else:
                value = _WORDS[word.lower()]
            key = name.lower()
            if key not in names:
                names[key] = name
            exprs[key] = Literal(value)
            if end == "]":
                return AdExpr(exprs, names), m.end()
            i = m.end()
            continue
        m = _AD_NAME.match(text, i)
        if m is None:
            return None
        name = m.group(1)
        if name.lower() in KEYWORDS:
            return None
        start = k = m.end()
        depth = 0
        while True:
            sm = search(text, k)
            if sm is None:
                return None
            k = sm.start()
            c = text[k]
            if c == '"' or c == "'":
                q = _QUOTED[c].match(text, k)
                if q is None:
                    return None
                k = q.end()
                continue
            if c == "/":
                if text.startswith("//", k) or text.startswith("/*", k):
                    return None
            elif c in "([{":
                depth += 1
            elif c in ")}":
                depth -= 1
                if depth < 0:
                    return None
            elif c == "]":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0:  # ;
                break
            k += 1
        source = text[start:k].strip()
        if not source:
            return None
        node = _simple_value(source)
        if node is None:
            try:
                node = parse_expression(source)
            except ClassAdParseError:
                return None
        key = name.lower()
        if key not in names:
            names[key] = name
        exprs[key] = node
        i = k + 1 if text[k] == ";" else k


def parse_new_ad(text: str) -> AdExpr:
    """Parse one ad in new syntax, ``[ name = expr; ... ]``, and nothing after it."""
    start = _SPACE.match(text).end()  # type: ignore[union-attr]
    if text.startswith("[", start):
        scanned = _scan_ad(text, start)
        if scanned is not None and not text[scanned[1] :].strip():
            return scanned[0]
    p = _Parser(text)
    p.expect_op("[", "'[' opening an ad")
    ad = p.ad_body()
    p.finish()
    return ad


def parse_new_ads(text: str) -> list[AdExpr]:
    """Parse a stream of new-syntax ads, one after another."""
    out: list[AdExpr] = []
    pos = _SPACE.match(text).end()  # type: ignore[union-attr]
    while pos < len(text) and text[pos] == "[":
        scanned = _scan_ad(text, pos)
        if scanned is None:
            break
        out.append(scanned[0])
        pos = _SPACE.match(text, scanned[1]).end()  # type: ignore[union-attr]
    if pos >= len(text):
        return out
    p = _Parser(text[pos:])
    while p.peek()[KIND] is not Kind.END:
        p.expect_op("[", "'[' opening an ad")
        out.append(p.ad_body())
    return out


def is_identifier(name: str) -> bool:
    """Whether ``name`` can be written unquoted."""
    if not name or not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        return False
    return all(c.isascii() and (c.isalnum() or c == "_") for c in name)
