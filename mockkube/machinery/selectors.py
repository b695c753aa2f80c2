"""Label, field and node selectors with the semantics and error text of upstream.

Label selectors follow k8s.io/apimachinery/pkg/labels (the ``?labelSelector=`` grammar and
``metav1.LabelSelector``), field selectors follow k8s.io/apimachinery/pkg/fields, and node
selectors follow k8s.io/component-helpers/scheduling/corev1/nodeaffinity. Parse errors are
raised as 400 BadRequest with the exact message kube-apiserver returns, because kubectl
prints them verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from mockkube.machinery import fielderrors, names
from mockkube.machinery.errors import bad_request
from mockkube.machinery.fielderrors import FieldError
from mockkube.machinery.strconv import int64_or_none

# --- label key / value validation: the one implementation lives in machinery/names ----------


def dns1123_subdomain_errors(value: str) -> list[str]:
    """content.IsDNS1123Subdomain, lengths in bytes."""
    return names.dns1123_subdomain(value, "bytes")


label_key_errors = names.qualified_name  # content.IsLabelKey: empty list when valid
label_value_errors = names.label_value  # content.IsLabelValue: empty list when valid


def _aggregate(errs: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message, or "[a, b]" with duplicates dropped."""
    seen: list[str] = []
    for e in errs:
        if e not in seen:
            seen.append(e)
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


class SelectorError(ValueError):
    """A selector that cannot be built; ``str()`` is upstream's error text."""


# --- label selectors ---------------------------------------------------------------------------

# selection.Operator values
EXISTS, DOES_NOT_EXIST, EQUALS, DOUBLE_EQUALS, NOT_EQUALS = "exists", "!", "=", "==", "!="
IN, NOT_IN, GREATER_THAN, LESS_THAN = "in", "notin", "gt", "lt"
_BINARY_OPERATORS = [IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN]
_VALID_OPERATORS = _BINARY_OPERATORS + [EXISTS, DOES_NOT_EXIST]


@dataclass(frozen=True)
class Requirement:
    """One ``key op values`` term of a label selector."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            if self.key not in labels or len(self.values) != 1:
                return False
            have, want = int64_or_none(labels[self.key]), int64_or_none(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        head = ("!" if op == DOES_NOT_EXIST else "") + self.key
        if op in (EXISTS, DOES_NOT_EXIST):
            return head
        sym = {
            EQUALS: "=",
            DOUBLE_EQUALS: "==",
            NOT_EQUALS: "!=",
            IN: " in ",
            NOT_IN: " notin ",
            GREATER_THAN: ">",
            LESS_THAN: "<",
        }[op]
        vals = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if op in (IN, NOT_IN):
            vals = f"({vals})"
        return head + sym + vals


def new_requirement(
    key: str, operator: str, values: Iterable[str] | None, path: fielderrors.Path | None = None
) -> Requirement:
    """labels.NewRequirement: validate and build, raising SelectorError with upstream text.

    ``values`` None stands for a Go nil slice (rendered "null" in messages).
    """
    vals = None if values is None else list(values)
    vl = vals or []
    base = path or fielderrors.Path()
    errs: list[FieldError] = []
    if msgs := label_key_errors(key):
        errs.append(fielderrors.invalid(str(base.child("key")), key, "; ".join(msgs)))
    vpath = base.child("values")
    if operator in (IN, NOT_IN):
        if not vl:
            errs.append(fielderrors.invalid(str(vpath), vals, "for 'in', 'notin' operators, values set can't be empty"))
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(vl) != 1:
            errs.append(fielderrors.invalid(str(vpath), vals, "exact-match compatibility requires one single value"))
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if vl:
            errs.append(fielderrors.invalid(str(vpath), vals, "values set must be empty for exists and does not exist"))
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(vl) != 1:
            errs.append(
                fielderrors.invalid(str(vpath), vals, "for 'Gt', 'Lt' operators, exactly one value is required")
            )
        for i, v in enumerate(vl):
            if int64_or_none(v) is None:
                errs.append(
                    fielderrors.invalid(
                        str(vpath.index(i)), v, "for 'Gt', 'Lt' operators, the value must be an integer"
                    )
                )
    else:
        errs.append(fielderrors.not_supported(str(base.child("operator")), operator, _VALID_OPERATORS))
    for i, v in enumerate(vl):
        if msgs := label_value_errors(v):
            errs.append(fielderrors.invalid(str(vpath.index(i).key(key)), v, "; ".join(msgs)))
    if errs:
        raise SelectorError(_aggregate([str(e) for e in errs]))
    return Requirement(key, operator, tuple(vl))


class LabelSelector:
    """An AND of requirements; ``nothing`` is labels.Nothing() (matches no object)."""

    __slots__ = ("requirements", "nothing")

    def __init__(self, requirements: Iterable[Requirement] = (), nothing: bool = False) -> None:
        self.requirements: tuple[Requirement, ...] = tuple(sorted(requirements, key=lambda r: r.key))
        self.nothing = nothing

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (labels.Everything())."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        lbls = labels or {}
        return all(r.matches(lbls) for r in self.requirements)

    def requires_exact_match(self, key: str) -> str | None:
        """The single value ``key`` must have, if the selector pins it (for index lookups)."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return "LabelSelector(<nothing>)" if self.nothing else f"LabelSelector({str(self)!r})"


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)

