"""The registry file through HTTP: persistence, content, corruption, concurrency, and gateways sharing one file."""

from __future__ import annotations

import asyncio
import json
import resource
import signal
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import pytest
from aiohttp.test_utils import TestClient
from cryptography.fernet import Fernet
from gateway_processes import GatewayProcess, answer
from support import (
    ADMIN_TOKEN,
    DISTINCTIVE_PASSWORD,
    GatewayFactory,
    admin_headers,
    all_table_names,
    database_from,
    database_parameters,
    error_of,
    free_port,
    grant,
    granted_names,
    read_logs,
    register_database,
    registry_path,
    rename_table,
    start_gateway_process,
    stop_process,
    success_of,
    table_data,
    user_headers,
    wait_until_listening,
)

from gateway.contract.connection_fields import ConnectionData
from gateway.registry import FileRegistryStore, RegistryLoadError
from gateway.registry.file_format import dump_registry, load_registry
from gateway.registry.secrets_at_rest import PasswordCipher

FIFTY_TABLES_SQL = (
    "DO $$ BEGIN FOR i IN 1..50 LOOP EXECUTE format('CREATE TABLE public.t%s (id integer)', i); END LOOP; END $$"
)
USER_TOKEN = "user-Registry-Otter-8841"


@pytest.fixture(scope="module")
def fifty_tables() -> Iterator[str]:
    """A database with public.t1 .. public.t50; tests only read it."""
    with database_from(FIFTY_TABLES_SQL) as name:
        yield name


SHOP_SQL = "CREATE TABLE public.alpha (id integer); CREATE TABLE public.beta (id integer)"
"""The module's scratch database (the ``shop_database`` fixture of conftest.py)."""


SHOP_REGISTRATION = {"password": DISTINCTIVE_PASSWORD}
"""The ``shop`` fixture (conftest.py) registers public.alpha and public.beta with this password."""


# -- persistence ------------------------------------------------------------------------------------------


async def test_databases_names_and_grants_survive_a_restart(make_gateway: GatewayFactory, shop_database: str) -> None:
    """A new gateway on the same data folder serves the databases, renamed tables and grants of the previous one."""
    first = await make_gateway()
    await register_database(first, "shop", shop_database)
    await success_of(
        await rename_table(first, {"table": {"local_table_name": "shop_public_alpha"}, "new_local_table_name": "kept"})
    )
    await grant(first, USER_TOKEN, "kept")
    await first.close()

    second = await make_gateway()
    data = await success_of(
        await second.get("/Database", params={"local_database_name": "shop"}, headers=admin_headers())
    )
    assert data[0]["database"] == shop_database
    assert await all_table_names(second) == ["kept", "shop_public_beta"]
    assert await granted_names(second, USER_TOKEN) == ["kept"]
    described = await success_of(await table_data(second, USER_TOKEN, local_table_name="kept"))
    assert described["TableData"]["table_name"] == "alpha"


# -- file content -------------------------------------------------------------------------------------------


async def test_registry_file_is_private_and_holds_no_clear_token(shop: TestClient) -> None:
    """The file is mode 0600, keeps the password, and holds user tokens only as hashes, never the admin token."""
    await grant(shop, USER_TOKEN, "shop_public_alpha")
    path = registry_path(shop)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    content = path.read_bytes()
    document = json.loads(content)
    assert [database["secrets"]["password"] for database in document["databases"]] == [DISTINCTIVE_PASSWORD]
    assert USER_TOKEN.encode() not in content
    assert ADMIN_TOKEN.encode() not in content
    assert len(document["grants"]) == 1
    token_hash = document["grants"][0]["token_hash"]
    assert token_hash != USER_TOKEN and len(token_hash) >= 32


