"""Logs (GET /Logs/): shape, level filtering, limit, the access log, and secrets kept out of every log."""

from __future__ import annotations

import io
import json
import re
from datetime import datetime, timedelta

import pytest
from aiohttp import ClientPayloadError
from aiohttp.test_utils import TestClient

from gateway.web.keys import LOGGER
from gateway.observability.log_ring import LogLevel, LogQuery, LogRing
from gateway.observability.logbook import REDACTED, SecretRedactor, make_loggers, request_log_fields, request_secrets
from support import (
    ADMIN_TOKEN,
    DISTINCTIVE_PASSWORD,
    admin_headers,
    database_parameters,
    error_of,
    free_port,
    GatewayFactory,
    grant,
    read_logs,
    register_database,
    success_of,
    user_headers,
)

LEVEL_ORDER = ["debug", "info", "warning", "error"]
DISTINCTIVE_USER_TOKEN = "user-Quokka-5521-token"


@pytest.fixture
async def seeded(make_gateway: GatewayFactory) -> TestClient:
    """A gateway logging at debug, with one entry of each level written through its own logger."""
    client = await make_gateway(log_level="debug")
    logger = client.app[LOGGER]
    logger.debug("seed_debug")
    logger.info("seed_info")
    logger.warning("seed_warning")
    logger.error("seed_error")
    return client


def events(entries: list[dict[str, object]]) -> list[object]:
    """The event names of log entries, in order."""
    return [entry["event"] for entry in entries]


# -- shape ------------------------------------------------------------------------------------------------


async def test_logs_answer_is_one_object_with_a_logs_string(gateway: TestClient) -> None:
    """The answer is [{"status":"success","logs":<string>}]."""
    body = await success_of(await gateway.get("/Logs/", headers=admin_headers()))
    assert isinstance(body, list) and len(body) == 1
    assert set(body[0]) == {"status", "logs"}
    assert body[0]["status"] == "success"
    assert isinstance(body[0]["logs"], str)


async def test_each_line_is_a_json_object_with_utc_timestamp_level_and_event(seeded: TestClient) -> None:
    """Every line parses as JSON with an ISO 8601 UTC timestamp, a known level and an event, oldest first."""
    await seeded.get("/Database/list", headers=admin_headers())
    entries = await read_logs(seeded)
    assert len(entries) >= 5
    stamps = []
    for entry in entries:
        assert isinstance(entry, dict)
        assert entry["level"] in LEVEL_ORDER
        assert isinstance(entry["event"], str) and entry["event"]
        stamp = datetime.fromisoformat(str(entry["timestamp"]))
        assert stamp.utcoffset() == timedelta(0)
        stamps.append(stamp)
    assert stamps == sorted(stamps)


# -- level filtering ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "lowest"),
    [
        (None, "debug"),
        ("debug", "debug"),
        ("degug", "debug"),
        ("DeGuG", "debug"),
        ("DEBUG", "debug"),
        ("info", "info"),
        ("Info", "info"),
        ("warning", "warning"),
        ("WARNING", "warning"),
        ("error", "error"),
        ("ERROR", "error"),
    ],
)
async def test_level_returns_entries_at_that_level_and_above(
    seeded: TestClient, level: str | None, lowest: str
) -> None:
    """Each level (any case; degug = debug; absent = debug) answers exactly the entries at it and above."""
    entries = await read_logs(seeded, **({} if level is None else {"level": level}))
    wanted = LEVEL_ORDER[LEVEL_ORDER.index(lowest) :]
    assert {entry["level"] for entry in entries} <= set(wanted)
    seeds = [event for event in events(entries) if str(event).startswith("seed_")]
    assert seeds == [f"seed_{name}" for name in wanted]


async def test_info_level_includes_the_access_log(seeded: TestClient) -> None:
    """The request lines are at info: level=info shows them, level=warning does not."""
    await seeded.get("/Database/list", headers=admin_headers())
    assert "request" in events(await read_logs(seeded, level="info"))
    assert "request" not in events(await read_logs(seeded, level="warning"))


async def test_a_failed_registration_is_logged_at_error(gateway: TestClient) -> None:
    """An AddDatabase that cannot connect leaves an error entry saying database_unavailable."""
    response = await gateway.put(
        "/Database", params=database_parameters("ghost", "postgres", port=str(free_port())), headers=admin_headers()
    )
    assert response.status == 502
    errors = await read_logs(gateway, level="error")
    assert errors
    assert all(entry["level"] == "error" for entry in errors)
    assert any("database_unavailable" in str(entry) for entry in errors)