# Lexer tokens (labels.Token)
_ERR, _EOS, _CPAR, _COMMA, _NOT, _DEQ, _EQ, _GT, _ID, _IN, _LT, _NEQ, _NOTIN, _OPAR = range(14)
_STRING_TO_TOKEN = {
    ")": _CPAR,
    ",": _COMMA,
    "!": _NOT,
    "==": _DEQ,
    "=": _EQ,
    ">": _GT,
    "in": _IN,
    "<": _LT,
    "!=": _NEQ,
    "notin": _NOTIN,
    "(": _OPAR,
}
_SPECIAL = set("=!(),><")
_WHITESPACE = set(" \t\r\n")


def _lex(s: str) -> list[tuple[int, str]]:
    """labels.Lexer: the whole token stream, ending with end-of-string."""
    out: list[tuple[int, str]] = []
    pos, n = 0, len(s)
    while True:
        while pos < n and s[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            out.append((_EOS, ""))
            return out
        if s[pos] in _SPECIAL:
            buf, last = "", None
            while pos < n and s[pos] in _SPECIAL:
                cand = buf + s[pos]
                if cand in _STRING_TO_TOKEN:
                    buf, last = cand, (_STRING_TO_TOKEN[cand], cand)
                    pos += 1
                elif last is not None:
                    break
                else:
                    buf = cand
                    pos += 1
            out.append(last if last is not None else (_ERR, f"error expected: keyword found '{buf}'"))
        else:
            start = pos
            while pos < n and s[pos] not in _SPECIAL and s[pos] not in _WHITESPACE:
                pos += 1
            word = s[start:pos]
            out.append((_STRING_TO_TOKEN.get(word, _ID), word))


class _Parser:
    """labels.Parser: a recursive-descent parser over the scanned tokens."""

    def __init__(self, s: str) -> None:
        self.items = _lex(s)
        self.pos = 0

    def lookahead(self, values: bool) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        if values and tok in (_IN, _NOTIN):
            tok = _ID
        return tok, lit

    def consume(self, values: bool) -> tuple[int, str]:
        tok, lit = self.lookahead(values)
        self.pos += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.lookahead(True)
            if tok in (_ID, _NOT):
                try:
                    reqs.append(self.parse_requirement())
                except SelectorError as e:
                    raise SelectorError(f"unable to parse requirement: {e}") from None
                t, l = self.consume(True)
                if t == _EOS:
                    return reqs
                if t == _COMMA:
                    t2, l2 = self.lookahead(True)
                    if t2 not in (_ID, _NOT):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{l}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return reqs
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def parse_requirement(self) -> Requirement:
        key, op = self.parse_key_and_infer_operator()
        if op in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, op, [])
        op = self.parse_operator()
        values = self.parse_values() if op in (IN, NOT_IN) else self.parse_exact_value()
        return new_requirement(key, op, sorted(values))

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        op = ""
        tok, lit = self.consume(True)
        if tok == _NOT:
            op = DOES_NOT_EXIST
            tok, lit = self.consume(True)
        if tok != _ID:
            raise SelectorError(f"found '{lit}', expected: identifier")
        if msgs := label_key_errors(lit):
            # upstream validates with a nil *field.Path, which prints as "<nil>"
            raise SelectorError(str(fielderrors.invalid("<nil>", lit, "; ".join(msgs))))
        t, _ = self.lookahead(True)
        if t in (_EOS, _COMMA) and op != DOES_NOT_EXIST:
            op = EXISTS
        return lit, op

    def parse_operator(self) -> str:
        tok, lit = self.consume(False)
        ops = {
            _IN: IN,
            _EQ: EQUALS,
            _DEQ: DOUBLE_EQUALS,
            _GT: GREATER_THAN,
            _LT: LESS_THAN,
            _NOTIN: NOT_IN,
            _NEQ: NOT_EQUALS,
        }
        if tok not in ops:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return ops[tok]

    def parse_values(self) -> set[str]:
        tok, lit = self.consume(True)
        if tok != _OPAR:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(True)
        if tok in (_ID, _COMMA):
            s = self.parse_identifiers_list()
            if self.consume(True)[0] != _CPAR:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return s
        if tok == _CPAR:
            self.consume(True)
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        s: set[str] = set()
        while True:
            tok, lit = self.consume(True)
            if tok == _ID:
                s.add(lit)
                tok2, lit2 = self.lookahead(True)
                if tok2 == _COMMA:
                    continue
                if tok2 == _CPAR:
                    return s
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not s:
                    s.add("")
                tok2, _ = self.lookahead(True)
                if tok2 == _CPAR:
                    s.add("")
                    return s
                if tok2 == _COMMA:
                    s.add("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        tok, _ = self.lookahead(True)
        if tok in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume(True)
        if tok == _ID:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse_label_selector(s: str) -> LabelSelector:
    """labels.Parse for ``?labelSelector=``; raises 400 BadRequest with upstream's message."""
    try:
        return LabelSelector(_Parser(s).parse())
    except SelectorError as e:
        raise bad_request(str(e)) from None


def label_selector_from_object(sel: dict | None) -> LabelSelector:
    """metav1.LabelSelectorAsSelector: nil matches nothing, {} matches everything.

    Raises 400 BadRequest with upstream's text for an invalid selector (callers that
    validated the object first never see it).
    """
    if sel is None:
        return NOTHING
    match_labels = sel.get("matchLabels") or {}
    exprs = sel.get("matchExpressions") or []
    if not match_labels and not exprs:
        return EVERYTHING
    ops = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}
    reqs = []
    try:
        for k, v in match_labels.items():
            reqs.append(new_requirement(k, EQUALS, [v]))
        for e in exprs:
            op = e.get("operator", "")
            if op not in ops:
                raise SelectorError(f'"{op}" is not a valid label selector operator')
            reqs.append(new_requirement(e.get("key", ""), ops[op], e.get("values")))
    except SelectorError as err:
        raise bad_request(str(err)) from None
    return LabelSelector(reqs)


