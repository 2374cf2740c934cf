"""Grid specs: a TOML/JSON document → the validated points of a sweep (``docs/sweep.md``).

A grid names one query and its axes::

    query = "epsilon"                   # epsilon | delta | noise_multiplier | steps
    combine = "product"                 # or "zip" (every axis advanced together)
    zip = [["sampling_rate", "steps"]]  # optional: axes advanced together inside the product
    [accuracy]
    relative_width = 1e-4
    [axes]
    noise_multiplier = {start = 0.5, stop = 3.0, num = 20}             # linspace, both ends
    sampling_rate = {start = 1e-4, stop = 0.05, num = 10, log = true}  # geometric
    steps = {start = 100, stop = 100000, num = 10, log = true}         # integers: rounded
    delta = [1e-5, 1e-6]                                               # a list
    sampling = "poisson"                                               # a scalar

``{start, stop, step}`` is an arithmetic range (``stop`` included when it is reached). A document with
a ``grids`` list holds several such grids (one query each); their points are numbered in order.

Every point is validated here, before any work starts, with the checks of :mod:`optcomp.dpsgd`
(``Run.checked`` and the query's own parameters): a bad value refuses the whole grid with a
``ValueError`` naming the row and the parameter. A point whose composed loss is beyond the engine
(``GridTooLargeError``) is not bad input: it is evaluated, and its row stores the error.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optcomp._numerics import (
    DEFAULT_ACCURACY,
    Accuracy,
    check_int,
    check_nonnegative,
    check_open_probability,
    check_positive,
)
from optcomp.dpsgd import MAX_STEPS, MAX_TARGET_EPSILON, Run
from optcomp.pld import GridTooLargeError

#: The queries a grid can ask, and the parameters each takes (required first, then optional).
QUERIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "epsilon": (("noise_multiplier", "sampling_rate", "steps", "delta"), ()),
    "delta": (("noise_multiplier", "sampling_rate", "steps", "epsilon"), ()),
    "noise_multiplier": (("target_epsilon", "sampling_rate", "steps", "delta"), ()),
    "steps": (("target_epsilon", "noise_multiplier", "sampling_rate", "delta"), ("max_steps",)),
}
#: The batch-sampler keywords of :func:`optcomp.dpsgd.epsilon`, optional for every query.
SAMPLER_KEYS: tuple[str, ...] = ("sampling", "examples_per_user", "dataset_size", "max_batch_size")
#: Integer parameters (values of numeric ranges are rounded to the nearest integer for these).
INTEGER_KEYS = frozenset({"steps", "examples_per_user", "dataset_size", "max_batch_size", "max_steps"})
#: Most points one grid may expand to (a typo such as ``num = 1e9`` is refused, not allocated).
MAX_POINTS = 10**7
#: Accuracy fields a grid may set (:class:`optcomp.Accuracy`).
_ACCURACY_KEYS = ("relative_width", "grid_step", "tail_mass", "memory_cap")
_TOP_KEYS = frozenset({"query", "combine", "zip", "accuracy", "axes"})

Value = float | int | str


@dataclass(frozen=True)
class Point:
    """One row of a sweep: a query and its parameters (validated).

    Attributes:
        index: the row's number in the grid (0-based, across all sub-grids).
        query: one of :data:`QUERIES`.
        params: ``(name, value)`` pairs, sorted by name.
        accuracy: the engine accuracy of the row.
    """

    index: int
    query: str
    params: tuple[tuple[str, Value], ...]
    accuracy: Accuracy

    def get(self, name: str, default: Value | None = None) -> Value | None:
        """The value of parameter ``name`` (``default`` when the point does not set it)."""
        return dict(self.params).get(name, default)

    @property
    def key(self) -> str:
        """A stable key of the point (query, parameters and accuracy; not its index): SHA-256 hex."""
        acc = {k: getattr(self.accuracy, k) for k in _ACCURACY_KEYS}
        doc = json.dumps({"q": self.query, "p": self.params, "a": acc}, sort_keys=True, allow_nan=False)
        return hashlib.sha256(doc.encode()).hexdigest()

    def describe(self) -> str:
        """``query(name=value, ...)``, for messages."""
        return f"{self.query}({', '.join(f'{k}={v!r}' for k, v in self.params)})"


def load_grid(path: str | Path) -> list[Point]:
    """The validated points of the grid file ``path`` (``.toml`` or ``.json``; see the module docstring).

    Raises:
        ValueError: the document is malformed, names an unknown query or parameter, or a row has a
            value outside its range (the message names the row and the parameter).
        OSError: the file cannot be read.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    try:
        doc = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"grid {str(p)!r} is not valid {'JSON' if p.suffix.lower() == '.json' else 'TOML'}: {exc}") from exc
    return grid_points(doc)


