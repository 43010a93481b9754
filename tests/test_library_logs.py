"""aiohttp's and asyncio's own log records reach stderr and /Logs/ as JSON events, redacted, while an app serves."""

from __future__ import annotations

import asyncio
import json
import logging

from aiohttp.test_utils import TestClient

from support import ADMIN_TOKEN, GatewayFactory, read_logs


def library_entries(entries: list[dict[str, object]]) -> list[dict[str, object]]:
    return [entry for entry in entries if entry["event"] == "library_log"]


async def test_an_asyncio_error_with_a_traceback_is_one_json_event(gateway: TestClient) -> None:
    """What asyncio's exception handler logs (a failed task nobody awaited) arrives with its traceback."""
    try:
        raise ValueError("boom-from-a-forgotten-task")
    except ValueError as error:
        asyncio.get_running_loop().call_exception_handler({"message": "Task exception was never retrieved", "exception": error})
    (entry,) = library_entries(await read_logs(gateway))
    assert entry["logger"] == "asyncio" and entry["level"] == "error"
    assert entry["message"] == "Task exception was never retrieved"
    assert "ValueError: boom-from-a-forgotten-task" in str(entry["exception"])


async def test_aiohttp_warnings_arrive_and_are_redacted(gateway: TestClient) -> None:
    """A record of an aiohttp logger goes through the same redaction as every event."""
    logging.getLogger("aiohttp.server").warning("peer sent admin token %s", ADMIN_TOKEN)
    (entry,) = library_entries(await read_logs(gateway))
    assert entry["logger"] == "aiohttp.server" and entry["level"] == "warning"
    assert ADMIN_TOKEN not in json.dumps(entry) and "[redacted]" in str(entry["message"])


async def test_records_go_to_stderr_as_json_lines_too(make_gateway: GatewayFactory) -> None:
    """The same event is a JSON line on the app's stream; nothing bypasses it as a bare traceback."""
    client = await make_gateway()
    logging.getLogger("aiohttp.web").error("a library error")
    lines = [json.loads(line) for line in client.log_stream.getvalue().splitlines() if line]  # type: ignore[attr-defined]
    assert any(line["event"] == "library_log" and line["message"] == "a library error" for line in lines)


async def test_the_bridge_is_removed_when_the_app_stops(make_gateway: GatewayFactory) -> None:
    """A stopped app leaves no handler behind on the libraries' loggers."""
    before = list(logging.getLogger("asyncio").handlers)
    client = await make_gateway()
    assert len(logging.getLogger("asyncio").handlers) == len(before) + 1
    await client.close()
    assert logging.getLogger("asyncio").handlers == before