async def test_log_fingerprint_is_a_prefix_of_the_stored_hash(shop: TestClient) -> None:
    """The fingerprint a request line shows is the start of the token's hash in the registry file."""
    await grant(shop, USER_TOKEN, "shop_public_alpha")
    await shop.get("/Table/list", headers=user_headers(USER_TOKEN))
    fingerprint = [e for e in await read_logs(shop) if e.get("path") == "/Table/list"][-1]["user_token_fingerprint"]
    token_hash = json.loads(registry_path(shop).read_bytes())["grants"][0]["token_hash"]
    assert token_hash.startswith(fingerprint)


async def test_password_is_only_in_the_registry_file(shop: TestClient) -> None:
    """No answer of any operation carries the password, and no other file of the data folder holds it."""
    await grant(shop, USER_TOKEN, "shop_public_alpha")
    answers = [
        await shop.get("/Database", params={"local_database_name": "shop"}, headers=admin_headers()),
        await shop.get("/Database/list", headers=admin_headers()),
        await shop.get("/Database/list", headers=user_headers(USER_TOKEN)),
        await shop.get("/Table/list", headers=admin_headers()),
        await shop.get("/Table", params={"local_table_name": "shop_public_alpha"}, headers=user_headers(USER_TOKEN)),
        await shop.post(
            "/GrantTableAccess/",
            params={"user_token": "x-token-000000001", "local_table_name": "shop_public_beta"},
            headers=admin_headers(),
        ),
        await rename_table(shop, {"table": {"local_table_name": "shop_public_beta"}, "new_local_table_name": "b"}),
        await shop.put(
            "/Database",
            params=database_parameters("shop", "postgres", password=DISTINCTIVE_PASSWORD),
            headers=admin_headers(),
        ),
        await shop.get("/Logs/", headers=admin_headers()),
    ]
    for response in answers:
        assert DISTINCTIVE_PASSWORD not in await response.text(), response.url
    folder = registry_path(shop).parent
    holders = [p.name for p in folder.iterdir() if p.is_file() and DISTINCTIVE_PASSWORD.encode() in p.read_bytes()]
    assert holders == [registry_path(shop).name]


async def test_writes_leave_no_temporary_files(shop: TestClient) -> None:
    """After several changes the data folder holds the registry (and its lock), no half-written copies."""
    for index in range(3):
        await grant(shop, f"token-{index:04d}-registry", "shop_public_alpha")
    names = sorted(p.name for p in registry_path(shop).parent.iterdir())
    assert [name for name in names if name.endswith(".tmp")] == []
    assert "registry.json" in names


# -- corruption ----------------------------------------------------------------------------------------------

VALID_HEAD = '"format_version": 1, "token_salt": "00"'
CORRUPT_CONTENTS = {
    "empty": b"",
    "not-json": b'{"format_version": 1, "token_sa',
    "array": b"[]",
    "newer-version": b'{"format_version": 99, "token_salt": "00", "databases": [], "tables": [], "grants": []}',
    "missing-key": ("{" + VALID_HEAD + ', "databases": [], "tables": []}').encode(),
    "unknown-key": ("{" + VALID_HEAD + ', "databases": [], "tables": [], "grants": [], "extra": 1}').encode(),
    "dangling-table": (
        "{" + VALID_HEAD + ', "databases": [], "grants": [],'
        ' "tables": [{"local_name": "t", "database": "gone", "folder": "public", "table": "t"}]}'
    ).encode(),
    "port-as-text": (
        "{" + VALID_HEAD + ', "tables": [], "grants": [], "databases": [{"local_name": "d", "host": "h", '
        '"port": [], "database": "d", "username": "u", "password": "p", "base_type": "postgres"}]}'
    ).encode(),
    "secret-not-text": (
        '{"format_version": 2, "token_salt": "00", "tables": [], "grants": [], "databases": [{"local_name": "d",'
        ' "base_type": "postgres", "connection": {"ip": "h"}, "secrets": {"password": 5}}]}'
    ).encode(),
    "connection-value-object": (
        '{"format_version": 2, "token_salt": "00", "tables": [], "grants": [], "databases": [{"local_name": "d",'
        ' "base_type": "postgres", "connection": {"ip": {"a": 1}}}]}'
    ).encode(),
}


