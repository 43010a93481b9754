"""Statement makers for calls read from the live catalog: every pg_catalog function and operator, polymorphic
signatures, VARIADIC, named and default arguments, and function-style casts.
"""

from __future__ import annotations

import random

from type_binding import MODES, Binder, function_name
from type_palette import Palette, Proc

FROM = " FROM tf.t"


def select(expression: str, rng: random.Random) -> str:
    """A one-column SELECT over the fixture table; sometimes the column is named, mostly PostgreSQL names it."""
    alias = " AS x" if rng.random() < 0.15 else ""
    return f"SELECT {expression}{alias}{FROM}"


def call(proc: Proc, args: list[str], rng: random.Random) -> str:
    return f"{function_name(proc.name, rng)}({', '.join(args)})"


def functions(palette: Palette, rng: random.Random) -> list[str]:
    """Every callable monomorphic function once with exact arguments, and most again in another mode."""
    binder = Binder(palette)
    statements: list[str] = []
    rare: list[Proc] = []
    for proc in palette.procs:
        if proc.kind not in ("f", "p") or binder.polymorphic(proc.args) or proc.variadic:
            continue
        if not binder.callable(proc):
            rare.append(proc)
            continue
        modes = ["exact"] + ([rng.choice(MODES[1:])] if rng.random() < 0.7 else [])
        for mode in modes:
            args = binder.arguments(proc.args, mode, rng)
            if args is not None:
                statements.append(select(call(proc, args, rng), rng))
    # Support functions take `internal`: only NULL reaches them, and PostgreSQL lets it.
    for proc in rng.sample(rare, min(40, len(rare))):
        statements.append(select(call(proc, ["NULL"] * len(proc.args), rng), rng))
    return statements


def polymorphic(palette: Palette, rng: random.Random) -> list[str]:
    """Functions with polymorphic arguments: bound consistently, with unknowns and NULLs, and inconsistently."""
    binder = Binder(palette)
    statements: list[str] = []
    for proc in palette.procs:
        if proc.kind != "f" or not binder.polymorphic(proc.args) or not binder.callable(proc):
            continue
        for mode in ["exact", "exact", *rng.sample(MODES[1:], 3)]:
            args = binder.arguments(proc.args, mode, rng)
            if args is not None:
                statements.append(select(call(proc, args, rng), rng))
    return statements


def variadic_named_default(palette: Palette, rng: random.Random) -> list[str]:
    """VARIADIC calls with and without the keyword, named arguments (``=>`` and ``:=``), omitted defaults."""
    binder = Binder(palette)
    statements: list[str] = []
    for proc in palette.procs:
        if proc.kind != "f" or not binder.callable(proc):
            continue
        if proc.variadic:
            statements.extend(_variadic_calls(binder, proc, rng))
        if proc.defaults or (all(proc.arg_names) and proc.args and rng.random() < 0.25):
            statements.extend(_named_calls(binder, proc, rng))
    return statements


def _variadic_calls(binder: Binder, proc: Proc, rng: random.Random) -> list[str]:
    fixed = list(proc.args[:-1])
    statements: list[str] = []
    for extra in (0, 1, 3):
        element = [proc.variadic] * extra
        signature = fixed + element
        if proc.variadic == binder.any:
            args = binder.arguments(fixed, "exact", rng)
            spread = [binder.value(rng.choice(binder.p.concrete_types()), rng) for _ in range(extra)]
            args = None if args is None else args + [rng.choice([s, "NULL", "'u'"]) for s in spread]
        else:
            args = binder.arguments(signature, rng.choice(["exact", "exact", "unknown", "implicit"]), rng)
        if args is not None:
            statements.append(select(call(proc, args, rng), rng))
    head = binder.arguments(fixed, "exact", rng)
    if head is not None:
        array = binder.value(proc.args[-1], rng) if proc.variadic != binder.any else "t.c_int4_array"
        for array in (array, "'{}'", "NULL", binder.value(rng.choice(binder.elements), rng), "ARRAY['a', 'b']"):
            statements.append(select(call(proc, head + [f"VARIADIC {array}"], rng), rng))
    return statements


