"""An operation's inputs, declared once: an attrs class whose fields say how each input is read and documented.

Each field of an inputs class carries a ``Parameter`` (one named input: how
its text is read and checked, and its OpenAPI schema, limits taken from the
running gateway's config) or a ``ParameterGroup`` (several inputs read
together, e.g. a database's connection fields, checked against the installed
drivers). ``read_declared`` first hands every secret input to the log redactor,
then reads them in field order from the query string and, for operations with a
body, the JSON body (``gateway.web.inputs``), raising the contract's 400s; the
handler receives the instance. An inputs class with a ``from_inputs`` classmethod reads itself (its
fields still document it).

cattrs is not used for the reading: every message a client sees is the
contract's own sentence, which a reader function states directly.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs

from gateway.databases.driver_loader import DriverCatalog
from gateway.errors import BadRequest
from gateway.observability.logbook import SecretRedactor
from gateway.settings.config import GatewayConfig
from gateway.web.inputs import RequestInputs
from gateway.web.openapi_schemas import TEXT, TEXT_OR_NUMBER, Schema

InputsT = TypeVar("InputsT")


@attrs.frozen
class DocumentContext:
    """What the OpenAPI document of one running gateway depends on."""

    config: GatewayConfig
    """Its settings: the limits the document states."""
    drivers: DriverCatalog
    """Its installed drivers, by ``base_type``."""


@attrs.frozen
class ReadContext:
    """What reading one request's inputs needs besides the inputs."""

    config: GatewayConfig
    """The gateway's settings (limits)."""
    redactor: SecretRedactor
    """Secret inputs are added here as soon as they are read, before anything can log them."""
    drivers: DriverCatalog
    """The installed drivers: a database's connection fields are those its driver declares."""


class Source(enum.Enum):
    """Where an input may come from."""

    QUERY = "query"
    """The query string (and the JSON body, for an operation that takes one)."""
    BODY = "body"
    """Only the JSON body (ChangeLocalTableName's ``table`` object)."""
    QUERY_STRING = "query string"
    """Only the query string (GetData's repeated ``param``; the body has ``params`` for it)."""


Reader = Callable[[str, str | None, ReadContext], Any]
SchemaSource = Schema | Callable[[DocumentContext], Schema]


def optional_text(name: str, text: str | None, context: ReadContext) -> str | None:
    """The text as given; None when absent."""
    return text


def required_text(name: str, text: str | None, context: ReadContext) -> str:
    """The text; 400 when absent or empty."""
    if text is None or text == "":
        raise BadRequest(f"parameter {name!r} is required")
    return text


@attrs.frozen
class Parameter:
    """One named input of an operation."""

    description: str
    """What it is, for the document."""
    schema: SchemaSource = TEXT
    """Its schema as a query parameter, or a function of the running gateway giving it."""
    reader: Reader = optional_text
    """Its text (None when absent) to the value the handler gets; raises the contract's 400."""
    required: bool = False
    """Documented as required (in the query string; an operation with a body may take it from there)."""
    body_schema: SchemaSource | None = None
    """Its schema as a body field; by default text or an integer, as ``RequestInputs.get`` takes it."""
    secret: bool = False
    """Added to the log redactor before any input of the operation is read (a password)."""
    source: Source = Source.QUERY
    """Where it may come from."""
    name: str | None = None
    """Its name on the wire when it is not the field's."""
    repeated: bool = False
    """Given once per value (``?param=a&param=b``): documented as an array, style form, exploded."""


@attrs.frozen
class ParameterGroup:
    """Several inputs read together into one field (their checks depend on each other or on the drivers)."""

    parameters: Callable[[DocumentContext], Mapping[str, Parameter]]
    """The inputs, by name, as the running gateway documents them."""
    reader: Callable[[RequestInputs, ReadContext], Any]
    """All of them from the request to the field's value."""
    secrets: tuple[str, ...] | Callable[[ReadContext], tuple[str, ...]] = ()
    """Those added to the log redactor before any input of the operation is read (a password); or a function of
    the request's context naming them (the fields the installed drivers declare secret)."""


_DECLARATION = "dbgateway_parameter"


def parameter(description: str, **options: Any) -> Any:
    """An attrs field declaring one input (see ``Parameter``)."""
    return attrs.field(metadata={_DECLARATION: Parameter(description, **options)})


def parameter_group(
    parameters: Callable[[DocumentContext], Mapping[str, Parameter]],
    reader: Any,
    *,
    secrets: tuple[str, ...] | Callable[[ReadContext], tuple[str, ...]] = (),
) -> Any:
    """An attrs field declaring several inputs read together (see ``ParameterGroup``)."""
    return attrs.field(metadata={_DECLARATION: ParameterGroup(parameters, reader, secrets)})


_declarations_by_class: dict[type, tuple[tuple[str, Parameter | ParameterGroup], ...]] = {}
"""``declarations`` of each inputs class, read once: every request of the operation asks."""


def declarations(inputs: type) -> tuple[tuple[str, Parameter | ParameterGroup], ...]:
    """The field names of an inputs class with what each declares, in field order."""
    known = _declarations_by_class.get(inputs)
    if known is None:
        known = _declarations_by_class[inputs] = tuple(
            (field.name, field.metadata[_DECLARATION]) for field in attrs.fields(inputs)
        )
    return known


def documented_parameters(inputs: type, context: DocumentContext) -> list[tuple[str, Parameter]]:
    """Every input of the class as the running gateway documents it: (name on the wire, declaration)."""
    found: list[tuple[str, Parameter]] = []
    for field_name, declared in declarations(inputs):
        if isinstance(declared, ParameterGroup):
            found.extend(declared.parameters(context).items())
        else:
            found.append((declared.name or field_name, declared))
    return found


def read_declared(inputs: type[InputsT], raw: RequestInputs, context: ReadContext) -> InputsT:
    """The inputs class filled from the request, each field read and checked in field order."""
    own_reader = getattr(inputs, "from_inputs", None)
    if own_reader is not None:
        return own_reader(raw, context)  # type: ignore[no-any-return]
    declared_inputs = declarations(inputs)
    for field_name, declared in declared_inputs:  # first: a 400 about another input must not log a secret
        if isinstance(declared, ParameterGroup):
            secrets = declared.secrets(context) if callable(declared.secrets) else declared.secrets
        else:
            secrets = (declared.name or field_name,) if declared.secret else ()
        for name in secrets:
            context.redactor.add(raw.get(name))
    values: dict[str, Any] = {}
    for field_name, declared in declared_inputs:
        if isinstance(declared, ParameterGroup):
            values[field_name] = declared.reader(raw, context)
        else:
            name = declared.name or field_name
            values[field_name] = declared.reader(name, raw.get(name), context)
    return inputs(**values)


def resolve(schema: SchemaSource, context: DocumentContext) -> Schema:
    return schema(context) if callable(schema) else schema


def body_schema(declared: Parameter, context: DocumentContext) -> Schema:
    if declared.body_schema is not None:
        return resolve(declared.body_schema, context)
    return {**TEXT_OR_NUMBER, "description": declared.description}
