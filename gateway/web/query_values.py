"""GetData's parameter values: ``params`` in the JSON body, ``param`` repeated in the query string (issue 23).

The values of a query's ``$1``..``$n`` travel beside its text, and the driver
has the database bind them: a value is never part of the SQL, so it can never
name a table or a column, nor change the statement's shape. Each value reaches
the driver as text or None (SQL NULL), and the database reads it as the type
it infers for the value's place (a client casts where that is ambiguous:
``$1::int``):

- a JSON string is sent as it is;
- a JSON number as its shortest spelling that reads back the same (``17``,
  ``0.5``, ``1e+20``): a decimal that must keep more digits than a double
  holds is sent as a string;
- ``true`` and ``false`` as those words; ``null`` as SQL NULL;
- an array or an object is refused (400 naming it): send a PostgreSQL array
  or a JSON document as its text, in a string.

In the query string every value is text (``?param=a&param=b``, in order);
there is no NULL there. A value may not hold a NUL character (PostgreSQL's
text cannot). Both sources at once must give the same values.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import AmbiguousRequest, BadRequest
from gateway.web.inputs import RequestInputs
from gateway.web.parameters import DocumentContext, Parameter, ReadContext, Source

MAX_PARAMETERS = 65_535
"""The most values one query takes: PostgreSQL's Bind message counts them in 16 bits."""

SCALAR: dict[str, Any] = {"type": ["string", "number", "boolean", "null"]}

PARAM_DESCRIPTION = (
    "The value of $1, $2, ... of the query, in order, one `param` per value (`?param=a&param=b`); text, "
    "bound by the database as the type it infers for the value's place (cast in the query where that is "
    "ambiguous: `$1::int`). Never part of the SQL text. POST sends them as `params` in the body instead."
)
PARAMS_DESCRIPTION = (
    "The values of $1, $2, ... of the query, in order, bound by the database, never part of the SQL text: "
    "a string as it is, a number in its JSON spelling, true/false, null as SQL NULL (arrays and objects are "
    "refused: send their PostgreSQL text form as a string). Each takes the type the database infers for its "
    "place; cast in the query where that is ambiguous (`$1::int`)."
)


def documented(context: DocumentContext) -> dict[str, Parameter]:
    """The two inputs as the document states them."""
    return {
        "param": Parameter(PARAM_DESCRIPTION, schema={"type": "array", "items": {"type": "string"}},
                           source=Source.QUERY_STRING, repeated=True),
        "params": Parameter(PARAMS_DESCRIPTION, body_schema={"type": "array", "items": SCALAR,
                                                             "maxItems": MAX_PARAMETERS,
                                                             "description": PARAMS_DESCRIPTION},
                            source=Source.BODY),
    }


def read_values(raw: RequestInputs, context: ReadContext) -> tuple[str | None, ...]:
    """The values of ``$1``..``$n`` from either source; 400 naming the value that cannot be one."""
    from_query = tuple(raw.repeated.get("param", ()))
    for number, value in enumerate(from_query, start=1):
        _check_text(f"param number {number} (${number})", value)
    given = raw.body.get("params")
    from_body: tuple[str | None, ...] = ()
    if given is not None:
        if not isinstance(given, list):
            raise BadRequest("field 'params' of the body must be an array of the values of $1, $2, ... "
                             "(strings, numbers, booleans or null)")
        from_body = tuple(_as_value(number, value) for number, value in enumerate(given, start=1))
    if from_query and given is not None and from_query != from_body:
        raise AmbiguousRequest("the query string's 'param' values and the body's 'params' differ; give them once")
    values = from_query or from_body
    if len(values) > MAX_PARAMETERS:
        raise BadRequest(f"{len(values)} parameter values were sent; a query takes at most {MAX_PARAMETERS}")
    return values


def _as_value(number: int, value: Any) -> str | None:
    where = f"params[{number - 1}] (${number})"
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return _check_text(where, value)
    kind = "an array" if isinstance(value, list) else "an object"
    raise BadRequest(f"{where} is {kind}: a parameter value is a string, a number, true, false or null "
                     "(send an array or a JSON document as its text, in a string, and cast it in the query)")


def _check_text(where: str, value: str) -> str:
    if "\x00" in value:
        raise BadRequest(f"{where} holds a NUL character, which no PostgreSQL text can hold")
    return value