def grid_points(doc: object) -> list[Point]:
    """The validated points of a grid document (a mapping as parsed from TOML/JSON)."""
    if not isinstance(doc, Mapping):
        raise ValueError(f"a grid must be a table/object, got {type(doc).__name__}")  # noqa: TRY004 (contract)
    grids = doc.get("grids", [doc])
    if "grids" in doc and (set(doc) - {"grids"} or not isinstance(grids, list) or not grids):
        raise ValueError("a document with 'grids' must hold only that key: a non-empty list of grids")
    points: list[Point] = []
    for g, sub in enumerate(grids):
        where = f"grids[{g}]" if "grids" in doc else "grid"
        for params in _expand(sub, where):
            query, acc, values = params
            if len(points) >= MAX_POINTS:
                raise ValueError(f"{where}: more than {MAX_POINTS} points; split the sweep")
            points.append(_checked_point(len(points), query, values, acc))
    return points


def _expand(sub: object, where: str) -> list[tuple[str, Accuracy, dict[str, Value]]]:
    """The raw points of one grid: (query, accuracy, parameter values)."""
    if not isinstance(sub, Mapping):
        raise ValueError(f"{where} must be a table/object, got {type(sub).__name__}")  # noqa: TRY004 (contract)
    unknown = sorted(set(sub) - _TOP_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(_TOP_KEYS))})")
    query = sub.get("query")
    if query not in QUERIES:
        raise ValueError(f"{where}: query must be one of {tuple(QUERIES)}, got {query!r}")
    required, optional = QUERIES[query]
    axes = sub.get("axes")
    if not isinstance(axes, Mapping) or not axes:
        raise ValueError(f"{where}: 'axes' must be a non-empty table of parameter values")
    allowed = (*required, *optional, *SAMPLER_KEYS)
    for name in axes:
        if name not in allowed:
            raise ValueError(f"{where}: unknown parameter {name!r} for query {query!r} (allowed: {', '.join(allowed)})")
    missing = [n for n in required if n not in axes]
    if missing:
        raise ValueError(f"{where}: query {query!r} needs parameter {missing[0]!r}")
    values = {name: _axis(f"{where}.axes.{name}", name, spec) for name, spec in axes.items()}
    combos = _combine(where, sub.get("combine", "product"), sub.get("zip", []), values)
    return [(str(query), _accuracy(where, sub.get("accuracy", {})), c) for c in combos]


def _accuracy(where: str, spec: object) -> Accuracy:
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where}.accuracy must be a table of {', '.join(_ACCURACY_KEYS)}")  # noqa: TRY004 (contract)
    bad = sorted(set(spec) - set(_ACCURACY_KEYS))
    if bad:
        raise ValueError(f"{where}.accuracy: unknown key {bad[0]!r} (allowed: {', '.join(_ACCURACY_KEYS)})")
    fields = {k: getattr(DEFAULT_ACCURACY, k) for k in _ACCURACY_KEYS} | dict(spec)
    try:
        return Accuracy(**fields)
    except TypeError as exc:
        raise ValueError(f"{where}.accuracy: {exc}") from exc


