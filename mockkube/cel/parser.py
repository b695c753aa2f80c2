"""CEL lexer and parser producing a small AST.

Hand-written so that the DRA selector environment can be type-checked statically with
cel-go's error wording (neither installed Python CEL library exposes a checker), and so
that expressions compile to plain Python closures (microseconds per evaluation).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# keywords of CEL's grammar that a field selection cannot name (cel-go: "mismatched input
# 'true' expecting IDENTIFIER"); other reserved words may follow a dot
LITERAL_WORDS = frozenset(("true", "false", "null", "in"))


class CELSyntaxError(Exception):
    """A parse error at `pos` (character offset into the expression)."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


@dataclass(slots=True)
class Node:
    """AST node. `kind` is one of: lit, ident, select, index, call, list, map, message, cond.

    - lit: value=python value, type_name=CEL type
    - ident: name
    - select: target, name, test_only (has() macro)
    - index: target, args=[index]
    - call: name, target (receiver or None), args
    - list: args; map: entries [(key, value)]; message: name (qualified type), entries [(field, value)], field ``?f`` for ``?f: v``
    - cond: args=[cond, then, else]
    """

    kind: str
    pos: int
    name: str = ""
    target: "Node | None" = None
    args: list["Node"] = field(default_factory=list)
    entries: list[tuple["Node", "Node"]] = field(default_factory=list)
    value: Any = None
    type_name: str = ""
    test_only: bool = False
    optional: bool = False  # `.?field` / `[?key]` (CEL optional syntax, enabled for Kubernetes)
    # list / map literals: the positions of optional elements / entries (`[?x]`, `{?k: v}`)
    optional_at: tuple[int, ...] = ()
    rooted: bool = False  # `.name`: resolved from the root, past the container and local variables


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<float>(?:\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<int>\d+[uU]?)
  | (?P<string>[rRbB]{0,2}(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<quoted>`[_a-zA-Z0-9./~-]+`)
  | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,()\[\]{}])
    """,
    re.VERBOSE | re.DOTALL,
)

# CEL's reserved identifiers (not literals or operators): refused as names, allowed after a dot
RESERVED_WORDS = frozenset(
    {
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)

_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}


@dataclass(slots=True)
class Token:
    kind: str  # float, int, uint, string, bytes, ident, op, eof
    text: str
    pos: int
    value: Any = None


def _unescape(body: str, pos: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in "xX":
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        elif nxt == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        elif nxt == "U":
            out.append(chr(int(body[i + 2 : i + 10], 16)))
            i += 10
        elif nxt.isdigit():
            out.append(chr(int(body[i + 1 : i + 4], 8)))
            i += 4
        else:
            raise CELSyntaxError(f"Syntax error: invalid escape sequence '\\{nxt}'", pos)
    return "".join(out)


def _unescape_bytes(body: str, pos: int) -> bytes:
    """A bytes literal's body: ``\\xFF`` and octal escapes are single bytes, other
    characters (and ``\\u`` escapes) their UTF-8 encoding."""
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt in "xX":
            out.append(int(body[i + 2 : i + 4], 16))
            i += 4
        elif nxt.isdigit():
            out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        else:
            j = i + (10 if nxt == "U" else 6 if nxt == "u" else 2)
            out += _unescape(body[i:j], pos).encode("utf-8")
            i = j
    return bytes(out)


def tokenize(src: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(src):
        m = _TOKEN_RE.match(src, pos)
        if not m:
            raise CELSyntaxError(f"Syntax error: token recognition error at: '{src[pos]}'", pos)
        kind = m.lastgroup or ""
        text = m.group()
        if kind == "ws":
            pass
        elif kind == "float":
            tokens.append(Token("float", text, pos, float(text)))
        elif kind in ("int", "hex"):
            unsigned = text[-1] in "uU"
            digits = text[:-1] if unsigned else text
            value = int(digits, 16 if kind == "hex" else 10)
            tokens.append(Token("uint" if unsigned else "int", text, pos, value))
        elif kind == "string":
            prefix = ""
            while text[len(prefix)] in "rRbB":
                prefix += text[len(prefix)]
            quoted = text[len(prefix) :]
            q = 3 if quoted[:3] in ('"""', "'''") else 1
            body = quoted[q:-q]
            raw = "r" in prefix.lower()
            if "b" in prefix.lower():
                data = body.encode("utf-8") if raw else _unescape_bytes(body, pos)
                tokens.append(Token("bytes", text, pos, data))
            else:
                tokens.append(Token("string", text, pos, body if raw else _unescape(body, pos)))
        elif kind == "ident":
            tokens.append(Token("ident", text, pos))
        elif kind == "quoted":  # a backquoted field name: m.`content-type`
            tokens.append(Token("quoted", text, pos, text[1:-1]))
        else:
            tokens.append(Token("op", text, pos))
        pos = m.end()
    tokens.append(Token("eof", "<EOF>", len(src)))
    return tokens


