"""A small but honest GraphQL engine for the fake GitHub server.

It parses real query documents (operations, variables with defaults, aliases, arguments, inline
fragments, named fragments) and resolves exactly the requested fields against Python dicts whose
values are plain data or callables taking the field's arguments. A field the object does not have
is an error worded as GitHub words it, so a typo in a client query fails here as it would there.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

TOKEN = re.compile(
    r'[\s,]*(?:(#[^\n]*)|(\.\.\.)|([{}()\[\]:!$=@])|("(?:[^"\\]|\\.)*")|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)'
    r"|([_A-Za-z][_0-9A-Za-z]*))"
)


class GraphQLError(Exception):
    def __init__(
        self, message: str, type_: str | None = None, path: list[Any] | None = None
    ) -> None:
        super().__init__(message)
        self.type, self.path = type_, path or []

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": str(self), "locations": [], "path": self.path}
        if self.type:
            out["type"] = self.type
        return out


@dataclass
class Var:
    name: str


@dataclass
class Field:
    name: str
    alias: str
    args: dict[str, Any] = field(default_factory=dict)
    selections: list[Any] = field(default_factory=list)


@dataclass
class Fragment:
    on: str | None  # inline `... on T` (None: no type condition)
    selections: list[Any]


@dataclass
class Spread:
    name: str


@dataclass
class Document:
    selections: list[Any]
    defaults: dict[str, Any]
    fragments: dict[str, Fragment]


class Parser:
    def __init__(self, text: str) -> None:
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text):
            match = TOKEN.match(text, pos)
            if not match or match.end() == pos:
                if text[pos:].strip(" \t\r\n,") == "":
                    break
                raise GraphQLError(f"Parse error on {text[pos : pos + 20]!r}")
            pos = match.end()
            token = next((g for g in match.groups()[1:] if g is not None), None)
            if token is not None:
                self.tokens.append(token)
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise GraphQLError(f"Parse error: expected {expected or 'more input'}, got {token!r}")
        self.i += 1
        return token

    def document(self) -> Document:
        doc = Document([], {}, {})
        while self.peek() is not None:
            if self.peek() == "fragment":
                self.take()
                name = self.take()
                self.take("on")
                doc.fragments[name] = Fragment(self.take(), self.selection_set())
            elif self.peek() == "{":
                doc.selections = self.selection_set()
            else:
                self.take()  # query / mutation keyword
                if self.peek() not in ("(", "{"):
                    self.take()  # operation name
                if self.peek() == "(":
                    doc.defaults = self.variable_definitions()
                doc.selections = self.selection_set()
        return doc

    def variable_definitions(self) -> dict[str, Any]:
        defaults: dict[str, Any] = {}
        self.take("(")
        while self.peek() != ")":
            self.take("$")
            name = self.take()
            self.take(":")
            self.skip_type()
            defaults[name] = self.value() if self.peek() == "=" and self.take("=") else None
        self.take(")")
        return defaults

    def skip_type(self) -> None:
        if self.peek() == "[":
            self.take("[")
            self.skip_type()
            self.take("]")
        else:
            self.take()
        if self.peek() == "!":
            self.take("!")

    def selection_set(self) -> list[Any]:
        self.take("{")
        out: list[Any] = []
        while self.peek() != "}":
            out.append(self.selection())
        self.take("}")
        return out

    def selection(self) -> Any:
        if self.peek() == "...":
            self.take()
            if self.peek() == "on":
                self.take()
                return Fragment(self.take(), self.selection_set())
            if self.peek() == "{":
                return Fragment(None, self.selection_set())
            return Spread(self.take())
        alias = name = self.take()
        if self.peek() == ":":
            self.take()
            name = self.take()
        args = self.arguments() if self.peek() == "(" else {}
        subs = self.selection_set() if self.peek() == "{" else []
        return Field(name, alias, args, subs)

    def arguments(self) -> dict[str, Any]:
        self.take("(")
        args: dict[str, Any] = {}
        while self.peek() != ")":
            name = self.take()
            self.take(":")
            args[name] = self.value()
        self.take(")")
        return args

    def value(self) -> Any:
        token = self.take()
        if token == "$":
            return Var(self.take())
        if token == "[":
            items = []
            while self.peek() != "]":
                items.append(self.value())
            self.take("]")
            return items
        if token == "{":
            obj = {}
            while self.peek() != "}":
                key = self.take()
                self.take(":")
                obj[key] = self.value()
            self.take("}")
            return obj
        if token.startswith('"'):
            return json.loads(token)
        if re.fullmatch(r"-?\d+", token):
            return int(token)
        if re.fullmatch(r"-?\d[\d.eE+-]*", token):
            return float(token)
        return {"true": True, "false": False, "null": None}.get(token, token)  # else an enum value


def _bind(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, Var):
        return variables.get(value.name)
    if isinstance(value, list):
        return [_bind(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: _bind(v, variables) for k, v in value.items()}
    return value


class Executor:
    def __init__(self, doc: Document, variables: dict[str, Any]) -> None:
        self.doc = doc
        self.variables = {**doc.defaults, **(variables or {})}
        self.errors: list[GraphQLError] = []

    def run(self, root: dict[str, Any]) -> dict[str, Any]:
        data = self.resolve(root, self.doc.selections, [])
        out: dict[str, Any] = {"data": data}
        if self.errors:
            out["errors"] = [e.as_json() for e in self.errors]
        return out

    def flatten(self, obj: dict[str, Any], selections: list[Any]) -> list[Field]:
        fields: list[Field] = []
        for sel in selections:
            if isinstance(sel, Spread):
                if sel.name not in self.doc.fragments:
                    raise GraphQLError(f"Fragment {sel.name} was used, but not defined")
                sel = self.doc.fragments[sel.name]
            if isinstance(sel, Fragment):
                if sel.on in (None, obj.get("__typename")):
                    fields += self.flatten(obj, sel.selections)
            else:
                fields.append(sel)
        return fields

    def resolve(
        self, obj: dict[str, Any], selections: list[Any], path: list[Any]
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in self.flatten(obj, selections):
            if f.name not in obj:
                raise GraphQLError(
                    f"Field '{f.name}' doesn't exist on type '{obj.get('__typename', 'Object')}'",
                    path=[*path, f.alias],
                )
            value = obj[f.name]
            try:
                value = value(_bind(f.args, self.variables)) if callable(value) else value
            except GraphQLError as exc:
                if exc.type != "NOT_FOUND":
                    raise
                exc.path = [*path, f.alias]
                self.errors.append(exc)
                value = None
            out[f.alias] = self.complete(value, f, [*path, f.alias])
        return out

    def complete(self, value: Any, f: Field, path: list[Any]) -> Any:
        if value is None or not f.selections:
            return value
        if isinstance(value, list):
            return [self.resolve(v, f.selections, [*path, i]) for i, v in enumerate(value)]
        return self.resolve(value, f.selections, path)


def execute(query: str, variables: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """GitHub's answer shape: {"data": ...} plus "errors"; a query that cannot run has errors only."""
    try:
        return Executor(Parser(query).document(), variables).run(root)
    except GraphQLError as exc:
        return {"errors": [exc.as_json()]}