def selector_from_set(labels: Mapping[str, str] | None) -> LabelSelector:
    """labels.SelectorFromSet without validation (e.g. a pod's spec.nodeSelector)."""
    return LabelSelector(Requirement(k, EQUALS, (v,)) for k, v in (labels or {}).items())


# --- field selectors ---------------------------------------------------------------------------


class FieldSelector:
    """An AND of ``field=value`` / ``field!=value`` terms; missing fields read as ""."""

    __slots__ = ("requirements",)

    def __init__(self, requirements: Iterable[tuple[str, str, str]] = ()) -> None:
        self.requirements: list[tuple[str, str, str]] = list(requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        for field, op, value in self.requirements:
            have = fields.get(field, "")
            if (have == value) != (op == "="):
                return False
        return True

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal, if an ``=`` term pins it (for index lookups)."""
        for f, op, v in self.requirements:
            if f == field and op == "=":
                return v
        return None

    def __str__(self) -> str:
        return ",".join(f"{f}{op}{escape_field_value(v)}" for f, op, v in self.requirements)

    def __repr__(self) -> str:
        return f"FieldSelector({str(self)!r})"


def escape_field_value(s: str) -> str:
    """fields.EscapeValue."""
    return s.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(s: str) -> str:
    if not any(c in s for c in "\\,="):
        return s
    out, in_slash = [], False
    for c in s:
        if in_slash:
            if c not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c in ",=":
            # upstream formats the rune with %v, i.e. as its code point number
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(s: str) -> list[str]:
    if not s:
        return []
    terms, start, in_slash = [], 0, False
    for i, c in enumerate(s):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(s[start:i])
            start = i + 1
    terms.append(s[start:])
    return terms


def parse_field_selector(s: str) -> FieldSelector:
    """fields.ParseSelector for ``?fieldSelector=``; raises 400 BadRequest with upstream's message."""
    reqs = []
    try:
        for part in sorted(_split_terms(s)):
            if not part:
                continue
            for i in range(len(part)):
                op = next((o for o in ("!=", "==", "=") if part.startswith(o, i)), None)
                if op:
                    lhs, rhs = part[:i], part[i + len(op) :]
                    break
            else:
                raise SelectorError(f"invalid selector: '{s}'; can't understand '{part}'")
            value = _unescape_field_value(rhs)
            if not lhs and not value:
                continue  # upstream's Transform turns an empty term into Everything()
            reqs.append((lhs, "!=" if op == "!=" else "=", value))
    except SelectorError as e:
        raise bad_request(str(e)) from None
    return FieldSelector(reqs)


# --- node selectors (v1.NodeSelector) ----------------------------------------------------------

_NODE_OPS = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
    "Gt": GREATER_THAN,
    "Lt": LESS_THAN,
}