@pytest.mark.parametrize("level", ["verbose", "critical", "warn", "0", "debugg"])
async def test_another_level_is_a_bad_request(gateway: TestClient, level: str) -> None:
    """A level outside debug/degug/info/warning/error is 400 naming 'level'."""
    response = await gateway.get("/Logs/", params={"level": level}, headers=admin_headers())
    assert response.status == 400
    body = await error_of(response)
    assert body["error"] == "bad_request"
    assert "level" in body["message"]


# -- limit ------------------------------------------------------------------------------------------------------


async def test_limit_answers_the_newest_entries(seeded: TestClient) -> None:
    """limit=N answers the newest N entries, oldest first."""
    for _ in range(3):
        await seeded.get("/Database/list", headers=admin_headers())
    limited = await read_logs(seeded, limit="3")
    everything = await read_logs(seeded)
    assert len(limited) == 3
    # The later full read also holds the line logging the limited read itself, after the three.
    assert everything[-4:-1] == limited


async def test_limit_combines_with_level(seeded: TestClient) -> None:
    """limit applies after the level filter."""
    entries = await read_logs(seeded, level="warning", limit="1")
    assert events(entries) == ["seed_error"]


@pytest.mark.parametrize("limit", ["0", "-1", "abc", "1.5"])
async def test_limit_must_be_a_positive_integer(gateway: TestClient, limit: str) -> None:
    """A limit that is not a positive integer is 400 naming 'limit'."""
    response = await gateway.get("/Logs/", params={"limit": limit}, headers=admin_headers())
    assert response.status == 400
    assert "limit" in (await error_of(response))["message"]


# -- access -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers", [{}, {"admin_token": ADMIN_TOKEN[:-1]}, {"user_token": "someone"}], ids=["absent", "wrong", "user"]
)
async def test_logs_need_the_admin_token(gateway: TestClient, headers: dict[str, str]) -> None:
    """Without the admin token (wrong, absent, or a user token instead) Logs is 403 access_denied."""
    response = await gateway.get("/Logs/", headers=headers)
    assert response.status == 403
    assert (await error_of(response))["error"] == "access_denied"


# -- the access log ------------------------------------------------------------------------------------------------


async def test_every_request_is_logged_with_method_path_status_duration_and_fingerprints(gateway: TestClient) -> None:
    """A request's info line has method, path, status, duration_ms and 12-hex token fingerprints, not tokens."""
    await gateway.get("/Database", params={"local_database_name": "nowhere"}, headers=admin_headers())
    await gateway.get("/Table/list", headers=user_headers(DISTINCTIVE_USER_TOKEN))
    await gateway.get("/no/such/route")
    requests = [entry for entry in await read_logs(gateway) if entry["event"] == "request"]
    by_path = {entry["path"]: entry for entry in requests}

    admin_line = by_path["/Database"]
    assert admin_line["level"] == "info"
    assert (admin_line["method"], admin_line["status"]) == ("GET", 404)
    assert isinstance(admin_line["duration_ms"], int | float) and admin_line["duration_ms"] >= 0
    assert re.fullmatch(r"[0-9a-f]{12}", str(admin_line["admin_token_fingerprint"]))
    assert admin_line.get("user_token_fingerprint") is None

    user_line = by_path["/Table/list"]
    assert (user_line["method"], user_line["status"]) == ("GET", 200)
    assert re.fullmatch(r"[0-9a-f]{12}", str(user_line["user_token_fingerprint"]))
    assert user_line.get("admin_token_fingerprint") is None

    assert by_path["/no/such/route"]["status"] == 404


async def test_fingerprints_tell_tokens_apart(gateway: TestClient) -> None:
    """The same token always has the same fingerprint; two tokens have different ones."""
    for token in ("token-one-aaaa", "token-two-bbbb", "token-one-aaaa"):
        await gateway.get("/Table/list", headers=user_headers(token))
    prints = [
        e["user_token_fingerprint"]
        for e in await read_logs(gateway)
        if e["event"] == "request" and e["path"] == "/Table/list"
    ]
    assert len(prints) == 3
    assert prints[0] == prints[2] != prints[1]


async def test_each_request_is_logged_once(gateway: TestClient) -> None:
    """Two requests give two request lines, whatever their outcome."""
    await gateway.get("/Database/list", headers=admin_headers())
    await gateway.get("/Database/list", headers={"admin_token": "wrong-admin-token-000000"})
    lines = [e for e in await read_logs(gateway) if e["event"] == "request" and e["path"] == "/Database/list"]
    assert [line["status"] for line in lines] == [200, 403]


# -- secrets never logged -------------------------------------------------------------------------------------------


