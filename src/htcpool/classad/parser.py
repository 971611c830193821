"""Parse ClassAd expressions and ads (new syntax) into node trees.

A Pratt parser: binary operators and their binding powers are one table
(``_BINARY``); unary operators, postfix selection/subscripts and the ternary
are handled around it. The grammar, from loosest to tightest binding:

    ?: (right-assoc)  ||  &&  |  ^  &  == != =?= =!= is isnt  < <= > >=
    << >> >>>  + -  * / %  unary - + ! ~  postfix . [ ]  primary

``parse_expression`` caches results by source text (trees are immutable), so
parsing the same text again costs one dictionary lookup.
"""

from __future__ import annotations

from functools import lru_cache

from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.lexer import Kind, Token, negate_literal, tokenize
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
MAX_NESTING = 200


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
        return tok.kind is Kind.OP and tok.text == op

    def expect_op(self, op: str, what: str) -> Token:
        tok = self.tokens[self.i]
        if tok.kind is not Kind.OP or tok.text != op:
            self.fail(f"expected {what}", tok)
        self.i += 1
        return tok

    def fail(self, message: str, tok: Token | None = None) -> None:
        tok = tok or self.peek()
        found = tok.kind.value if tok.kind is Kind.END else repr(tok.text)
        raise ClassAdParseError(f"{message}, found {found}", self.text, tok.pos)

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ClassAdParseError(
                f"expression nested more than {MAX_NESTING} levels deep", self.text, self.peek().pos
            )

    # -- grammar
    def expression(self) -> Node:
        self.enter()
        cond = self.binary(0)
        if self.at_op("?"):
            self.advance()
            if self.at_op(":"):
                self.advance()
                node: Node = Ternary(cond, None, self.expression())
            else:
                then = self.expression()
                self.expect_op(":", "':' of a conditional expression")
                node = Ternary(cond, then, self.expression())
        else:
            node = cond
        self.depth -= 1
        return node

    def binary(self, min_power: int) -> Node:
        left = self.unary()
        while True:
            tok = self.peek()
            if tok.kind is Kind.OP:
                op = tok.text
            elif tok.kind is Kind.KEYWORD and tok.text.lower() in ("is", "isnt"):
                op = tok.text.lower()
            else:
                return left
            power = _BINARY.get(op)
            if power is None or power <= min_power:
                return left
            self.advance()
            right = self.binary(power)
            left = BinaryOp(_CANONICAL.get(op, op), left, right)

    def unary(self) -> Node:
        tok = self.peek()
        if tok.kind is Kind.OP and tok.text in _UNARY:
            self.advance()
            nxt = self.peek()
            if (
                tok.text == "-"
                and nxt.kind in (Kind.INTEGER, Kind.REAL)
                and not nxt.spaced
                and not self._postfix_follows()
            ):
                self.advance()
                return Literal(negate_literal(nxt))
            self.enter()
            operand = self.unary()
            self.depth -= 1
            return UnaryOp(tok.text, operand)
        return self.postfix(self.primary())

    def _postfix_follows(self) -> bool:
        """Whether ``.`` or ``[`` follows the token after the current one."""
        after = self.tokens[self.i + 1]
        return after.kind is Kind.OP and after.text in (".", "[")

    def postfix(self, node: Node) -> Node:
        while True:
            if self.at_op("."):
                self.advance()
                name = self.advance()
                if name.kind not in (Kind.NAME, Kind.KEYWORD):
                    self.fail("expected an attribute name after '.'", name)
                node = AttrRef(str(name.value), node)
            elif self.at_op("["):
                self.advance()
                index = self.expression()
                self.expect_op("]", "']' closing a subscript")
                node = Subscript(node, index)
            else:
                return node

    def primary(self) -> Node:
        tok = self.advance()
        kind = tok.kind
        if kind is Kind.INTEGER:
            v = tok.value
            assert isinstance(v, int)
            return Literal(v if v <= INT64_MAX else 0)
        if kind is Kind.REAL:
            return Literal(tok.value)
        if kind is Kind.STRING:
            return Literal(tok.value)
        if kind is Kind.KEYWORD:
            low = tok.text.lower()
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
            name = str(tok.value)
            if not tok.quoted and self.at_op("("):
                return self.call(name)
            return AttrRef(name)
        if kind is Kind.OP:
            op = tok.text
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
                if name_tok.kind not in (Kind.NAME, Kind.KEYWORD) or name_tok.spaced:
                    self.fail("expected an attribute name after '.'", name_tok)
                return AttrRef(str(name_tok.value), None, absolute=True)
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
        self.enter()
        items: list[Node] = []
        if not self.at_op("}"):
            while True:
                items.append(self.expression())
                if self.at_op(","):
                    self.advance()
                    continue
                break
        self.expect_op("}", "',' or '}' in a list")
        self.depth -= 1
        return ListExpr(tuple(items))

    def ad_body(self) -> AdExpr:
        """The attributes of ``[ ... ]`` after the opening bracket."""
        self.enter()
        exprs: dict[str, Node] = {}
        names: dict[str, str] = {}
        while not self.at_op("]"):
            tok = self.advance()
            if tok.kind is not Kind.NAME and tok.kind is not Kind.KEYWORD:
                self.fail("expected an attribute name or ']' in an ad", tok)
            name = str(tok.value)
            self.expect_op("=", f"'=' after attribute name {name!r}")
            value = self.expression()
            key = name.lower()
            if key not in names:
                names[key] = name
            exprs[key] = value
            if self.at_op(";"):
                self.advance()
            elif not self.at_op("]"):
                self.fail("expected ';' or ']' in an ad")
        self.advance()
        self.depth -= 1
        return AdExpr(exprs, names)

    def finish(self) -> None:
        tok = self.peek()
        if tok.kind is not Kind.END:
            self.fail("expected end of input", tok)


@lru_cache(maxsize=65536)
def parse_expression(text: str) -> Node:
    """Parse one expression; raise ``ClassAdParseError`` on bad input."""
    p = _Parser(text)
    if p.peek().kind is Kind.END:
        raise ClassAdParseError("expected an expression, found end of input", text, 0)
    node = p.expression()
    p.finish()
    return node


def parse_new_ad(text: str) -> AdExpr:
    """Parse one ad in new syntax, ``[ name = expr; ... ]``, and nothing after it."""
    p = _Parser(text)
    p.expect_op("[", "'[' opening an ad")
    ad = p.ad_body()
    p.finish()
    return ad


def parse_new_ads(text: str) -> list[AdExpr]:
    """Parse a stream of new-syntax ads, one after another."""
    p = _Parser(text)
    out: list[AdExpr] = []
    while p.peek().kind is not Kind.END:
        p.expect_op("[", "'[' opening an ad")
        out.append(p.ad_body())
    return out


def is_identifier(name: str) -> bool:
    """Whether ``name`` can be written unquoted."""
    if not name or not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        return False
    return all(c.isascii() and (c.isalnum() or c == "_") for c in name)