def _axis(where: str, name: str, spec: object) -> list[Value]:
    """One axis's values: a list, a scalar, or a range table."""
    if isinstance(spec, Mapping):
        out = _range(where, spec)
        if name in INTEGER_KEYS:
            return list(dict.fromkeys(round(v) for v in out))  # rounded (and de-duplicated) in order
        return list(out)
    if isinstance(spec, list):
        if not spec:
            raise ValueError(f"{where}: an empty list of values")
        return [_scalar(f"{where}[{i}]", v) for i, v in enumerate(spec)]
    return [_scalar(where, spec)]


def _scalar(where: str, v: object) -> Value:
    if isinstance(v, bool) or not isinstance(v, (numbers.Real, str)):
        raise ValueError(f"{where} must be a number or a string, got {v!r}")  # noqa: TRY004 (contract)
    return v if isinstance(v, (int, str)) else float(v)


def _range(where: str, spec: Mapping[str, object]) -> list[float]:
    keys = set(spec)
    if keys - {"start", "stop", "num", "log", "step"} or not {"start", "stop"} <= keys:
        raise ValueError(f"{where}: a range is {{start, stop, num[, log]}} or {{start, stop, step}}, got {dict(spec)!r}")
    start = check_nonnegative(f"{where}.start", spec["start"])
    stop = check_nonnegative(f"{where}.stop", spec["stop"])
    if "step" in spec:
        if "num" in spec or "log" in spec:
            raise ValueError(f"{where}: give either step or num (with log), not both")
        step = check_positive(f"{where}.step", spec["step"])
        n = math.floor((stop - start) / step * (1 + 4 * np.finfo(float).eps)) + 1
        if n < 1 or n > MAX_POINTS:
            raise ValueError(f"{where}: the range has {n} values (allowed: 1 to {MAX_POINTS})")
        return [start + i * step for i in range(n)]
    num = check_int(f"{where}.num", spec.get("num"), minimum=1, maximum=MAX_POINTS)
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise ValueError(f"{where}.log must be true or false, got {log!r}")  # noqa: TRY004 (contract)
    if log:
        check_positive(f"{where}.start", start)
        check_positive(f"{where}.stop", stop)
        return [float(x) for x in np.geomspace(start, stop, num)]
    return [float(x) for x in np.linspace(start, stop, num)]


def _combine(
    where: str, combine: object, zips: object, values: dict[str, list[Value]]
) -> list[dict[str, Value]]:
    """The points of the axes: their product, with the ``zip`` groups (or every axis) advanced together."""
    if combine not in ("product", "zip"):
        raise ValueError(f"{where}.combine must be 'product' or 'zip', got {combine!r}")
    if combine == "zip":
        groups = [list(values)]
    else:
        if not isinstance(zips, list) or not all(isinstance(z, list) for z in zips):
            raise ValueError(f"{where}.zip must be a list of lists of parameter names")
        seen: set[str] = set()
        groups = []
        for z in zips:
            for name in z:
                if name not in values or name in seen:
                    raise ValueError(f"{where}.zip: {name!r} is not an axis of this grid, or is zipped twice")
                seen.add(name)
            groups.append(list(z))
        groups += [[n] for n in values if n not in seen]
        order = list(values)  # the axes' order as written (a zip group sits where its first axis does)
        groups.sort(key=lambda g: min(order.index(n) for n in g))
    columns: list[list[dict[str, Value]]] = []
    for group in groups:
        lengths = {len(values[n]) for n in group} - {1}
        if len(lengths) > 1:
            shown = ", ".join(f"{n}: {len(values[n])}" for n in group)
            raise ValueError(f"{where}: zipped axes must have equal lengths (or 1), got {shown}")
        n = lengths.pop() if lengths else 1
        columns.append([{k: values[k][i if len(values[k]) > 1 else 0] for k in group} for i in range(n)])
    total = math.prod(len(c) for c in columns)
    if total > MAX_POINTS:
        raise ValueError(f"{where}: {total} points, more than {MAX_POINTS}; split the sweep")
    out: list[dict[str, Value]] = [{}]
    for column in columns:
        out = [{**head, **cell} for head in out for cell in column]
    return out