async def test_password_never_appears_in_logs_stderr_or_answers(gateway: TestClient, served_database: str) -> None:
    """A password sent to AddDatabase (200, 400, 409, 502) is in no log entry, no stderr line and no answer."""
    answers = []
    statuses = []
    attempts = [
        database_parameters("shop", served_database, password=DISTINCTIVE_PASSWORD),
        database_parameters("shop", served_database, password=DISTINCTIVE_PASSWORD),
        database_parameters("ghost", served_database, port=str(free_port()), password=DISTINCTIVE_PASSWORD),
        database_parameters("lost", "dbgw_test_no_such_database_77", password=DISTINCTIVE_PASSWORD),
        database_parameters("bad port", served_database, port="x", password=DISTINCTIVE_PASSWORD),
    ]
    for parameters in attempts:
        response = await gateway.put("/Database", params=parameters, headers=admin_headers())
        statuses.append(response.status)
        answers.append(await response.text())
    body_attempt = await gateway.put(
        "/Database",
        json=database_parameters("in_body", served_database, password=DISTINCTIVE_PASSWORD),
        headers=admin_headers(),
    )
    statuses.append(body_attempt.status)
    answers.append(await body_attempt.text())
    assert statuses == [200, 409, 502, 502, 400, 200]
    for path, params in [("/Database", {"local_database_name": "shop"}), ("/Database/list", {}), ("/Table/list", {})]:
        answers.append(await (await gateway.get(path, params=params, headers=admin_headers())).text())
    logs = await (await gateway.get("/Logs/", params={"level": "debug"}, headers=admin_headers())).text()
    assert "pw-Zebra" not in logs
    assert DISTINCTIVE_PASSWORD not in gateway.log_stream.getvalue()  # type: ignore[attr-defined]
    for answer in answers:
        assert DISTINCTIVE_PASSWORD not in answer


async def test_tokens_never_appear_in_logs_or_stderr(gateway: TestClient, served_database: str) -> None:
    """The admin token and user tokens (granted, presented, or unknown) are in no log entry and no stderr line."""
    await register_database(gateway, "shop", served_database)
    await grant(gateway, DISTINCTIVE_USER_TOKEN, "shop_public_t")
    await gateway.get(
        "/Table", params={"local_table_name": "shop_public_t"}, headers=user_headers(DISTINCTIVE_USER_TOKEN)
    )
    await gateway.get("/Table", params={"local_table_name": "nowhere"}, headers=user_headers(DISTINCTIVE_USER_TOKEN))
    await gateway.get("/Database/list", headers={"admin_token": "wrong-Admin-Token-Walrus-77"})
    await gateway.get("/Database/list", headers={"Admin-Token": ADMIN_TOKEN, "User-Token": "other-Token-Heron-33"})
    logs = await (await gateway.get("/Logs/", headers=admin_headers())).text()
    stderr = gateway.log_stream.getvalue()  # type: ignore[attr-defined]
    for secret in (ADMIN_TOKEN, DISTINCTIVE_USER_TOKEN, "wrong-Admin-Token-Walrus-77", "other-Token-Heron-33"):
        assert secret not in logs
        assert secret not in stderr


async def test_log_stream_receives_what_the_logs_endpoint_shows(gateway: TestClient) -> None:
    """Every entry the Logs endpoint answers was also written to the log stream (stderr)."""
    await gateway.get("/Database/list", headers=admin_headers())
    body = await success_of(await gateway.get("/Logs/", headers=admin_headers()))
    stream_lines = gateway.log_stream.getvalue().splitlines()  # type: ignore[attr-defined]
    for line in body[0]["logs"].split("\n"):
        assert line in stream_lines


# -- redaction: secrets the gateway does log come out as [redacted] ------------------------------------------------

DSN_PASSWORD = "dsn-Pangolin-4471"
INLINE_PASSWORD = "kv-Marmot-2290"


