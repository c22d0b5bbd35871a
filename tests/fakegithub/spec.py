"""Routes and request/response validation taken from GitHub's OpenAPI description (tests/data/github/openapi.json)."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
from jsonschema import Draft4Validator, FormatChecker

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "github"
SPEC_PATH = DATA_DIR / "openapi.json"

# GitHub asks for ISO 8601 `YYYY-MM-DDTHH:MM:SSZ`; it rejects other strings with 422.
_DATE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)$")
FORMATS = FormatChecker(formats=())


@FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATE_TIME.match(value):
        return False
    datetime.fromisoformat(value.replace("Z", "+00:00"))
    return True


def to_json_schema(schema: Any) -> Any:
    """OpenAPI 3.0 schema object -> JSON Schema (draft 4): `nullable` becomes a null type."""
    if isinstance(schema, list):
        return [to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("example", "examples", "discriminator", "xml", "externalDocs", "deprecated"):
            continue
        if key.startswith("x-"):
            continue
        if key == "properties":
            out[key] = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not", "anyOf", "oneOf", "allOf"):
            out[key] = to_json_schema(value)
        else:
            out[key] = value
    if out.pop("nullable", False):
        if "type" in out:
            out["type"] = [out["type"], "null"] if isinstance(out["type"], str) else [*out["type"], "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def strict_schema(schema: Any) -> Any:
    """Forbid properties the description does not name (not inside anyOf/oneOf/allOf, whose branches overlap)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if "properties" in out:
        out["properties"] = {k: strict_schema(v) for k, v in out["properties"].items()}
        out.setdefault("additionalProperties", False)
    if isinstance(out.get("items"), dict):
        out["items"] = strict_schema(out["items"])
    return out


# Where GitHub's answers differ from its description, the fake answers like GitHub and checks itself against
# the corrected schema: an outdated review comment has `line` and `position` null.
NULLABLE_IN_RESPONSES = {
    "pulls/list-review-comments": ("line", "position"),
    "pulls/update-review-comment": ("line", "position"),
}


def _patch_response(operation_id: str, schema: dict[str, Any]) -> dict[str, Any]:
    fields = NULLABLE_IN_RESPONSES.get(operation_id, ())
    target = schema.get("items", schema)
    for name in fields:
        target["properties"][name]["nullable"] = True
    return schema


