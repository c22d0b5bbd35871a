"""Cut the GraphQL schema subset the fake GitHub serves out of GitHub's full public schema.

Usage (only to refresh the data; tests never run this):
    npm pack @octokit/graphql-schema@15.26.1 && tar xzf octokit-graphql-schema-*.tgz
    python tests/data/github/make_graphql_subset.py package/schema.graphql > tests/data/github/graphql-subset.graphql

Every definition in the output is copied verbatim from GitHub's schema (descriptions, argument defaults,
deprecations); only types and fields are left out.  A query that validates against the subset therefore
validates against GitHub's schema too, and the fake answers every field of the subset.  To let the App use
another field, add it to KEEP and implement it in tests/fakegithub/graphql_api.py.
"""

from __future__ import annotations

import copy
import sys
from typing import TypeVar

from graphql import (
    DefinitionNode,
    DocumentNode,
    EnumTypeDefinitionNode,
    FieldDefinitionNode,
    InputObjectTypeDefinitionNode,
    InputValueDefinitionNode,
    InterfaceTypeDefinitionNode,
    ListTypeNode,
    NamedTypeNode,
    Node,
    NonNullTypeNode,
    ObjectTypeDefinitionNode,
    ScalarTypeDefinitionNode,
    TypeNode,
    build_ast_schema,
    parse,
    print_ast,
    validate_schema,
)

ALL = None  # keep every field whose type is kept

# type name -> fields to keep (ALL = all fields whose types are available)
KEEP: dict[str, list[str] | None] = {
    "Query": ["id", "node", "nodes", "rateLimit", "repository"],
    "Mutation": ["resolveReviewThread", "unresolveReviewThread"],
    "Node": ["id"],
    "Actor": ["avatarUrl", "login", "resourcePath", "url"],
    "User": ["avatarUrl", "databaseId", "id", "login", "name", "resourcePath", "url"],
    "Bot": ["avatarUrl", "databaseId", "id", "login", "resourcePath", "url"],
    "Repository": ["databaseId", "id", "isPrivate", "name", "nameWithOwner", "object", "pullRequest", "url"],
    "GitObject": ALL,
    "Blob": ALL,
    "PullRequest": [
        "author",
        "baseRefName",
        "baseRefOid",
        "databaseId",
        "headRefName",
        "headRefOid",
        "id",
        "isDraft",
        "number",
        "repository",
        "reviewThreads",
        "state",
        "title",
        "url",
    ],
    "PullRequestReviewThreadConnection": ALL,
    "PullRequestReviewThreadEdge": ALL,
    "PullRequestReviewThread": ALL,
    "PullRequestReviewCommentConnection": ALL,
    "PullRequestReviewCommentEdge": ALL,
    "PullRequestReviewComment": [
        "author",
        "authorAssociation",
        "body",
        "bodyText",
        "createdAt",
        "databaseId",
        "diffHunk",
        "fullDatabaseId",
        "id",
        "isMinimized",
        "line",
        "minimizedReason",
        "originalLine",
        "originalStartLine",
        "outdated",
        "path",
        "publishedAt",
        "pullRequest",
        "pullRequestReview",
        "replyTo",
        "repository",
        "startLine",
        "state",
        "subjectType",
        "updatedAt",
        "url",
        "viewerCanDelete",
        "viewerCanUpdate",
        "viewerDidAuthor",
    ],
    "PullRequestReview": ["author", "body", "databaseId", "id", "state", "submittedAt", "url"],
    "PageInfo": ALL,
    "RateLimit": ALL,
    "ResolveReviewThreadInput": ALL,
    "ResolveReviewThreadPayload": ALL,
    "UnresolveReviewThreadInput": ALL,
    "UnresolveReviewThreadPayload": ALL,
}
N = TypeVar("N", bound=Node)
BUILTIN_SCALARS = {"String", "Int", "Float", "Boolean", "ID"}


def named(t: TypeNode) -> str:
    while isinstance(t, NonNullTypeNode | ListTypeNode):
        t = t.type
    assert isinstance(t, NamedTypeNode)
    return t.name.value


def trim(sdl: str) -> str:
    doc = parse(sdl, no_location=True)
    defs = {d.name.value: d for d in doc.definitions if hasattr(d, "name")}
    leaf = {n for n, d in defs.items() if isinstance(d, ScalarTypeDefinitionNode | EnumTypeDefinitionNode)}
    kept = set(KEEP)

    def available(type_name: str) -> bool:
        return type_name in BUILTIN_SCALARS or type_name in kept or type_name in leaf

    def args(values: tuple[InputValueDefinitionNode, ...]) -> tuple[InputValueDefinitionNode, ...] | None:
        out = []
        for a in values or ():
            if available(named(a.type)):
                out.append(a)
            elif isinstance(a.type, NonNullTypeNode):
                return None  # a required argument we cannot express: drop the field
        return tuple(out)

    out_defs: list[DefinitionNode] = []
    used_leaves: set[str] = set()
    for name, fields in KEEP.items():
        d = defs[name]
        if isinstance(d, InputObjectTypeDefinitionNode):
            new_fields_in = args(d.fields)
            assert new_fields_in is not None, name
            used_leaves.update(named(f.type) for f in new_fields_in)
            out_defs.append(replace(d, fields=new_fields_in))
            continue
        assert isinstance(d, ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode), name
        new_fields: list[FieldDefinitionNode] = []
        for f in d.fields:
            if fields is not None and f.name.value not in fields:
                continue
            if not available(named(f.type)):
                assert fields is None, f"{name}.{f.name.value} needs a type that is not kept"
                continue
            new_args = args(f.arguments)
            if new_args is None:
                continue
            used_leaves.add(named(f.type))
            used_leaves.update(named(a.type) for a in new_args)
            new_fields.append(replace(f, arguments=new_args))
        missing = set(fields or ()) - {f.name.value for f in new_fields}
        assert not missing, f"{name}: {missing}"
        interfaces = tuple(i for i in d.interfaces or () if i.name.value in kept)
        out_defs.append(replace(d, fields=tuple(new_fields), interfaces=interfaces))
    for name in sorted(used_leaves & leaf):
        out_defs.append(defs[name])
    directives = [d for d in doc.definitions if d.kind == "directive_definition"]
    new_doc = DocumentNode(definitions=tuple(directives + out_defs))
    errors = validate_schema(build_ast_schema(new_doc))  # must be a valid schema on its own
    assert not errors, errors
    header = (
        "# Subset of GitHub's GraphQL schema served by tests/fakegithub (generated by make_graphql_subset.py)\n"
        "# from @octokit/graphql-schema 15.26.1 schema.graphql. Copyright (c) GitHub, MIT licence.\n\n"
    )
    return header + print_ast(new_doc) + "\n"


def replace(node: N, **changes: object) -> N:
    new = copy.copy(node)
    for key, value in changes.items():
        setattr(new, key, value)
    return new


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as source:
        sys.stdout.write(trim(source.read()))