# ---------------------------------------------------------------- connections


def encode_cursor(key: Any) -> str:
    return base64.b64encode(("cursor:v2:" + json.dumps(key)).encode()).decode()


def decode_cursor(cursor: str) -> Any:
    try:
        text = base64.b64decode(cursor.encode()).decode()
        return json.loads(text.removeprefix("cursor:v2:"))
    except (ValueError, UnicodeDecodeError):
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.") from None


def connection(
    name: str,
    items: Sequence[Any],
    args: dict[str, Any],
    *,
    key: Callable[[int, Any], Any] | None = None,
    descending: bool = False,
    node: Callable[[Any], Any] = lambda item: item,
) -> dict[str, Any]:
    """One page of `items` (already in order) with keyset cursors, checked like GitHub checks them."""
    first = args.get("first")
    if first is None:
        raise GraphQLError(
            f"You must provide a `first` or `last` value to properly paginate the `{name}` connection."
        )
    if first > 100 or first < 0:
        raise GraphQLError(
            f"Requesting {first} records on the `{name}` connection exceeds the `first` limit of 100 records."
        )
    keyed = [((key or (lambda i, _: i))(i, item), item) for i, item in enumerate(items)]
    if args.get("after"):
        after = decode_cursor(args["after"])
        keyed = [(k, it) for k, it in keyed if (k < after if descending else k > after)]
    page = keyed[:first]
    return {
        "__typename": "Connection",
        "totalCount": len(items),
        "pageInfo": {
            "__typename": "PageInfo",
            "hasNextPage": len(keyed) > len(page),
            "hasPreviousPage": bool(args.get("after")),
            "startCursor": encode_cursor(page[0][0]) if page else None,
            "endCursor": encode_cursor(page[-1][0]) if page else None,
        },
        "nodes": [node(it) for _, it in page],
        "edges": [
            {"__typename": "Edge", "cursor": encode_cursor(k), "node": node(it)} for k, it in page
        ],
    }