_REL_OPS = {"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_"}
_ADD_OPS = {"+": "_+_", "-": "_-_"}
_MUL_OPS = {"*": "_*_", "/": "_/_", "%": "_%_"}
MAX_DEPTH = 250


class Parser:
    """Recursive-descent parser following the CEL grammar's precedence levels."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.tokens = tokenize(src)
        self.i = 0
        self.depth = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def next(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def accept(self, text: str) -> Token | None:
        tok = self.tokens[self.i]
        if tok.kind == "op" and tok.text == text:
            self.i += 1
            return tok
        return None

    def expect(self, text: str) -> Token:
        tok = self.accept(text)
        if tok is None:
            bad = self.peek()
            raise CELSyntaxError(f"Syntax error: mismatched input '{bad.text}' expecting '{text}'", bad.pos)
        return tok

    def parse(self) -> Node:
        node = self.expr()
        tok = self.peek()
        if tok.kind != "eof":
            raise CELSyntaxError(f"Syntax error: extraneous input '{tok.text}' expecting <EOF>", tok.pos)
        return node

    def expr(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise CELSyntaxError("expression recursion limit exceeded", self.peek().pos)
        cond = self.or_expr()
        q = self.accept("?")
        if q is not None:
            then = self.or_expr()
            self.expect(":")
            other = self.expr()
            cond = Node("cond", q.pos, args=[cond, then, other])
        self.depth -= 1
        return cond

    def or_expr(self) -> Node:
        left = self.and_expr()
        while (tok := self.accept("||")) is not None:
            left = Node("call", tok.pos, name="_||_", args=[left, self.and_expr()])
        return left

    def and_expr(self) -> Node:
        left = self.relation()
        while (tok := self.accept("&&")) is not None:
            left = Node("call", tok.pos, name="_&&_", args=[left, self.relation()])
        return left

    def relation(self) -> Node:
        left = self.addition()
        while True:
            tok = self.peek()
            if tok.kind == "op" and tok.text in _REL_OPS:
                self.i += 1
                left = Node("call", tok.pos, name=_REL_OPS[tok.text], args=[left, self.addition()])
            elif tok.kind == "ident" and tok.text == "in":
                self.i += 1
                left = Node("call", tok.pos, name="@in", args=[left, self.addition()])
            else:
                return left

    def addition(self) -> Node:
        left = self.multiplication()
        while (tok := self.peek()).kind == "op" and tok.text in _ADD_OPS:
            self.i += 1
            left = Node("call", tok.pos, name=_ADD_OPS[tok.text], args=[left, self.multiplication()])
        return left

    def multiplication(self) -> Node:
        left = self.unary()
        while (tok := self.peek()).kind == "op" and tok.text in _MUL_OPS:
            self.i += 1
            left = Node("call", tok.pos, name=_MUL_OPS[tok.text], args=[left, self.unary()])
        return left

    def unary(self) -> Node:
        tok = self.peek()
        if tok.kind == "op" and tok.text == "!":
            self.i += 1
            return Node("call", tok.pos, name="!_", args=[self.unary()])
        if tok.kind == "op" and tok.text == "-":
            self.i += 1
            nxt = self.peek()
            if nxt.kind in ("int", "float"):
                operand = self.member()
                if operand.kind == "lit":
                    operand.value = -operand.value
                    operand.pos = tok.pos
                    return operand
                return Node("call", tok.pos, name="-_", args=[operand])
            return Node("call", tok.pos, name="-_", args=[self.unary()])
        return self.member()

    def member(self) -> Node:
        node = self.primary()
        while True:
            if (dot := self.accept(".")) is not None:
                opt = self.accept("?") is not None
                name_tok = self.next()
                if name_tok.kind == "quoted":
                    node = Node("select", dot.pos, name=name_tok.value, target=node, optional=opt)
                    continue
                if name_tok.kind != "ident" or name_tok.text in LITERAL_WORDS:
                    raise CELSyntaxError(
                        f"Syntax error: mismatched input '{name_tok.text}' expecting IDENTIFIER", name_tok.pos
                    )
                if self.accept("(") is not None:
                    node = Node("call", name_tok.pos, name=name_tok.text, target=node, args=self.args(")"))
                else:
                    node = Node("select", dot.pos, name=name_tok.text, target=node, optional=opt)
            elif (br := self.accept("[")) is not None:
                opt = self.accept("?") is not None
                index = self.expr()
                self.expect("]")
                node = Node("index", br.pos, target=node, args=[index], optional=opt)
            elif self.peek().text == "{" and _qualified(node):
                node = self.message(node)
            else:
                return node

    def message(self, type_node: Node) -> Node:
        """``Type{field: value, ...}``: CEL message construction (``Object{...}``,
        ``JSONPatch{...}`` in admission policies)."""
        brace = self.expect("{")
        fields: list[tuple[str, Node]] = []
        if self.accept("}") is None:
            while True:
                opt = "?" if self.accept("?") is not None else ""  # `?field: optional`
                name_tok = self.next()
                if name_tok.kind != "ident":
                    raise CELSyntaxError(
                        f"Syntax error: mismatched input '{name_tok.text}' expecting IDENTIFIER", name_tok.pos
                    )
                self.expect(":")
                fields.append((opt + name_tok.text, self.expr()))
                if self.accept(",") is not None:
                    if self.accept("}") is not None:
                        break
                    continue
                self.expect("}")
                break
        return Node("message", brace.pos, name=_qualified(type_node), entries=fields)

    def args(self, close: str, optional_at: list[int] | None = None) -> list[Node]:
        out: list[Node] = []
        if self.accept(close) is not None:
            return out
        while True:
            if optional_at is not None and self.accept("?") is not None:
                optional_at.append(len(out))
            out.append(self.expr())
            if self.accept(",") is not None:
                if self.accept(close) is not None:
                    return out
                continue
            self.expect(close)
            return out

    def primary(self) -> Node:
        tok = self.next()
        rooted = False
        if tok.kind == "op" and tok.text == ".":
            tok = self.next()
            rooted = True
            if tok.kind != "ident":
                raise CELSyntaxError(f"Syntax error: mismatched input '{tok.text}' expecting IDENTIFIER", tok.pos)
        if tok.kind == "ident" and rooted and tok.text not in ("true", "false", "null") and self.peek().text != "(":
            return Node("ident", tok.pos, name=tok.text, rooted=True)
        if tok.kind == "ident":
            if tok.text in ("true", "false"):
                return Node("lit", tok.pos, value=tok.text == "true", type_name="bool")
            if tok.text == "null":
                return Node("lit", tok.pos, value=None, type_name="null_type")
            if tok.text in RESERVED_WORDS or tok.text == "in":
                raise CELSyntaxError(f"Syntax error: reserved identifier: {tok.text}", tok.pos)
            if self.accept("(") is not None:
                return Node("call", tok.pos, name=tok.text, args=self.args(")"))
            return Node("ident", tok.pos, name=tok.text)
        if tok.kind == "int":
            return Node("lit", tok.pos, value=tok.value, type_name="int")
        if tok.kind == "uint":
            return Node("lit", tok.pos, value=tok.value, type_name="uint")
        if tok.kind == "float":
            return Node("lit", tok.pos, value=tok.value, type_name="double")
        if tok.kind == "string":
            return Node("lit", tok.pos, value=tok.value, type_name="string")
        if tok.kind == "bytes":
            return Node("lit", tok.pos, value=tok.value, type_name="bytes")
        if tok.kind == "op":
            if tok.text == "(":
                inner = self.expr()
                self.expect(")")
                return inner
            if tok.text == "[":
                optional_at: list[int] = []
                items = self.args("]", optional_at)
                return Node("list", tok.pos, args=items, optional_at=tuple(optional_at))
            if tok.text == "{":
                entries: list[tuple[Node, Node]] = []
                optional_keys: list[int] = []
                if self.accept("}") is None:
                    while True:
                        if self.accept("?") is not None:
                            optional_keys.append(len(entries))
                        key = self.expr()
                        self.expect(":")
                        entries.append((key, self.expr()))
                        if self.accept(",") is not None:
                            if self.accept("}") is not None:
                                break
                            continue
                        self.expect("}")
                        break
                return Node("map", tok.pos, entries=entries, optional_at=tuple(optional_keys))
        if tok.kind == "eof":
            raise CELSyntaxError(
                "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', "
                "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
                tok.pos,
            )
        raise CELSyntaxError(f"Syntax error: extraneous input '{tok.text}'", tok.pos)


def _qualified(node: Node) -> str:
    """``a.b.c`` of an identifier or a chain of selects on one, else ""."""
    if node.kind == "ident":
        return node.name
    if node.kind == "select" and not getattr(node, "optional", False) and node.target is not None:
        inner = _qualified(node.target)
        return f"{inner}.{node.name}" if inner else ""
    return ""


def parse(src: str) -> Node:
    """Parse `src` into an AST; raises CELSyntaxError."""
    return Parser(src).parse()