@pytest.mark.parametrize(
    ("database", "secret"),
    [
        (f"missing_{DISTINCTIVE_PASSWORD}", DISTINCTIVE_PASSWORD),
        (f"missing_{ADMIN_TOKEN}", ADMIN_TOKEN),
        (f"postgresql://reader:{DSN_PASSWORD}@db.example:5432/shop", DSN_PASSWORD),
        (f"host=db.example password={INLINE_PASSWORD} dbname=shop", INLINE_PASSWORD),
        (f"host=db.example PassWord = {INLINE_PASSWORD} dbname=shop", INLINE_PASSWORD),
        # The pattern ignores case the Unicode way: a long s (U+017F) matches "s" too.
        (f"host=db.example pa\u017fsword={INLINE_PASSWORD} dbname=shop", INLINE_PASSWORD),
    ],
    ids=["registered-password", "admin-token", "url-dsn", "keyword-dsn", "keyword-dsn-mixed-case", "keyword-dsn-long-s"],
)
async def test_a_secret_quoted_by_a_failed_connection_is_redacted(
    gateway: TestClient, database: str, secret: str
) -> None:
    """A password, the admin token or a DSN that the database's refusal quotes is [redacted] in logs, stderr, answer."""
    parameters = database_parameters("quoted", database, password=DISTINCTIVE_PASSWORD)
    response = await gateway.put("/Database", params=parameters, headers=admin_headers())
    assert response.status == 502
    answer = await error_of(response)
    assert secret not in answer["message"] and "[redacted]" in answer["message"], answer
    failures = [e for e in await read_logs(gateway, level="error") if e["event"] == "request_failed"]
    assert len(failures) == 1 and "[redacted]" in str(failures[0]["message"]), failures
    logs = await (await gateway.get("/Logs/", headers=admin_headers())).text()
    stderr = gateway.log_stream.getvalue()  # type: ignore[attr-defined]
    assert secret not in logs and secret not in stderr
    assert '\\"request_failed\\"' in logs and "[redacted]" in stderr


async def test_the_user_token_quoted_by_a_failure_while_streaming_is_redacted(
    gateway: TestClient, served_database: str
) -> None:
    """A database error quoting the request's own user token, logged mid-stream, shows [redacted] instead."""
    await register_database(gateway, "shop", served_database)
    await grant(gateway, DISTINCTIVE_USER_TOKEN, "shop_public_t")
    # Row 50001 fails ("invalid input syntax for type integer: "50001<token>""), long after the answer began.
    query = (
        f"select repeat('x', 40) as filler, case when g > 50000 then (g::text || '{DISTINCTIVE_USER_TOKEN}')::int end "
        "from generate_series(1, 100000) as g"
    )
    response = await gateway.get(
        "/GetData", params={"local_database_name": "shop", "query": query}, headers=user_headers(DISTINCTIVE_USER_TOKEN)
    )
    assert response.status == 200
    with pytest.raises(ClientPayloadError):
        await response.read()
    failures = [e for e in await read_logs(gateway, level="error") if e["event"] == "getdata_failed_while_streaming"]
    assert len(failures) == 1 and "[redacted]" in str(failures[0]["message"]), failures
    stderr = gateway.log_stream.getvalue()  # type: ignore[attr-defined]
    assert DISTINCTIVE_USER_TOKEN not in stderr
    assert DISTINCTIVE_USER_TOKEN not in await (await gateway.get("/Logs/", headers=admin_headers())).text()


async def test_a_token_sent_in_the_path_is_redacted_in_the_access_line(gateway: TestClient) -> None:
    """The request line's path is free text from the client: the request's own token in it is [redacted]."""
    token = "path-Leaked-Token-4410"
    response = await gateway.get(f"/Table/{token}", headers=user_headers(token))
    assert response.status == 404
    (line,) = [e for e in await read_logs(gateway) if e["event"] == "request" and e["status"] == 404]
    assert line["path"] == "/Table/[redacted]"


async def test_secrets_logged_through_the_app_logger_are_redacted(gateway: TestClient, served_database: str) -> None:
    """Fields named like secrets, known passwords and tokens in free text, and DSN passwords are all [redacted]."""
    await register_database(gateway, "shop", served_database, password=DISTINCTIVE_PASSWORD)
    gateway.app[LOGGER].warning(
        "redaction_probe",
        password="field-Password-8812",
        user_token="field-User-Token-5532",
        dsn="postgresql://reader@db.example/shop",
        nested={"secret": "nested-Secret-1177", "list": [f"pw is {DISTINCTIVE_PASSWORD}"]},
        note=f"the admin token {ADMIN_TOKEN} and the password {DISTINCTIVE_PASSWORD} in a sentence",
        url=f"postgresql://reader:{DSN_PASSWORD}@db.example:5432/shop",
        libpq=f"host=db.example password={INLINE_PASSWORD} dbname=shop",
        db_password=8812,  # not text, but named like a secret
    )
    (probe,) = [e for e in await read_logs(gateway, level="warning") if e["event"] == "redaction_probe"]
    assert probe["password"] == probe["user_token"] == probe["dsn"] == probe["db_password"] == "[redacted]"
    assert probe["nested"] == {"secret": "[redacted]", "list": ["pw is [redacted]"]}
    assert probe["note"] == "the admin token [redacted] and the password [redacted] in a sentence"
    assert probe["url"] == "postgresql://reader:[redacted]@db.example:5432/shop"
    assert probe["libpq"] == "host=db.example password=[redacted] dbname=shop"
    stderr = gateway.log_stream.getvalue()  # type: ignore[attr-defined]
    logs = await (await gateway.get("/Logs/", headers=admin_headers())).text()
    for secret in (
        "field-Password-8812", "field-User-Token-5532", "nested-Secret-1177",
        ADMIN_TOKEN, DISTINCTIVE_PASSWORD, DSN_PASSWORD, INLINE_PASSWORD,
    ):  # fmt: skip
        assert secret not in stderr and secret not in logs


