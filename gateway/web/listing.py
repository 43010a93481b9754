"""The list routes' shared rule (ListDatabase at /Database/list, ListTable at /Table/list): which token lists what."""

from __future__ import annotations

from collections.abc import Callable

import attrs
from aiohttp import web

from gateway.errors import TokenRequired
from gateway.registry import RegistryState
from gateway.request.auth import check_admin_token, checked_user_token
from gateway.request.responses import success
from gateway.web.keys import ADMIN_TOKEN, REQUEST_CONTEXT
from gateway.web.openapi_schemas import Component, success_object
from gateway.web.operations import ACCESS_DENIED, BAD_INPUT, TOKEN_REQUIRED
from gateway.web.parameters import parameter

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
    context = request[REQUEST_CONTEXT]  # tokens read and hashed once, the registry as the request found it
    state = context.registry
    only_database = inputs.local_database_name
    if context.admin_token is not None:
        check_admin_token(context.admin_token, request.app[ADMIN_TOKEN])
        names = admin_names(state, only_database)
    elif context.user_token is not None:
        checked_user_token(context.user_token)  # 403 when not UTF-8
        assert context.user_token_hash is not None  # hashed with the token
        names = [r.local_name for r in state.granted_tables(context.user_token_hash, only_database)]
    else:
        raise TokenRequired(no_token_message)
    return success({"List": sorted(names)}, as_array=False)
