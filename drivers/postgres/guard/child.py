"""The child process that checks a pool's long query texts (``python -m drivers.postgres.guard.child``).

``process.LongTextGuard`` starts it and talks to it over its standard
input and output, one request at a time: a request is a pickled
``(sql, source, partitioned, parameters)`` behind its length (8 bytes, big-endian); the
answer likewise. ``source`` is the pool's ``PolicySource`` in the first request and
None after it: the child builds the policy once and keeps it. The answer is what
the pool's guard thread answered for such a text, without the grant check:

* ``("accepted", parsed)``: ``read_as_only(check_query(sql, None, policy), partitioned)``;
* ``("refused", refusal)``: the ``Refusal`` (``sql_guard.py``) it came to;
* ``("failed", description)``: any other exception (a bug: the request fails as it did in the thread).

The child ends when its input ends (the pool closed it, or the gateway is gone).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import Any, BinaryIO

LENGTH_BYTES = 8
"""Each message is preceded by its length in this many bytes, big-endian."""

NICENESS = 5
"""Added to the child's nice value: on a busy machine the scheduler runs the gateway's event loop first."""


def read_message(stream: BinaryIO) -> Any:
    """The next message on ``stream``, or None at its end."""
    head = stream.read(LENGTH_BYTES)
    if len(head) < LENGTH_BYTES:
        return None
    size = int.from_bytes(head, "big")
    body = stream.read(size)
    if len(body) < size:
        return None
    return pickle.loads(body)


def framed(message: Any) -> bytes:
    """``message`` pickled, behind its length."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return len(body).to_bytes(LENGTH_BYTES, "big") + body


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Answer requests until ``requests`` ends."""
    # Imported here: the module's own import stays cheap for the parent, which only needs the framing.
    from drivers.postgres.guard.inheritance import read_as_only
    from drivers.postgres.guard.sql_guard import Refusal, checked_outcome
    from gateway.errors import QueryRejected

    policy = None
    while True:
        request = read_message(requests)
        if request is None:
            return
        sql, source, partitioned, parameters = request
        answer: tuple[Any, ...]
        try:
            if source is not None:
                policy = source.build_policy()
            if policy is None:
                raise RuntimeError("no policy was sent before the first query")
            outcome = checked_outcome(sql, policy, parameters)
            if isinstance(outcome, Refusal):
                answer = ("refused", outcome)
            else:
                answer = ("accepted", read_as_only(outcome, partitioned))
        except QueryRejected as refusal:  # the ONLY rewrite's own check
            answer = ("refused", Refusal(refusal.message, str(refusal.reason), None))
        except Exception as error:  # noqa: BLE001 - reported to the parent, which fails the request
            answer = ("failed", f"{type(error).__name__}: {error}")
        answers.write(framed(answer))
        answers.flush()


if __name__ == "__main__":
    # Answers go to a private copy of the standard output: a stray print cannot corrupt them.
    answer_stream = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    # A signal to the whole process group (Ctrl-C, a service manager's stop, a closing terminal's hangup) is
    # for the gateway, which finishes its requests and then closes the child's input; the child ends there.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    os.nice(NICENESS)
    serve(sys.stdin.buffer, answer_stream)
