"""Log lines reach stderr in whole-line writes of at most PIPE_BUF bytes, the lines of one event-loop turn together."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys

from gateway.observability.log_stream import (
    ATOMIC_WRITE_BYTES,
    CapturedLog,
    HeldLines,
    flush_held_lines,
    held_lines_for,
)


class CountedWrites(io.StringIO):
    """A stream that remembers each piece written to it."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[str] = []

    def write(self, text: str) -> int:
        self.pieces.append(text)
        return super().write(text)


async def test_the_lines_of_one_turn_go_out_in_one_write_after_it() -> None:
    """Lines written during one turn of the loop are held until it ends, then written together, in order."""
    stream = CountedWrites()
    held = HeldLines(stream)
    for number in range(5):
        held.write(f"line {number}\n")
    assert stream.pieces == []
    await asyncio.sleep(0)
    assert stream.pieces == ["".join(f"line {number}\n" for number in range(5))]


async def test_no_write_is_longer_than_pipe_buf_unless_it_is_one_line() -> None:
    """Held lines go out in pieces of at most ATOMIC_WRITE_BYTES cut at line ends; a longer line alone, whole."""
    stream = CountedWrites()
    held = HeldLines(stream)
    lines = [f"{'x' * 700}{number}\n" for number in range(20)]
    long_line = "é" * 3000 + "\n"  # 6001 bytes of UTF-8 in 3001 characters
    lines[7] = long_line
    for line in lines:
        held.write(line)
    await asyncio.sleep(0)
    assert "".join(stream.pieces) == "".join(lines)
    assert long_line in stream.pieces
    for piece in stream.pieces:
        assert piece.endswith("\n")
        assert piece == long_line or len(piece.encode()) <= ATOMIC_WRITE_BYTES
    assert len(stream.pieces) < len(lines) // 2  # they were joined


def test_outside_an_event_loop_each_line_is_written_at_once() -> None:
    """At start-up and exit (no running loop) a line is on the stream when write returns."""
    stream = CountedWrites()
    held = HeldLines(stream)
    held.write("first\n")
    held.write("second\n")
    assert stream.pieces == ["first\n", "second\n"]


async def test_loggers_of_one_stream_share_its_writes_and_tests_read_everything() -> None:
    """Two loggers of one stream hold their lines in one place; CapturedLog.getvalue and flush_held_lines write them."""
    stream = CapturedLog()
    assert held_lines_for(stream) is held_lines_for(stream)
    held_lines_for(stream).write("from one logger\n")
    held_lines_for(stream).write("from another\n")
    assert stream.getvalue() == "from one logger\nfrom another\n"
    other = CapturedLog()
    keep = held_lines_for(other)
    keep.write("held at exit\n")
    flush_held_lines()
    assert io.StringIO.getvalue(other) == "held at exit\n"


def test_lines_held_when_the_process_exits_are_written() -> None:
    """A line held back when the interpreter exits (its loop gone) still reaches stderr."""
    program = (
        "import asyncio, sys\n"
        "from gateway.observability.log_stream import held_lines_for\n"
        "held = held_lines_for(sys.stderr)\n"
        "loop = asyncio.new_event_loop()\n"
        "loop.call_soon(lambda: (held.write('the last line\\n'), loop.stop()))\n"
        "loop.run_forever()\n"  # stops after this turn: the turn that would write the line never comes
        "print('stopped')\n"
    )
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert finished.returncode == 0 and finished.stdout == "stopped\n"
    assert finished.stderr == "the last line\n"


def test_a_forked_worker_does_not_write_what_its_parent_held() -> None:
    """Lines the parent held when it forked are written once, by the parent."""
    program = (
        "import asyncio, os, sys\n"
        "from gateway.observability.log_stream import flush_held_lines, held_lines_for\n"
        "held = held_lines_for(sys.stderr)\n"
        "async def main():\n"
        "    held.write('held by the parent\\n')\n"
        "    child = os.fork()\n"
        "    if child == 0:\n"
        "        held.write('from the child\\n')\n"
        "        flush_held_lines()\n"  # as a worker does before os._exit
        "        os._exit(0)\n"
        "    os.waitpid(child, 0)\n"
        "asyncio.run(main())\n"
    )
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert finished.returncode == 0
    assert sorted(finished.stderr.splitlines()) == ["from the child", "held by the parent"]


def test_after_a_loop_stopped_with_lines_held_the_next_line_writes_them_all() -> None:
    """Lines a stopped loop left held are not stuck behind it: the next line written outside a loop takes them."""
    stream = CountedWrites()
    held = HeldLines(stream)
    loop = asyncio.new_event_loop()
    try:
        loop.call_soon(lambda: (held.write("held by the loop\n"), loop.stop()))
        loop.run_forever()  # stops after that turn: the write it scheduled never runs
    finally:
        loop.close()
    assert stream.pieces == []
    held.write("after the loop\n")
    assert "".join(stream.pieces) == "held by the loop\nafter the loop\n"
