"""Inputs several operations share: a registered database's local name, a table's identification, a user token."""

from __future__ import annotations

from typing import Any

import attrs

from gateway.errors import BadRequest
from gateway.registry import TableAddress
from gateway.settings.config import MAX_USER_TOKEN_LENGTH
from gateway.web.inputs import RequestInputs, table_identification
from gateway.web.parameters import DocumentContext, Parameter, ReadContext, parameter, parameter_group, required_text

MAX_NAME_LENGTH = 200
"""Longest local database or table name a request may give."""

NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH}


def local_database_name() -> Any:
    """The required ``local_database_name`` of an operation on one registered database."""
    return parameter("Local name of a registered database.", schema=NAME, reader=required_text, required=True)


@attrs.frozen(kw_only=True)
class DatabaseNameInputs:
    """Only the database's local name (GetDatabaseData, UnregisterDatabase, RefreshDatabase)."""

    local_database_name: str = local_database_name()
    """The database."""


def table_parameters(context: DocumentContext) -> dict[str, Parameter]:
    return {
        "local_table_name": Parameter("Local name of a table (the full path wins when given too)."),
        "database": Parameter("Full path: local name of the table's database."),
        "folder": Parameter("Full path: the folder (schema) holding the table."),
        "table": Parameter("Full path: the table's name in its folder."),
    }


def _read_table(raw: RequestInputs, context: ReadContext) -> TableAddress | str | None:
    return table_identification(raw)


def table_by_name_or_path() -> Any:
    """A table named by ``local_table_name`` or the full path (which wins); None when neither is given."""
    return parameter_group(table_parameters, _read_table)


def user_token() -> Any:
    """The required ``user_token`` parameter a grant is looked up by (any length a grant ever took)."""
    return parameter(
        f"The user token the grant is for (1-{MAX_USER_TOKEN_LENGTH} printable characters, no surrounding spaces; "
        "tokens granted before min_user_token_length was raised are still found).",
        schema={"type": "string", "minLength": 1, "maxLength": MAX_USER_TOKEN_LENGTH},
        reader=lambda name, text, context: valid_user_token(name, text, minimum=1),
        required=True,
    )


def new_grantee() -> Any:
    """The required ``user_token`` a table is granted to: at least ``min_user_token_length`` characters."""
    return parameter(
        "The user token to grant the table to: min_user_token_length to "
        f"{MAX_USER_TOKEN_LENGTH} printable characters, no surrounding spaces.",
        schema=lambda context: {
            "type": "string",
            "minLength": context.config.min_user_token_length,
            "maxLength": MAX_USER_TOKEN_LENGTH,
        },
        reader=lambda name, text, context: valid_user_token(
            name, text, minimum=context.config.min_user_token_length
        ),
        required=True,
    )


def valid_user_token(name: str, text: str | None, *, minimum: int) -> str:
    """A ``user_token`` parameter: printable, ``minimum`` to ``MAX_USER_TOKEN_LENGTH`` characters."""
    if text is None or text == "":
        raise BadRequest(f"parameter {name!r} is required")
    if len(text) > MAX_USER_TOKEN_LENGTH or not text.isprintable() or text != text.strip():
        raise BadRequest(
            f"parameter {name!r} must be 1 to {MAX_USER_TOKEN_LENGTH} printable characters without surrounding spaces"
        )
    if len(text) < minimum:
        raise BadRequest(
            f"parameter {name!r} must be at least {minimum} characters long (a short token can be "
            "guessed); choose a longer one, or mint one with PUT /UserToken"
        )
    return text