@pytest.mark.parametrize("content", CORRUPT_CONTENTS.values(), ids=CORRUPT_CONTENTS.keys())
async def test_a_corrupt_registry_stops_start_up_and_is_left_as_it_is(
    make_gateway: GatewayFactory, tmp_path: Path, content: bytes
) -> None:
    """A registry file the gateway cannot read refuses start-up naming the file, and the file is not rewritten."""
    path = tmp_path / "data" / "registry.json"
    path.parent.mkdir()
    path.write_bytes(content)
    with pytest.raises(RegistryLoadError) as raised:
        await make_gateway()
    assert str(path) in str(raised.value)
    assert path.read_bytes() == content


async def test_a_registry_corrupted_while_running_is_never_overwritten(shop: TestClient) -> None:
    """If the file turns unreadable under a running gateway, reads go on, writes fail, and the file stays as found."""
    path = registry_path(shop)
    garbage = b'{"format_version": 1, "damaged'
    path.write_bytes(garbage)
    assert await all_table_names(shop) == ["shop_public_alpha", "shop_public_beta"]
    response = await shop.post(
        "/GrantTableAccess/",
        params={"user_token": USER_TOKEN, "local_table_name": "shop_public_alpha"},
        headers=admin_headers(),
    )
    assert response.status == 500
    assert (await error_of(response))["error"] == "internal_error"
    assert path.read_bytes() == garbage
    errors = await read_logs(shop, level="error")
    assert any("registry.json" in json.dumps(entry) for entry in errors)


# -- concurrency ----------------------------------------------------------------------------------------------


async def test_fifty_concurrent_grants_and_renames_are_all_kept(
    make_gateway: GatewayFactory, gateway: TestClient, fifty_tables: str
) -> None:
    """50 grants and 50 renames sent at once all answer 200 and all are in the registry, also after a restart."""
    await register_database(gateway, "shop", fifty_tables)
    requests = []
    for index in range(1, 51):
        requests.append(
            gateway.post(
                "/GrantTableAccess/",
                params={
                    "user_token": f"token-{index:04d}-registry",
                    "database": "shop",
                    "folder": "public",
                    "table": f"t{index}",
                },
                headers=admin_headers(),
            )
        )
        requests.append(
            rename_table(
                gateway,
                {"table": {"local_table_name": f"shop_public_t{index}"}, "new_local_table_name": f"renamed_{index}"},
            )
        )
    responses = await asyncio.gather(*requests)
    assert [r.status for r in responses] == [200] * 100
    expected = sorted(f"renamed_{index}" for index in range(1, 51))
    assert await all_table_names(gateway) == expected
    await gateway.close()

    restarted = await make_gateway()
    assert await all_table_names(restarted) == expected
    for index in (1, 17, 50):
        assert await granted_names(restarted, f"token-{index:04d}-registry") == [f"renamed_{index}"]
    grants = json.loads(registry_path(restarted).read_bytes())["grants"]
    assert len(grants) == 50


async def test_two_apps_on_one_file_see_each_others_changes(make_gateway: GatewayFactory, fifty_tables: str) -> None:
    """Two gateways on one registry see what the other wrote, and concurrent grants through both are all kept."""
    first = await make_gateway()
    second = await make_gateway()
    await register_database(first, "shop", fifty_tables)
    assert await success_of(await second.get("/Database/list", headers=admin_headers())) == {
        "status": "success",
        "List": ["shop"],
    }
    await success_of(
        await rename_table(
            second, {"table": {"local_table_name": "shop_public_t1"}, "new_local_table_name": "first_table"}
        )
    )
    assert "first_table" in await all_table_names(first)

    requests = []
    for index in range(1, 51):
        client = first if index % 2 else second
        requests.append(
            client.post(
                "/GrantTableAccess/",
                params={"user_token": "shared-token-00001", "database": "shop", "folder": "public", "table": f"t{index}"},
                headers=admin_headers(),
            )
        )
    responses = await asyncio.gather(*requests)
    assert [r.status for r in responses] == [200] * 50
    for client in (first, second):
        assert len(await granted_names(client, "shared-token-00001")) == 50