def _checked_point(index: int, query: str, values: dict[str, Value], acc: Accuracy) -> Point:
    """A point validated as :mod:`optcomp.dpsgd` would (``ValueError`` naming the row and parameter)."""
    try:
        try:
            clean = _CHECKS[query](values)
        except GridTooLargeError:
            # too large a composed loss for the engine is not bad input: the other parameters are checked
            # at a small loss, and the row is evaluated (it stores the engine's refusal)
            _CHECKS[query](values | {k: 1 for k in ("noise_multiplier", "steps") if k in values})
            clean = values
    except ValueError as exc:
        shown = ", ".join(f"{k}={v!r}" for k, v in sorted(values.items()))
        raise ValueError(f"grid row {index} ({query}: {shown}): {exc}") from exc
    return Point(index, query, tuple(sorted(clean.items())), acc)


def _sampler(values: Mapping[str, Value], sigma: object, steps: object) -> tuple[Run, dict[str, Value]]:
    run = Run.checked(
        sigma, values["sampling_rate"], steps, values.get("sampling", "poisson"),
        values.get("examples_per_user", 1), values.get("dataset_size"), values.get("max_batch_size"),
    )
    out: dict[str, Value] = {"sampling_rate": run.q, "sampling": run.sampling}
    if "examples_per_user" in values:
        out["examples_per_user"] = run.examples_per_user
    for name in ("dataset_size", "max_batch_size"):
        v = getattr(run, name)
        if v is not None:
            out[name] = v
    return run, out


def _check_epsilon(v: Mapping[str, Value]) -> dict[str, Value]:
    run, out = _sampler(v, v["noise_multiplier"], v["steps"])
    return out | {"noise_multiplier": run.sigma, "steps": run.steps, "delta": check_open_probability("delta", v["delta"])}


def _check_delta(v: Mapping[str, Value]) -> dict[str, Value]:
    run, out = _sampler(v, v["noise_multiplier"], v["steps"])
    return out | {"noise_multiplier": run.sigma, "steps": run.steps, "epsilon": check_nonnegative("epsilon", v["epsilon"])}


def _target(v: Mapping[str, Value]) -> float:
    t = check_positive("target_epsilon", v["target_epsilon"])
    if t > MAX_TARGET_EPSILON:
        raise ValueError(f"target_epsilon must be in (0, {MAX_TARGET_EPSILON:g}], got {t!r}")
    return t


def _check_sigma(v: Mapping[str, Value]) -> dict[str, Value]:
    steps = check_int("steps", v["steps"], minimum=1, maximum=MAX_STEPS)
    return _sampler(v, 1.0, steps)[1] | {"target_epsilon": _target(v), "steps": steps,
                                      "delta": check_open_probability("delta", v["delta"])}


def _check_steps(v: Mapping[str, Value]) -> dict[str, Value]:
    sigma = check_positive("noise_multiplier", v["noise_multiplier"])
    out = _sampler(v, sigma, 1)[1] | {"target_epsilon": _target(v), "noise_multiplier": sigma,
                                   "delta": check_open_probability("delta", v["delta"])}
    if "max_steps" in v:
        out["max_steps"] = check_int("max_steps", v["max_steps"], minimum=1, maximum=MAX_STEPS)
    return out


#: query → its validator (the parameters as :mod:`optcomp.dpsgd` checks them).
_CHECKS: dict[str, Callable[[Mapping[str, Value]], dict[str, Value]]] = {
    "epsilon": _check_epsilon,
    "delta": _check_delta,
    "noise_multiplier": _check_sigma,
    "steps": _check_steps,
}


def columns(points: Sequence[Point]) -> list[str]:
    """The parameter names used by ``points``, in a fixed order (for exports)."""
    order = ["noise_multiplier", "target_epsilon", "sampling_rate", "steps", "delta", "epsilon", *SAMPLER_KEYS,
             "max_steps"]
    used = {k for p in points for k, _ in p.params}
    return [k for k in order if k in used]
