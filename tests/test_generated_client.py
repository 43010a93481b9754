"""A Python client generated from the served /openapi.json works for every operation and format, unedited.

openapi-python-client (in the test extra) generates a package from the
document a running gateway serves; the test imports it as generated and calls
every operation it has through it, against that gateway (issue 20: generated
clients sent tokens as ``Authorization: Bearer``, had 128 error classes, and
crashed on ``format=csv``). What the generator needs besides the document is
said there and in docs/api.md, "Generated clients": each token's header is
given to ``AuthenticatedClient`` (``auth_header_name``, ``prefix=""``: the
generator does not read API-key schemes), and NDJSON is read as text
(``content_type_overrides``: it knows no ``application/x-ndjson``).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from support import ADMIN_TOKEN, GatewayFactory, server_parameters

GENERATOR = Path(sys.executable).parent / "openapi-python-client"
PACKAGE = "dbgateway_generated"
GENERATOR_CONFIG = {"content_type_overrides": {"application/x-ndjson": "text/plain"}}
"""The one setting the generator needs: NDJSON is text (it would leave the answer out, as a type it does not know)."""
USER = "generated-client-user-7c41"
QUERY = "SELECT id, label FROM public.items ORDER BY id"
ITEMS_SQL = "CREATE TABLE public.items (id integer PRIMARY KEY, label text); INSERT INTO public.items VALUES (1, 'one'), (2, NULL)"

pytestmark = pytest.mark.skipif(not GENERATOR.exists(), reason="openapi-python-client is not installed (test extra)")


def generate(document: bytes, folder: Path) -> ModuleType:
    """The package openapi-python-client generates from ``document``, imported as generated."""
    (folder / "openapi.json").write_bytes(document)
    (folder / "generator.json").write_text(json.dumps(GENERATOR_CONFIG))
    result = subprocess.run(
        [str(GENERATOR), "generate", "--path", "openapi.json", "--config", "generator.json",
         "--output-path", PACKAGE, "--meta", "none"],
        cwd=folder, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ.get('PATH', '')}"},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING parsing" not in result.stdout, result.stdout  # every operation and answer generated
    # Registered under its name from where it was generated (no search path changes): its modules are then
    # found through the package's own __path__.
    location = folder / PACKAGE
    spec = importlib.util.spec_from_file_location(
        PACKAGE, location / "__init__.py", submodule_search_locations=[str(location)]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    return package


@pytest.fixture
def generated() -> Iterator[Any]:
    """Imports the generated package's modules by name; forgets them after the test."""
    yield lambda name: importlib.import_module(f"{PACKAGE}.{name}")
    for name in [name for name in sys.modules if name == PACKAGE or name.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]