def _named_calls(binder: Binder, proc: Proc, rng: random.Random) -> list[str]:
    args = binder.arguments(proc.args, rng.choice(["exact", "exact", "unknown"]), rng)
    if args is None:
        return []
    statements: list[str] = []
    for omitted in sorted({0, *range(1, proc.defaults + 1)})[:3]:
        kept = len(args) - omitted
        statements.append(select(call(proc, args[:kept], rng), rng))
        if all(proc.arg_names[:kept]) and kept:
            split = rng.randrange(kept)
            arrow = rng.choice(["=>", ":="])
            named = [f"{name} {arrow} {arg}" for name, arg in zip(proc.arg_names[split:kept], args[split:kept])]
            if rng.random() < 0.3:
                named.reverse()
            statements.append(select(call(proc, args[:split] + named, rng), rng))
    if all(proc.arg_names) and proc.defaults:
        # Any defaulted argument may be left out when the ones after it are named: make_interval(days => 3).
        first_default = len(args) - proc.defaults
        for _ in range(2):
            kept = [index for index in range(len(args)) if index < first_default or rng.random() < 0.4]
            rng.shuffle(kept)
            named = [f"{proc.arg_names[index]} => {args[index]}" for index in kept]
            statements.append(select(call(proc, named, rng), rng))
    if all(proc.arg_names) and proc.args:
        statements.append(select(call(proc, args[:-1] + [f"no_such_argument => {args[-1]}"], rng), rng))
    return statements


FUNCTION_CASTS = (
    "int2", "int4", "int8", "float4", "float8", '"numeric"', "text", '"varchar"', "bpchar", "name", "date",
    "bool", "timestamptz", '"timestamp"', '"interval"', "jsonb", '"json"', "uuid", "inet", "cidr", "oid",
    "regclass", "money", "tsvector", "xml", "bytea", '"char"', "int4range", "tf.posint", "tf.mood", "pg_catalog.text",
)


def function_casts(palette: Palette, rng: random.Random) -> list[str]:
    """``int4(x)`` and friends: a real function, a cast found through a type's name, or no such function;
    and attribute notation, ``t.row_to_json`` for ``row_to_json(t)``."""
    statements: list[str] = []
    sources = palette.concrete_types()
    for target in FUNCTION_CASTS:
        for source in rng.sample(sources, 10):
            statements.append(select(f"{target}({palette.value(source, rng)})", rng))
        literal = palette.literal(palette.oid(target.strip('"').removeprefix("pg_catalog.")))
        statements.append(select(f"{target}({literal or 'NULL'})", rng))
    for name in ("row_to_json", "to_json", "to_jsonb", "text", "num_nulls", "hstore", "pg_column_size", "id"):
        statements.append(f"SELECT t.{name} FROM tf.t")
        statements.append(f"SELECT (t).{name} FROM tf.t")
        statements.append(f"SELECT (t.c_pair).{name} FROM tf.t")
    return statements


def operators(palette: Palette, rng: random.Random) -> list[str]:
    """Every pg_catalog operator with exact operands, and most again with implicit casts, unknowns, wrong types."""
    binder = Binder(palette)
    statements: list[str] = []
    for operator in palette.operators:
        signature = [operator.right] if operator.kind == "l" else [operator.left, operator.right]
        if any(arg in binder.uncallable for arg in signature):
            continue
        modes = ["exact"] + rng.sample(MODES[1:], 2 if rng.random() < 0.5 else 1)
        for mode in modes:
            args = binder.arguments(signature, mode, rng)
            if args is None:
                continue
            name = operator.name if rng.random() > 0.04 else f"OPERATOR(pg_catalog.{operator.name})"
            args = [f"({arg})" if arg.startswith(("pg_catalog.", "-")) and " " in arg else arg for arg in args]
            expression = f"{name} {args[0]}" if operator.kind == "l" else f"{args[0]} {name} {args[1]}"
            statements.append(select(expression, rng))
    return statements