async def test_a_gateway_process_and_an_app_share_one_file(
    make_gateway: GatewayFactory, fifty_tables: str, tmp_path: Path
) -> None:
    """A separate `dbgateway serve` process and an in-process app on one file lose none of 50 concurrent grants."""
    app_client = await make_gateway()
    await register_database(app_client, "shop", fifty_tables)
    port = free_port()
    process = start_gateway_process(tmp_path / "data", port, DBGATEWAY_ADMIN_TOKEN=ADMIN_TOKEN)
    try:
        await asyncio.to_thread(wait_until_listening, process, port)
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{base}/Database/list", headers=admin_headers()) as response:
                assert (await response.json())["List"] == ["shop"]

            async def grant_through_process(index: int) -> int:
                params = {"user_token": "shared-token-00001", "database": "shop", "folder": "public", "table": f"t{index}"}
                async with session.post(f"{base}/GrantTableAccess/", params=params, headers=admin_headers()) as answer:
                    return answer.status

            async def grant_through_app(index: int) -> int:
                params = {"user_token": "shared-token-00001", "database": "shop", "folder": "public", "table": f"t{index}"}
                return (await app_client.post("/GrantTableAccess/", params=params, headers=admin_headers())).status

            statuses = await asyncio.gather(
                *(grant_through_process(i) if i % 2 else grant_through_app(i) for i in range(1, 51))
            )
            assert statuses == [200] * 50
            async with session.get(f"{base}/Table/list", headers=user_headers("shared-token-00001")) as response:
                assert len((await response.json())["List"]) == 50
        assert len(await granted_names(app_client, "shared-token-00001")) == 50
    finally:
        code, stderr = stop_process(process)
    assert code == 0, stderr


# -- storage full ----------------------------------------------------------------------------------------------

REGISTRY_SIZE_LIMIT = 2500
"""Bytes the gateway process may write to one file: a few hundred more than a registry with "shop" and a grant."""