def _error_text(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    text = f"For '{where or 'body'}', {error.message}."
    if error.context:  # anyOf/oneOf: say what each branch missed, as GitHub does ("conclusion" wasn't supplied)
        text += " " + " ".join(sorted({f"({sub.message})" for sub in error.context}))
    return text


@dataclass(frozen=True)
class Param:
    name: str
    location: str  # "path" | "query"
    required: bool
    schema: dict[str, Any]
    multi_segment: bool


@dataclass
class Operation:
    method: str
    template: str
    operation_id: str
    docs_url: str
    params: dict[str, Param]
    regex: re.Pattern[str]
    literal_weight: int
    body_required: bool = False
    body_validator: Draft4Validator | None = None
    strict_body_validator: Draft4Validator | None = None
    responses: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.method} {self.template}"

    def validate_body(self, body: Any) -> tuple[list[str], list[str]]:
        """(errors GitHub answers with 422, unknown fields GitHub silently ignores)."""
        if self.body_validator is None:
            return [], []
        errors = sorted(self.body_validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        if errors:
            return [_error_text(e) for e in errors], []
        assert self.strict_body_validator is not None
        extra = [_error_text(e) for e in self.strict_body_validator.iter_errors(body)]
        return [], extra

    def validate_response(self, status: int, body: Any) -> list[str]:
        by_type = self.responses.get(str(status))
        if by_type is None:
            return [f"status {status} is not described for {self.key}"]
        validator = by_type.get("application/json")
        if validator is None:
            return []
        return [_error_text(e) for e in validator.iter_errors(body)][:5]


def _coerce(value: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        if not re.fullmatch(r"-?\d+", value):
            raise ValueError(f"{value!r} is not an integer")
        return int(value)
    if kind == "boolean":
        if value not in ("true", "false"):
            raise ValueError(f"{value!r} is not a boolean")
        return value == "true"
    return value


class Spec:
    """The operations of the description, matched by method and templated path."""

    def __init__(self, path: Path = SPEC_PATH) -> None:
        self.document = json.loads(path.read_text(encoding="utf-8"))
        self.operations: list[Operation] = []
        for template, item in self.document["paths"].items():
            shared = item.get("parameters", [])
            for method, op in item.items():
                if method == "parameters":
                    continue
                self.operations.append(self._operation(method.upper(), template, op, shared))
        # Literal segments win over templated ones (`pulls/comments/{id}` before `pulls/{number}`).
        self.operations.sort(key=lambda o: -o.literal_weight)
        self.by_id = {o.operation_id: o for o in self.operations}

    def _operation(self, method: str, template: str, op: dict[str, Any], shared: list[Any]) -> Operation:
        params: dict[str, Param] = {}
        for raw in [*shared, *op.get("parameters", [])]:
            if raw["in"] not in ("path", "query"):
                continue
            params[raw["name"]] = Param(
                raw["name"],
                raw["in"],
                bool(raw.get("required")),
                to_json_schema(raw.get("schema", {})),
                bool(raw.get("x-multi-segment")),
            )
        pattern = ""
        for piece in re.split(r"(\{[^}]+\})", template):
            if piece.startswith("{"):
                name = piece[1:-1]
                wide = params[name].multi_segment if name in params else False
                pattern += f"(?P<{name}>.+)" if wide else f"(?P<{name}>[^/]+)"
            else:
                pattern += re.escape(piece)
        literal = len(re.sub(r"\{[^}]+\}", "", template))
        docs = op.get("externalDocs", {}).get("url", "https://docs.github.com/rest")
        result = Operation(
            method, template, op.get("operationId", template), docs, params, re.compile(f"^{pattern}$"), literal
        )
        body = op.get("requestBody")
        if body:
            schema = to_json_schema(body["content"]["application/json"]["schema"])
            result.body_required = bool(body.get("required"))
            result.body_validator = Draft4Validator(schema, format_checker=FORMATS)
            result.strict_body_validator = Draft4Validator(strict_schema(copy.deepcopy(schema)))
        for status, response in op.get("responses", {}).items():
            validators: dict[str, Any] = {}
            for content_type, media in response.get("content", {}).items():
                if "schema" in media:
                    schema = to_json_schema(_patch_response(result.operation_id, copy.deepcopy(media["schema"])))
                    validators[content_type] = Draft4Validator(schema)
            result.responses[status] = validators
        return result

    def match(self, method: str, raw_path: str) -> tuple[Operation | None, dict[str, str], bool]:
        """(operation, raw path values, whether the path exists for some other method)."""
        path_known = False
        for op in self.operations:
            m = op.regex.match(raw_path)
            if not m:
                continue
            if op.method != method:
                path_known = True
                continue
            return op, {k: unquote(v) for k, v in m.groupdict().items()}, True
        return None, {}, path_known

    @staticmethod
    def check_params(
        op: Operation, path_values: dict[str, str], query: dict[str, str]
    ) -> tuple[dict[str, Any], list[str], list[str], list[str]]:
        """(coerced values, path errors, query errors, unknown query names)."""
        values: dict[str, Any] = {}
        path_errors: list[str] = []
        query_errors: list[str] = []
        for name, raw in path_values.items():
            param = op.params[name]
            try:
                value = _coerce(raw, param.schema)
                jsonschema.validate(value, param.schema)
            except (ValueError, jsonschema.ValidationError) as exc:
                path_errors.append(f"path parameter {name}: {getattr(exc, 'message', exc)}")
                continue
            values[name] = value
        unknown = [name for name in query if name not in op.params or op.params[name].location != "query"]
        for name, param in op.params.items():
            if param.location != "query":
                continue
            if name not in query:
                if param.required:
                    query_errors.append(f"query parameter {name} is required")
                elif "default" in param.schema:
                    values[name] = param.schema["default"]
                continue
            try:
                value = _coerce(query[name], param.schema)
                jsonschema.validate(value, param.schema)
            except (ValueError, jsonschema.ValidationError) as exc:
                query_errors.append(f"query parameter {name}: {getattr(exc, 'message', exc)}")
                continue
            values[name] = value
        return values, path_errors, query_errors, unknown


@cache
def load_spec() -> Spec:
    return Spec()
