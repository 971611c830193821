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

Whole ads (``[ name = expr; ... ]`` as text) are read by ``adscan``, which uses
this parser for what its scan does not handle.

Most operands are a name, a literal, a call or a parenthesized expression; ``unary``
reads those directly instead of going through the general chain of unary
operators, postfix operators and primaries.

Nesting is limited the way HTCondor's parser limits it: every expression, every
unary-operator level and every postfix expression counts one level (so a
parenthesis costs three, a unary minus one), and input nested more than
``MAX_NESTING`` levels is refused with a ``ClassAdParseError``.
"""

from __future__ import annotations

from functools import lru_cache

from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.lexer import (
    KIND,
    TEXT,
    VALUE,
    Kind,
    Lexemes,
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
_EQUALITY = _BINARY["is"]
_UNARY = {"-", "+", "!", "~"}
_POSTFIX = {".", "[", "?"}  # what may start a postfix operator
_OP, _NAME, _KEYWORD, _INTEGER, _END = Kind.OP, Kind.NAME, Kind.KEYWORD, Kind.INTEGER, Kind.END
MAX_NESTING = 500
_NUMBERS = (Kind.INTEGER, Kind.REAL, Kind.ZERO_LED)  # what '-' folds into a negative literal


class Parser:
    __slots__ = ("text", "tokens", "lexemes", "i", "depth")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens, lexemes = tokenize(text)
        self.lexemes: list[str] | Lexemes = lexemes  # made a ``Lexemes`` when first needed
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
            self.fail(f"expected {what}", self.i)
        self.i += 1
        return tok

    def fail(self, message: str, index: int | None = None) -> None:
        """Raise a parse error about token ``index`` (the current one when None)."""
        if index is None:
            index = self.i
        tok = self.tokens[index]
        found = tok[KIND].value if tok[KIND] is Kind.END else repr(tok[TEXT])
        raise ClassAdParseError(f"{message}, found {found}", self.text, self.source().offset(index))

    def source(self) -> Lexemes:
        """The lexemes of the tokens, for what the tokens themselves leave out."""
        lexemes = self.lexemes
        if type(lexemes) is list:
            lexemes = self.lexemes = Lexemes(lexemes)
        assert isinstance(lexemes, Lexemes)
        return lexemes

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ClassAdParseError(
                f"expression nested too deeply (more than {MAX_NESTING} levels)", self.text, self.source().offset(self.i)
            )

    # -- grammar
    def expression(self) -> Node:
        depth = self.depth + 1
        if depth > MAX_NESTING:
            self.enter()  # raises
        self.depth = depth
        cond = self.binary(0)
        tok = self.tokens[self.i]
        if tok[KIND] is _OP and tok[TEXT] == "?":
            self.i += 1
            then = self.expression()
            self.expect_op(":", "':' of a conditional expression")
            node: Node = Ternary(cond, then, self.expression())
        else:
            node = cond
        self.depth = depth - 1
        return node

    def binary(self, min_power: int) -> Node:
        left = self.unary()
        tokens = self.tokens
        binary = _BINARY
        while True:
            tok = tokens[self.i]
            kind = tok[KIND]
            if kind is _OP:
                op = tok[TEXT]
                power = binary.get(op)
                if power is None or power <= min_power:
                    return left
            elif kind is _KEYWORD:
                op = tok[TEXT].lower()
                if op != "is" and op != "isnt" or _EQUALITY <= min_power:
                    return left
                power = _EQUALITY
                op = _CANONICAL[op]
            else:
                return left
            self.i += 1
            left = BinaryOp(op, left, self.binary(power))

    def unary(self) -> Node:
        """A unary expression: an operand with its unary operators and postfix operators.

        Counts one nesting level for the unary level and one for the postfix level (when
        there is no unary operator). The common operands (a name, a literal, a call, a
        parenthesized expression) are read here directly, without the calls through
        ``unary_operator``, ``postfix`` and ``primary`` that the others go through.
        """
        tokens = self.tokens
        i = self.i
        tok = tokens[i]
        kind = tok[KIND]
        depth = self.depth
        if kind is _OP or kind is _KEYWORD or kind is _END or depth >= MAX_NESTING - 1:
            if kind is not _OP or tok[TEXT] != "(" or depth >= MAX_NESTING - 1:
                return self.unary_operator()
            self.i = i + 1
            self.depth = depth + 2
            inner = self.expression()
            self.expect_op(")", "')'")
            node: Node = self._postfix_tail(Paren(inner), True)
            self.depth = depth
            return node
        self.i = i + 1
        nxt = tokens[i + 1]
        if kind is _NAME:
            if nxt[KIND] is _OP and nxt[TEXT] == "(" and not self.source().quoted(i):
                self.depth = depth + 2
                node = self.call(tok[VALUE])
                node = self._postfix_tail(node, True)
                self.depth = depth
                return node
            node = AttrRef(tok[VALUE])
        elif kind is _INTEGER:
            v = tok[VALUE]
            node = Literal(v if v <= INT64_MAX else 0)
        elif kind is Kind.ZERO_LED:
            self.fail("integer literals may not have leading zeros (except right after '-')", i)
        else:
            node = Literal(tok[VALUE])
        if nxt[KIND] is _OP and nxt[TEXT] in _POSTFIX:
            self.depth = depth + 2
            node = self._postfix_tail(node, True)
            self.depth = depth
        return node

    def unary_operator(self) -> Node:
        self.enter()
        tok = self.tokens[self.i]
        if tok[KIND] is _OP and tok[TEXT] in _UNARY:
            self.i += 1
            nxt = self.tokens[self.i]
            if tok[TEXT] == "-" and nxt[KIND] in _NUMBERS and not self.source().spaced(self.i):
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
        node = self._postfix_tail(node, elvis)
        self.depth -= 1
        return node

    def _postfix_tail(self, node: Node, elvis: bool) -> Node:
        tokens = self.tokens
        while True:
            tok = tokens[self.i]
            t = tok[TEXT] if tok[KIND] is _OP else ""
            if t == "?" and elvis and self._next_is_op(":"):
                self.i += 2
                node = Ternary(node, None, self.postfix(self._elvis_operand(), False))
            elif t == ".":
                self.i += 1
                name = self.advance()
                if name[KIND] is not Kind.NAME:
                    self.fail("expected an attribute name after '.'", self.i - 1)
                node = AttrRef(str(name[VALUE]), node)
            elif t == "[":
                self.i += 1
                index = self.expression()
                self.expect_op("]", "']' closing a subscript")
                node = Subscript(node, index)
            else:
                return node

    def _next_is_op(self, op: str) -> bool:
        tok = self.tokens[self.i + 1]
        return tok[KIND] is Kind.OP and tok[TEXT] == op

    def _elvis_operand(self) -> Node:
        """The primary right of ``?:``; ``-1`` counts as one (it is a single literal)."""
        tok = self.peek()
        if tok[KIND] is Kind.OP and tok[TEXT] == "-":
            nxt = self.tokens[self.i + 1]
            if nxt[KIND] in _NUMBERS and not self.source().spaced(self.i + 1):
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
        if kind is Kind.ZERO_LED:
            self.fail("integer literals may not have leading zeros (except right after '-')", self.i - 1)
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
            self.fail("expected an expression", self.i - 1)
        if kind is Kind.NAME:
            name = str(tok[VALUE])
            if not self.source().quoted(self.i - 1) and self.at_op("("):
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
                    self.fail("expected an attribute name after '.'", self.i - 1)
                return AttrRef(str(name_tok[VALUE]), None, absolute=True)
        self.i -= 1
        self.fail("expected an expression")
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
        """The attributes of ``[ ... ]`` after the opening bracket.

        Separators as HTCondor's parser takes them: stray ``;`` are skipped anywhere, and
        once an attribute has been read any run of them may close the ad (``[a = 1;]``,
        ``[a = 1;;]``), but before the first attribute a name must follow them (``[;]``
        is refused, ``[;a = 1]`` is not).
        """
        exprs: dict[str, Node] = {}
        names: dict[str, str] = {}
        while not self.at_op("]"):
            tok = self.advance()
            while tok[KIND] is Kind.OP and tok[TEXT] == ";":
                tok = self.advance()
            if names and tok[KIND] is Kind.OP and tok[TEXT] == "]":
                self.i -= 1
                break
            if tok[KIND] is not Kind.NAME:
                self.fail("expected an attribute name or ']' in an ad", self.i - 1)
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
            self.fail("expected an expression", i)
        start = self.source().offset(i)
        source = self.text[start : self.source().offset(j)]
        try:
            node = parse_expression(source.rstrip())
        except ClassAdParseError as e:
            raise ClassAdParseError(e.reason, self.text, start + e.pos) from None
        self.i = j
        return node

    def finish(self) -> None:
        tok = self.peek()
        if tok[KIND] is not Kind.END:
            self.fail("expected end of input")


@lru_cache(maxsize=65536)
def parse_expression(text: str) -> Node:
    """Parse one expression; raise ``ClassAdParseError`` on bad input."""
    p = Parser(text)
    if p.peek()[KIND] is Kind.END:
        raise ClassAdParseError("expected an expression, found end of input", text, 0)
    node = p.expression()
    p.finish()
    return node


def is_identifier(name: str) -> bool:
    """Whether ``name`` can be written unquoted."""
    if not name or not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        return False
    return all(c.isascii() and (c.isalnum() or c == "_") for c in name)