def _term_label_selector(exprs: list[dict]) -> LabelSelector | None:
    """nodeSelectorRequirementsAsSelector; None when the term does not parse."""
    reqs = []
    for e in exprs:
        op = _NODE_OPS.get(e.get("operator", ""))
        if op is None:
            return None
        try:
            reqs.append(new_requirement(e.get("key", ""), op, e.get("values")))
        except SelectorError:
            return None
    return LabelSelector(reqs)


def _term_field_selector(exprs: list[dict]) -> FieldSelector | None:
    """nodeSelectorRequirementsAsFieldSelector: In/NotIn with exactly one value only."""
    reqs = []
    for e in exprs:
        values = e.get("values") or []
        if e.get("operator") not in ("In", "NotIn") or len(values) != 1:
            return None
        reqs.append((e.get("key", ""), "=" if e["operator"] == "In" else "!=", values[0]))
    return FieldSelector(reqs)


def node_selector_term_matches(term: dict, node: dict) -> bool:
    """One v1.NodeSelectorTerm: an empty or unparsable term matches no node."""
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    meta = node.get("metadata") or {}
    if exprs:
        sel = _term_label_selector(exprs)
        if sel is None or not sel.matches(meta.get("labels")):
            return False
    if fields:
        fsel = _term_field_selector(fields)
        if fsel is None:
            return False
        name = meta.get("name") or ""
        # upstream skips matchFields for a node without a name (empty field set)
        if name and not fsel.matches({"metadata.name": name}):
            return False
    return True


def node_selector_matches(selector: dict | None, node: dict) -> bool:
    """v1.NodeSelector: terms are ORed; no terms matches nothing.

    ``None`` means "no node selector at all" and matches every node (as a pod without
    required node affinity, or a ResourceSlice/allocation without one, would).
    """
    if selector is None:
        return True
    return any(node_selector_term_matches(t or {}, node) for t in selector.get("nodeSelectorTerms") or [])


__all__ = [
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "SelectorError",
    "EVERYTHING",
    "NOTHING",
    "dns1123_subdomain_errors",
    "escape_field_value",
    "label_key_errors",
    "label_selector_from_object",
    "label_value_errors",
    "new_requirement",
    "node_selector_matches",
    "node_selector_term_matches",
    "parse_field_selector",
    "parse_label_selector",
    "selector_from_set",
]