# -- the fast path of the per-request events -------------------------------------------------------------------


@pytest.mark.parametrize("console", [False, True], ids=["json", "console"])
def test_the_fast_path_writes_what_structlog_writes(console: bool) -> None:
    """The access line and audit entry written on the fast path are the entries structlog's chain writes, redacted alike."""
    ring = LogRing(10)
    redactor = SecretRedactor([DISTINCTIVE_PASSWORD])
    stream = io.StringIO()
    loggers = make_loggers(ring, redactor, stream=stream, instance="gw-test", console=console)
    fields = {
        "method": "GET",
        "path": f"/x/{DISTINCTIVE_PASSWORD}/postgresql://reader:{DSN_PASSWORD}@db/shop",
        "status": 200,
        "duration_ms": 1.5,
        "tables": [f"t_{DISTINCTIVE_PASSWORD}"],
        "db_password": "in a field named for it",
        "user_token_fingerprint": "abc",
    }
    bound = request_log_fields.set({"request_id": "r-1", "note": f"bound {DISTINCTIVE_PASSWORD}"})
    try:
        loggers.structured.info("request", **fields)
        loggers.fixed.info("request", **fields)
    finally:
        request_log_fields.reset(bound)

    def without_time(text: str) -> str:
        return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "<time>", text)

    ring_lines = [without_time(line) for _, line in ring.read(LogQuery())]
    stream_lines = [without_time(line) for line in stream.getvalue().splitlines()]
    assert len(ring_lines) == 2 and ring_lines[0] == ring_lines[1]
    assert len(stream_lines) == 2 and stream_lines[0] == stream_lines[1]
    assert DISTINCTIVE_PASSWORD not in ring_lines[1] + stream_lines[1] and DSN_PASSWORD not in ring_lines[1]
    entry = json.loads(ring_lines[1])
    assert entry["db_password"] == "[redacted]" and entry["request_id"] == "r-1" and entry["instance"] == "gw-test"


def test_the_fast_path_follows_the_log_level() -> None:
    """Above info (log_level = warning) the fast path writes nothing, as the structlog logger would not."""
    ring = LogRing(10)
    loggers = make_loggers(ring, SecretRedactor(), stream=io.StringIO(), level=LogLevel.WARNING)
    loggers.fixed.info("request", status=200)
    loggers.structured.info("request", status=200)
    assert ring.read(LogQuery()) == []


def test_a_secret_known_mid_request_is_redacted_from_the_requests_later_entries() -> None:
    """A password registered while a request runs is hidden from that request's next entries, tokens still too."""
    ring = LogRing(10)
    redactor = SecretRedactor()
    loggers = make_loggers(ring, redactor, stream=io.StringIO())
    user_token = "a-user-token-of-the-request-0123"
    tokens = request_secrets.set((user_token,))
    try:
        loggers.fixed.info("request", path=f"/before/{user_token}")
        redactor.add(DISTINCTIVE_PASSWORD)
        loggers.fixed.info("request", path=f"/after/{DISTINCTIVE_PASSWORD}/{user_token}")
        redactor.discard(DISTINCTIVE_PASSWORD)
        loggers.fixed.info("request", path=f"/forgotten/{DISTINCTIVE_PASSWORD}")
    finally:
        request_secrets.reset(tokens)
    lines = [line for _, line in ring.read(LogQuery())]
    assert user_token not in "".join(lines)
    assert DISTINCTIVE_PASSWORD not in lines[1] and REDACTED in lines[1]
    assert DISTINCTIVE_PASSWORD in lines[2]  # discarded: no longer a secret (a renamed password, say)


def test_a_field_named_for_a_secret_is_hidden_whatever_str_type_names_it() -> None:
    """A key that is a str subclass (enum members, say) is classified by its name like a plain one."""

    class FieldName(str):
        pass

    redacted = SecretRedactor()(None, "info", {FieldName("db_password"): "s3cret-value", "note": "plain"})
    assert list(redacted.values()) == [REDACTED, "plain"]
