"""The arena's file formats declared once: each format is a dataclass whose fields are its keys
(pydantic reads them), and `Declared` gives it `load` (strict: a missing key, a wrong type or a
bool where a number is asked for is an error) and `to_json` (the same keys back, in field order).
Keys absent from a file take the field's default; keys a file holds beyond the fields are
ignored (additions keep older readers reading). Imports nothing of the arena.

Conventions for the declarations: `Num` for a number that keeps an integer an integer (run.json
writes 3, not 3.0); `OMIT_NONE`/`OMIT_EMPTY` on a field written only when it holds something;
`Field(alias=...)` for a key that is not a Python name; a model_serializer for the few keys
written together or derived."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from . import results

Num = Annotated[int | float, Field(union_mode="smart")]  # an int stays an int
OMIT_NONE = Field(exclude_if=lambda v: v is None)
OMIT_EMPTY = Field(exclude_if=lambda v: not v)
NOT_SAVED = Field(exclude=True)
LAX = Field(strict=False)  # a tuple field: read from a JSON list


def required(*keys: str, absent: dict | None = None) -> Any:
    """A validator for a class body (`_in_file = required(...)`): keys a file must hold although
    the class gives them a default for the code that builds one; absent: what a key missing
    from a file means when that differs from the class's default (older files)."""

    def check(data: Any) -> Any:
        for key in keys:
            if isinstance(data, dict) and key not in data:
                raise ValueError(f"{key}: missing key")
        return (absent or {}) | data if isinstance(data, dict) else data

    return model_validator(mode="before")(check)


class SchemaError(ValueError):
    """str() is `PATH: reason`, PATH like `samples[3].latency_us.p99`."""


@functools.cache
def adapter(kind: type) -> TypeAdapter:
    return TypeAdapter(kind)


# What a pydantic error type asks for, in the words the arena's messages use.
_WANTS = {
    "int_type": "int",
    "int_from_float": "int",
    "float_type": "int/float",
    "bool_type": "bool",
    "string_type": "str",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "an object",
    "dataclass_type": "an object",
    "model_type": "an object",
    "typed_dict_type": "an object",
}


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part not in ("int", "float", "function-after", "json-or-python[json=int,python=int]"):
            out += f".{part}" if out else str(part)
    return out


def message(error: ValidationError) -> str:
    """The first of pydantic's errors as `PATH: reason`."""
    first = error.errors()[0]
    kind, got = first["type"], first.get("input")
    if kind == "missing":
        reason = "missing key"
    elif kind in _WANTS:
        want = "int/float" if {"int", "float"} & set(first["loc"]) else _WANTS[kind]  # a Num: one error per member
        reason = f"must be {want}, got {'null' if got is None else type(got).__name__}"
    elif kind == "literal_error":  # a format's version: "schema: must be 1, got 7"
        reason = f"must be {first['ctx']['expected']}, got {got!r}"
    elif kind == "value_error":  # required(): the key and the reason
        return ".".join(p for p in (_path(first["loc"]), str(first["ctx"]["error"])) if p)
    else:
        reason = first["msg"]
    return f"{_path(first['loc'])}: {reason}"


class Declared:
    """A dataclass declared as a file format: `load` reads it from its JSON object (`load_lines`
    from a file of JSON lines), `to_json` writes it back."""

    @classmethod
    def load(cls, doc: Any) -> Any:
        """Raises SchemaError naming the key path and the reason."""
        try:
            return adapter(cls).validate_json(json.dumps(doc), strict=True)
        except ValidationError as e:
            raise SchemaError(message(e)) from None

    @classmethod
    def load_lines(cls, path: Path) -> list:
        """One per JSON line of path, a line that does not parse (one cut short by a crash)
        skipped. Raises SchemaError `line N: PATH: reason`, OSError when path cannot be read."""
        out = []
        for number, doc in results.numbered_lines(path):
            try:
                out.append(cls.load(doc))
            except SchemaError as e:
                raise SchemaError(f"line {number}: {e}") from None
        return out

    def to_json(self) -> dict:
        return adapter(type(self)).dump_python(self, mode="json", by_alias=True)
