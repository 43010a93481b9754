"""The list routes' shared rule (ListDatabase at /Database/list, ListTable at /Table/list): which token lists what."""

from __future__ import annotations

from collections.abc import Callable

import attrs
from aiohttp import web

from gateway.request.auth import ADMIN_TOKEN_HEADERS, USER_TOKEN_HEADERS, hash_user_token, header_token, require_admin
from gateway.errors import TokenRequired
from gateway.web.keys import ADMIN_TOKEN, REGISTRY
from gateway.web.openapi_schemas import Component, success_object
from gateway.web.operations import ACCESS_DENIED, BAD_INPUT, TOKEN_REQUIRED
from gateway.web.parameters import parameter
from gateway.registry import RegistryState
from gateway.request.responses import success

NAME_LIST_ANSWER = Component(
    "NameList", {"description": "Sorted local names.", **success_object(List={"type": "array", "items": {"type": "string"}})}
)
LIST_ERRORS = (BAD_INPUT, TOKEN_REQUIRED, ACCESS_DENIED)


@attrs.frozen(kw_only=True)
class ListInputs:
    """A list route's inputs."""

    local_database_name: str | None = parameter("Only names in this database; an unknown name gives an empty list.")
    """Only names in this database; None: every database."""


async def answer_list(
    request: web.Request,
    inputs: ListInputs,
    *,
    admin_names: Callable[[RegistryState, str | None], list[str]],
    no_token_message: str,
) -> web.Response:
    """The list routes' rule: a valid admin token gets ``admin_names``, only a user token its granted tables.

    An admin token present but wrong is 403 even beside a valid user token; no
    token at all is 401. ``local_database_name`` filters either list.
    """
    app = request.app
    state = app[REGISTRY].state
    only_database = inputs.local_database_name
    if header_token(request, ADMIN_TOKEN_HEADERS) is not None:
        require_admin(request, app[ADMIN_TOKEN])
        names = admin_names(state, only_database)
    elif (token := header_token(request, USER_TOKEN_HEADERS)) is not None:
        token_hash = hash_user_token(state.token_salt, token)
        names = [r.local_name for r in state.granted_tables(token_hash, only_database)]
    else:
        raise TokenRequired(no_token_message)
    return success({"List": sorted(names)}, as_array=False)
