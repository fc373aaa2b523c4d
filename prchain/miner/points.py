"""What a GraphQL query costs GitHub's rate limit, worked out before it is sent.

GitHub documents the rule ("Calculating a rate limit score before running the call"):
- Every connection (a field taking `first` or `last`) needs one request for each object that
  can hold it. That count is the product of the `first`/`last` of the connections enclosing
  it, and a top-level connection needs one request.
- The requests are added up, divided by 100 and rounded to the nearest whole number. A query
  costs at least 1 point.
- The node limit is counted the same way, with the connection's own `first`/`last` included in
  the product. A query may ask for at most 500,000 nodes.
Plain object and list fields multiply nothing.

The miner uses this estimate to pace itself before sending. What it reports is the cost the
server returns in `rateLimit { cost }`. The fake GitHub in the tests charges by this same rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValueNode,
    parse,
    value_from_ast_untyped,
)
from graphql.error import GraphQLError

from prchain.core.errors import GithubQueryFailed

NODE_LIMIT = 500_000
PAGE_ARGUMENTS = ("first", "last")


@dataclass(frozen=True)
class QueryCost:
    requests: int  # the connection fills GitHub counts
    nodes: int  # the most nodes the query can return

    @property
    def points(self) -> int:
        # "Rounded to the nearest whole number": halves go up (Python's round() would go to even).
        return max(1, math.floor(self.requests / 100 + 0.5))

    @property
    def within_node_limit(self) -> bool:
        return self.nodes <= NODE_LIMIT


def query_cost(
    query: str, variables: Mapping[str, Any] | None = None, operation: str | None = None
) -> QueryCost:
    """The documented cost of `query` run with `variables` (the operation named, else the first)."""
    try:
        document = parse(query, no_location=True)
    except GraphQLError as exc:
        raise GithubQueryFailed(f"not a GraphQL document: {exc.message}") from None
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    op = _operation(document.definitions, operation)
    values = {**_defaults(op), **(variables or {})}
    walk = _Walk(fragments, values)
    walk.selections(op.selection_set, multiplier=1)
    return QueryCost(walk.requests, walk.nodes)


def _operation(definitions: Any, name: str | None) -> OperationDefinitionNode:
    ops = [d for d in definitions if isinstance(d, OperationDefinitionNode)]
    for op in ops:
        if name is None or (op.name and op.name.value == name):
            return op
    raise GithubQueryFailed(f"the query has no operation {name or ''}".strip())


def _defaults(op: OperationDefinitionNode) -> dict[str, Any]:
    return {
        d.variable.name.value: value_from_ast_untyped(d.default_value)
        for d in op.variable_definitions or ()
        if d.default_value is not None
    }


class _Walk:
    def __init__(
        self, fragments: Mapping[str, FragmentDefinitionNode], variables: Mapping[str, Any]
    ) -> None:
        self.fragments, self.variables = fragments, dict(variables)
        self.requests = self.nodes = 0

    def selections(self, selection_set: SelectionSetNode | None, multiplier: int) -> None:
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FieldNode):
                self.field(selection, multiplier)
            elif isinstance(selection, InlineFragmentNode):
                self.selections(selection.selection_set, multiplier)
            elif isinstance(selection, FragmentSpreadNode):
                fragment = self.fragments.get(selection.name.value)
                if fragment is None:
                    raise GithubQueryFailed(f"unknown fragment {selection.name.value}")
                self.selections(fragment.selection_set, multiplier)

    def field(self, node: FieldNode, multiplier: int) -> None:
        size = self.page_size(node)
        if size is None:
            self.selections(node.selection_set, multiplier)
            return
        self.requests += multiplier
        self.nodes += multiplier * size
        self.selections(node.selection_set, multiplier * size)

    def page_size(self, node: FieldNode) -> int | None:
        """The field's `first` or `last`, None when it is not a connection."""
        for argument in node.arguments or ():
            if argument.name.value in PAGE_ARGUMENTS:
                value = self.value(argument.value)
                if value is not None:
                    return int(value)
        return None

    def value(self, node: ValueNode) -> Any:
        return value_from_ast_untyped(node, self.variables)