def limited_file_size() -> None:
    """In the gateway process before exec: files may not grow past the limit (writes then fail with EFBIG)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write instead of killing the process
    resource.setrlimit(resource.RLIMIT_FSIZE, (REGISTRY_SIZE_LIMIT, REGISTRY_SIZE_LIMIT))


async def test_a_registry_write_without_room_answers_507_and_keeps_the_old_file(
    shop_database: str, tmp_path: Path
) -> None:
    """No room: 507 registry_unwritable, the file as it was, reads go on, /readyz says so until a write fits."""
    gateway = GatewayProcess(tmp_path / "data", preexec_fn=limited_file_size, log_to_pipe=True)
    path = tmp_path / "data" / "registry.json"
    try:
        gateway.wait_until_listening()
        async with aiohttp.ClientSession() as session:
            put = await answer(
                session, "PUT", gateway.url("/Database"), params=database_parameters("shop", shop_database),
                headers=admin_headers(),
            )  # fmt: skip
            assert put[0] == 200, put
            assert (await grant_through(session, gateway, "doomed-token-0123456", "POST"))[0] == 200
            for _ in range(100):  # each minted token adds about 70 bytes to the file
                before = path.read_bytes()
                status, body = await answer(session, "PUT", gateway.url("/UserToken"), headers=admin_headers())
                if status != 200:
                    break
            assert (status, body["error"]) == (507, "registry_unwritable"), body
            assert "File too large" in body["message"]
            assert path.read_bytes() == before
            assert (await answer(session, "GET", gateway.url("/readyz")))[1]["registry"] == "unwritable"
            assert (await answer(session, "GET", gateway.url("/Database/list"), headers=admin_headers()))[0] == 200
            query = {"local_database_name": "shop", "query": "SELECT count(*) FROM public.alpha"}
            reader = user_headers("doomed-token-0123456")
            data = await answer(session, "GET", gateway.url("/GetData"), params=query, headers=reader)
            assert data[0] == 200, data

            revoked = await grant_through(session, gateway, "doomed-token-0123456", "DELETE")  # the file shrinks: it fits
            assert revoked[0] == 200, revoked
            assert (await answer(session, "GET", gateway.url("/readyz")))[1]["registry"] == "loaded"
        assert len(path.read_bytes()) < len(before)
        assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
    finally:
        assert gateway.stop() == 0
    assert '"error":"registry_unwritable"' in gateway.log()


async def grant_through(
    session: aiohttp.ClientSession, gateway: GatewayProcess, token: str, method: str
) -> tuple[int, Any]:
    params = {"user_token": token, "local_table_name": "shop_public_alpha"}
    return await answer(session, method, gateway.url("/GrantTableAccess"), params=params, headers=admin_headers())


# -- one look at the file per request ----------------------------------------------------------------------


async def test_a_getdata_request_looks_at_the_registry_file_once(shop: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """GetData reads the registry once, into its request context: one stat of the file, not one per reader
    (access check, grants, audit entry, access line)."""
    await grant(shop, USER_TOKEN, "shop_public_alpha")
    looks = 0
    look_at_file = FileRegistryStore._file_signature

    def counted(self: FileRegistryStore) -> Any:
        nonlocal looks
        looks += 1
        return look_at_file(self)

    monkeypatch.setattr(FileRegistryStore, "_file_signature", counted)
    answered = await shop.get(
        "/GetData",
        params={"local_database_name": "shop", "query": "SELECT id FROM public.alpha"},
        headers=user_headers(USER_TOKEN),
    )
    assert answered.status == 200, await answered.text()
    assert looks == 1


# -- format 1 (five fixed connection keys) migrates on load ----------------------------------------------------


FORMAT_1 = {
    "format_version": 1,
    "token_salt": "00",
    "databases": [
        {"local_name": "shop", "host": "db.example", "port": 5433, "database": "shop", "username": "reader",
         "password": "SECRET_SEALED", "base_type": "postgres"},
        {"local_name": "notes", "database": "/srv/notes.sqlite3", "base_type": "sqlite"},
    ],
    "tables": [{"local_name": "shop_public_t", "database": "shop", "folder": "public", "table": "t"}],
    "grants": [{"token_hash": "ab" * 32, "tables": [{"database": "shop", "folder": "public", "table": "t"}]}],
    "minted_tokens": ["cd" * 32],
}


@pytest.mark.parametrize("key", [None, Fernet.generate_key().decode()], ids=["clear", "encrypted"])
def test_a_format_1_registry_loads_with_nothing_lost_and_is_written_as_format_2(key: str | None) -> None:
    """host becomes the field ip, password a secret (still sealed at rest), the rest unchanged."""
    cipher = PasswordCipher(key)
    document = json.loads(json.dumps(FORMAT_1).replace("SECRET_SEALED", cipher.seal("pw-Numbat-3")))
    state = load_registry(json.dumps(document).encode(), cipher)
    shop, notes = state.database("shop"), state.database("notes")
    assert shop.connection == ConnectionData(
        {"ip": "db.example", "port": 5433, "database": "shop", "username": "reader"}, {"password": "pw-Numbat-3"}
    )
    assert notes.connection == ConnectionData({"database": "/srv/notes.sqlite3"})
    assert (shop.base_type, notes.base_type) == ("postgres", "sqlite")
    assert list(state.tables) == ["shop_public_t"] and state.minted_tokens == frozenset({"cd" * 32})
    assert [sorted(attrs.astuple(a) for a in tables) for tables in state.grants.values()] == [[("shop", "public", "t")]]
    written = json.loads(dump_registry(state, cipher))
    assert written["format_version"] == 2
    assert written["databases"][1]["connection"] == {"ip": "db.example", "port": 5433, "database": "shop",
                                                     "username": "reader"}
    assert (written["databases"][1]["secrets"]["password"] == "pw-Numbat-3") == (key is None)
    assert "secrets" not in written["databases"][0]
    assert load_registry(dump_registry(state, cipher), cipher) == state