async def test_a_generated_client_calls_every_operation_in_every_format(
    make_gateway: GatewayFactory, items_database: str, tmp_path: Path, generated: Any
) -> None:
    gateway = await make_gateway()
    document = await (await gateway.get("/openapi.json")).read()
    generate(document, tmp_path)
    client_module, models = generated("client"), generated("models")
    base = str(gateway.make_url("")).rstrip("/")
    admin = client_module.AuthenticatedClient(base_url=base, token=ADMIN_TOKEN, auth_header_name="admin_token", prefix="")
    user = client_module.AuthenticatedClient(base_url=base, token=USER, auth_header_name="user_token", prefix="")
    anyone = client_module.Client(base_url=base)
    called: set[str] = set()

    async def call(operation: str, client: Any, status: int = 200, **inputs: Any) -> Any:
        answer = await generated(f"api.default.{operation}").asyncio_detailed(client=client, **inputs)
        assert answer.status_code == status, (operation, answer.status_code, answer.content[:500])
        called.add(operation)
        return answer.parsed

    # Shared error components: one Error class (with the ErrorCode enum) for every operation and status.
    assert not [path.name for path in (tmp_path / PACKAGE / "models").iterdir() if "_response_" in path.name]
    error = await call("get_database_data", admin, 404, local_database_name="nowhere")
    assert isinstance(error, models.Error) and error.error == models.ErrorCode.DATABASE_NOT_FOUND

    assert (await call("open_api", anyone)).to_dict()["openapi"] == "3.1.0"
    assert (await call("index", anyone)).name == "dbgateway"
    assert (await call("healthz", anyone)).alive is True
    assert (await call("readyz", anyone)).registry == models.ReadyRegistry.LOADED
    server = server_parameters()
    added = await call(
        "add_database", admin, local_database_name="shop", ip=server["ip"], port=int(server["port"]),
        database=items_database, username=server["username"], password=server["password"],
        base_type=models.AddDatabaseBaseType.POSTGRES,
    )  # fmt: skip
    assert added[0].local_name == "shop"
    assert (await call("get_database_data", admin, local_database_name="shop"))[0].database == items_database
    assert (await call("update_database", admin, local_database_name="shop", ip=server["ip"]))[0].status == "success"
    assert (await call("refresh_database", admin, local_database_name="shop"))[0].status == "success"
    for listing in ("list_database_or_table", "list_database_or_table_alias"):
        assert (await call(listing, admin)).list_ == ["shop"]
    for listing in ("list_table", "list_table_alias"):
        assert (await call(listing, admin)).list_ == ["shop_public_items"]
    await call("change_local_table_name", admin, local_table_name="shop_public_items", new_local_table_name="items")
    await call("grant_table_access", admin, user_token=USER, local_table_name="items")
    assert [item.to_dict() for item in await call("list_token_grants", admin, user_token=USER)][0]["tables"]
    assert (await call("list_database_or_table", user)).list_ == ["items"]
    described = await call("get_table_data", user, local_table_name="items")
    assert described.to_dict()["TableData"]["columns"] == {"id": "integer", "label": "text"}

    # Every format, through the operation that declares it.
    rows = [{"id": 1, "label": "one"}, {"id": 2, "label": None}]
    for operation, inputs in (("get_data", {"local_database_name": "shop", "query": QUERY}),
                              ("get_data_post", {"body": models.GetDataPostBody(local_database_name="shop", query=QUERY)})):
        result = (await call(operation, user, **inputs))[0]
        assert [row.to_dict() for row in result.data] == rows and result.row_count == 2 and result.truncated is False
    csv = "id,label\r\n1,one\r\n2,\r\n"
    assert await call("get_data_csv", user, local_database_name="shop", query=QUERY) == csv
    assert await call("get_data_csv_post", user, body=models.GetDataCsvPostBody(local_database_name="shop", query=QUERY)) == csv
    ndjson = '{"id":1,"label":"one"}\n{"id":2,"label":null}\n{"row_count":2,"truncated":false}\n'
    assert await call("get_data_ndjson", user, local_database_name="shop", query=QUERY) == ndjson
    body = models.GetDataNdjsonPostBody(local_database_name="shop", query=QUERY)
    assert await call("get_data_ndjson_post", user, body=body) == ndjson
    refused = await call("get_data", user, 400, local_database_name="shop", query="SELECT 1; SELECT 2")
    assert refused.error == models.ErrorCode.QUERY_REJECTED

    # Parameter values (issue 23): a list for the repeated `param`, `params` in a POST body, null as SQL NULL.
    bound = "SELECT id, label FROM public.items WHERE id = $1 OR label IS NOT DISTINCT FROM $2 ORDER BY id"
    result = (await call("get_data", user, local_database_name="shop", query=bound, param=["1", "one"]))[0]
    assert [row.to_dict() for row in result.data] == [rows[0]]
    body = models.GetDataPostBody(local_database_name="shop", query=bound, params=[2, None])
    assert [row.to_dict() for row in (await call("get_data_post", user, body=body))[0].data] == [rows[1]]
    assert await call("get_data_csv", user, local_database_name="shop", query=bound, param=["1", "x"]) == "id,label\r\n1,one\r\n"
    wrong = await call("get_data_post", user, 400, body=models.GetDataPostBody(
        local_database_name="shop", query=bound, params=["one", None]))
    assert wrong.error == models.ErrorCode.QUERY_FAILED and "$1" in wrong.message

    assert "dbgateway_http_requests_total" in await call("metrics", admin)
    assert '"event":"request"' in (await call("logs", admin, level="info", limit=5))[0].logs
    assert (await call("mint_user_token", admin))[0].user_token
    await call("revoke_table_access", admin, user_token=USER, local_table_name="items")
    await call("unregister_database", admin, local_database_name="shop")
    denied = await call("get_data", user, 403, local_database_name="shop", query=QUERY)
    assert denied.error == models.ErrorCode.ACCESS_DENIED

    every = {path.stem for path in (tmp_path / PACKAGE / "api" / "default").glob("*.py")} - {"__init__"}
    assert called == every, sorted(every - called)
