"""The plan document: a global budget, public facts and a list of statistics (schema version 1).

A plan is read from a mapping (parsed TOML or JSON) by :func:`plan_from_dict` and written back by
:func:`plan_to_dict`; the two are inverse on valid plans. Every field is validated here, once; an invalid
field raises :class:`PlanError` (a ``ValueError``) whose one-line message names the statistic (by name
and position) and the field, its allowed range and the value found. The schema is documented in
``docs/planner.md``.
"""

from __future__ import annotations

import json
import math
import numbers
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

#: Version of the plan schema this module reads and writes.
SCHEMA_VERSION = 1

Kind = Literal["count", "sum", "mean", "histogram"]
MechanismName = Literal["laplace", "gaussian", "discrete_laplace"]
Neighbouring = Literal["add_remove", "substitution"]

KINDS: tuple[str, ...] = ("count", "sum", "mean", "histogram")
MECHANISMS: tuple[str, ...] = ("laplace", "gaussian", "discrete_laplace")
#: Accepted spellings of the mechanism names (``geometric`` is the two-sided geometric = discrete Laplace).
MECHANISM_ALIASES: dict[str, str] = {"geometric": "discrete_laplace"}
NEIGHBOURINGS: tuple[str, ...] = ("add_remove", "substitution")

#: Largest total ε and δ a plan may ask for: beyond them a "privacy budget" protects nothing, and the
#: engines' work (lattice and grid sizes grow with ε_i) is unbounded.
MAX_EPSILON = 100.0
MAX_DELTA = 0.1
#: Largest weight (weights are relative: a ratio beyond 10⁶ between two statistics is not a plan).
MAX_WEIGHT = 1e6
#: Default failure probability β of the reported (1 − β) intervals.
DEFAULT_BETA = 0.05
#: Default share of the global δ handed to the Gaussian statistics (split evenly among them) in the
#: black-box accounting modes; the rest is the composition theorem's own slack.
DEFAULT_GAUSSIAN_DELTA_SHARE = 0.5
#: Default share of a mean's budget spent on its noisy count when the dataset size is not public.
DEFAULT_COUNT_SHARE = 0.5


class PlanError(ValueError):
    """An invalid plan: the message is one line naming the statistic and the field."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Statistic:
    """One statistic to release.

    Attributes:
        name: unique, non-empty label.
        kind: ``count``, ``sum`` (of values clipped to [lower, upper]), ``mean`` (of the same) or
            ``histogram`` (counts over ``bins`` disjoint bins: one record falls in one bin).
        mechanism: ``laplace``, ``gaussian`` or ``discrete_laplace`` (integer outputs; needs an integer
            sensitivity).
        lower, upper: declared bounds of each record's value (``sum`` and ``mean``; ``lower < upper``).
        bins: number of bins (``histogram``), an integer ≥ 1.
        weight: how much the user values this statistic's accuracy (> 0): free statistics get
            ε_i = scale · weight.
        lock_epsilon: hold ε_i at this value (> 0) instead of scaling it.
        lock_accuracy: hold the accuracy α at this value (> 0): ε_i is the least one that reaches it.
        count_share: for a mean whose dataset size is not public, the share of ε_i given to the noisy
            count, in (0, 1).
    """

    name: str
    kind: Kind
    mechanism: MechanismName = "laplace"
    lower: float | None = None
    upper: float | None = None
    bins: int | None = None
    weight: float = 1.0
    lock_epsilon: float | None = None
    lock_accuracy: float | None = None
    count_share: float = DEFAULT_COUNT_SHARE


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """A global (ε, δ) budget, the neighbouring relation, public facts and the statistics.

    Attributes:
        epsilon: total ε ∈ (0, 100] of everything released.
        delta: total δ ∈ [0, 0.1].
        statistics: at least one :class:`Statistic`, names unique.
        neighbouring: ``add_remove`` (default) or ``substitution`` (dataset size then public).
        beta: failure probability of the reported (1 − β) intervals, in (0, 1).
        reserve_epsilon: ε held back for later, in [0, epsilon): the plan spends epsilon − reserve.
        gaussian_delta_share: share of δ, in (0, 1), split evenly among the Gaussian mechanisms to make
            each an (ε_i, δ_i) pair (black-box accounting, and the scale → noise map of every mode).
        dataset_size: n (records), needed by means; public unless ``dataset_size_public`` is false, in
            which case it is only the planning assumption at which a ratio's accuracy is reported.
        dataset_size_public: whether n is public (default true).
    """

    epsilon: float
    delta: float
    statistics: tuple[Statistic, ...]
    neighbouring: Neighbouring = "add_remove"
    beta: float = DEFAULT_BETA
    reserve_epsilon: float = 0.0
    gaussian_delta_share: float = DEFAULT_GAUSSIAN_DELTA_SHARE
    dataset_size: int | None = None
    dataset_size_public: bool = True


_PLAN_KEYS = {"version", "epsilon", "delta", "neighbouring", "beta", "reserve_epsilon",
              "gaussian_delta_share", "dataset_size", "dataset_size_public", "statistics"}
_STAT_KEYS = {f.name for f in fields(Statistic)}


def _where(index: int | None, name: object) -> str:
    if index is None:
        return "plan"
    return f"statistic {name!r} (#{index + 1})" if isinstance(name, str) and name else f"statistic #{index + 1}"


def _real(where: str, key: str, value: object, *, lo: float, hi: float, lo_open: bool, hi_open: bool) -> float:
    rng = ("(" if lo_open else "[") + f"{lo:g}, {hi:g}" + (")" if hi_open else "]")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PlanError(f"{where}: field '{key}' must be a number in {rng}, got {value!r}")
    x = float(value)
    ok = not math.isnan(x) and (x > lo if lo_open else x >= lo) and (x < hi if hi_open else x <= hi)
    if not ok:
        raise PlanError(f"{where}: field '{key}' must be in {rng}, got {x!r}")
    return x


def _integer(where: str, key: str, value: object, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PlanError(f"{where}: field '{key}' must be an integer >= {minimum}, got {value!r}")
    if int(value) < minimum:
        raise PlanError(f"{where}: field '{key}' must be an integer >= {minimum}, got {int(value)!r}")
    return int(value)


def _choice(where: str, key: str, value: object, allowed: tuple[str, ...]) -> str:
    if isinstance(value, str):
        value = MECHANISM_ALIASES.get(value, value) if key == "mechanism" else value
    if not isinstance(value, str) or value not in allowed:
        raise PlanError(f"{where}: field '{key}' must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _statistic(index: int, raw: object, *, needs_n: bool) -> Statistic:
    if not isinstance(raw, Mapping):
        raise PlanError(f"statistic #{index + 1}: must be a table of fields, got {raw!r}")
    name = raw.get("name")
    where = _where(index, name)
    unknown = sorted(set(raw) - _STAT_KEYS)
    if unknown:
        raise PlanError(f"{where}: unknown field '{unknown[0]}' (allowed: {', '.join(sorted(_STAT_KEYS))})")
    if not isinstance(name, str) or not name.strip():
        raise PlanError(f"{where}: field 'name' must be a non-empty string, got {name!r}")
    if "kind" not in raw:
        raise PlanError(f"{where}: field 'kind' is required (one of {', '.join(KINDS)})")
    kind = _choice(where, "kind", raw["kind"], KINDS)
    mechanism = _choice(where, "mechanism", raw.get("mechanism", "laplace"), MECHANISMS)
    lower = upper = None
    if kind in ("sum", "mean"):
        for key in ("lower", "upper"):
            if key not in raw:
                raise PlanError(f"{where}: field '{key}' is required for a {kind}")
        lower = _real(where, "lower", raw["lower"], lo=-math.inf, hi=math.inf, lo_open=True, hi_open=True)
        upper = _real(where, "upper", raw["upper"], lo=lower, hi=math.inf, lo_open=True, hi_open=True)
    elif "lower" in raw or "upper" in raw:
        raise PlanError(f"{where}: fields 'lower'/'upper' apply to a sum or mean only, not a {kind}")
    bins = None
    if kind == "histogram":
        if "bins" not in raw:
            raise PlanError(f"{where}: field 'bins' is required for a histogram")
        bins = _integer(where, "bins", raw["bins"], minimum=1)
    elif "bins" in raw:
        raise PlanError(f"{where}: field 'bins' applies to a histogram only, not a {kind}")
    weight = _real(where, "weight", raw.get("weight", 1.0), lo=0.0, hi=MAX_WEIGHT, lo_open=True, hi_open=False)
    lock_eps = raw.get("lock_epsilon")
    lock_acc = raw.get("lock_accuracy")
    if lock_eps is not None and lock_acc is not None:
        raise PlanError(f"{where}: fields 'lock_epsilon' and 'lock_accuracy' cannot both be set")
    if lock_eps is not None:
        lock_eps = _real(where, "lock_epsilon", lock_eps, lo=0.0, hi=math.inf, lo_open=True, hi_open=True)
    if lock_acc is not None:
        lock_acc = _real(where, "lock_accuracy", lock_acc, lo=0.0, hi=math.inf, lo_open=True, hi_open=True)
    share = _real(where, "count_share", raw.get("count_share", DEFAULT_COUNT_SHARE),
                  lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    if kind == "mean" and needs_n:
        raise PlanError(f"{where}: a mean needs the plan field 'dataset_size' (public, or assumed for accuracy)")
    return Statistic(name=name, kind=kind, mechanism=mechanism, lower=lower, upper=upper,  # type: ignore[arg-type]
                     bins=bins, weight=weight, lock_epsilon=lock_eps, lock_accuracy=lock_acc, count_share=share)


def plan_from_dict(raw: object) -> Plan:
    """Validate a parsed plan document (schema version 1) into a :class:`Plan`.

    Raises:
        PlanError: the first invalid field, named with its statistic, allowed range and value.
    """
    if not isinstance(raw, Mapping):
        raise PlanError(f"plan: must be a table (mapping) of fields, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _PLAN_KEYS)
    if unknown:
        raise PlanError(f"plan: unknown field '{unknown[0]}' (allowed: {', '.join(sorted(_PLAN_KEYS))})")
    version = raw.get("version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise PlanError(f"plan: field 'version' must be {SCHEMA_VERSION}, got {version!r}")
    for key in ("epsilon", "delta"):
        if key not in raw:
            raise PlanError(f"plan: field '{key}' is required")
    eps = _real("plan", "epsilon", raw["epsilon"], lo=0.0, hi=MAX_EPSILON, lo_open=True, hi_open=False)
    delta = _real("plan", "delta", raw["delta"], lo=0.0, hi=MAX_DELTA, lo_open=False, hi_open=False)
    neighbouring = _choice("plan", "neighbouring", raw.get("neighbouring", "add_remove"), NEIGHBOURINGS)
    beta = _real("plan", "beta", raw.get("beta", DEFAULT_BETA), lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    reserve = _real("plan", "reserve_epsilon", raw.get("reserve_epsilon", 0.0),
                    lo=0.0, hi=eps, lo_open=False, hi_open=True)
    share = _real("plan", "gaussian_delta_share", raw.get("gaussian_delta_share", DEFAULT_GAUSSIAN_DELTA_SHARE),
                  lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    n_raw = raw.get("dataset_size")
    n = None if n_raw is None else _integer("plan", "dataset_size", n_raw, minimum=1)
    public = raw.get("dataset_size_public", True)
    if not isinstance(public, bool):
        raise PlanError(f"plan: field 'dataset_size_public' must be true or false, got {public!r}")
    if neighbouring == "substitution" and not public:
        raise PlanError("plan: field 'dataset_size_public' must be true under substitution neighbouring "
                        "(replacing a record never changes n)")
    stats_raw = raw.get("statistics")
    if not isinstance(stats_raw, list) or not stats_raw:
        raise PlanError(f"plan: field 'statistics' must be a non-empty list, got {stats_raw!r}")
    stats = tuple(_statistic(i, s, needs_n=n is None) for i, s in enumerate(stats_raw))
    seen: set[str] = set()
    for i, s in enumerate(stats):
        if s.name in seen:
            raise PlanError(f"{_where(i, s.name)}: field 'name' must be unique, {s.name!r} is used twice")
        seen.add(s.name)
        if neighbouring == "substitution" and s.kind == "count":
            raise PlanError(f"{_where(i, s.name)}: field 'kind' count is public under substitution "
                            "neighbouring (sensitivity 0); use add_remove or drop it")
    return Plan(epsilon=eps, delta=delta, statistics=stats, neighbouring=neighbouring,  # type: ignore[arg-type]
                beta=beta, reserve_epsilon=reserve, gaussian_delta_share=share, dataset_size=n,
                dataset_size_public=public)


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The document of ``plan`` (schema version 1), default-valued optional fields left out."""
    out: dict[str, Any] = {"version": SCHEMA_VERSION, "epsilon": plan.epsilon, "delta": plan.delta,
                           "neighbouring": plan.neighbouring, "beta": plan.beta}
    if plan.reserve_epsilon:
        out["reserve_epsilon"] = plan.reserve_epsilon
    out["gaussian_delta_share"] = plan.gaussian_delta_share
    if plan.dataset_size is not None:
        out["dataset_size"] = plan.dataset_size
        out["dataset_size_public"] = plan.dataset_size_public
    stats = []
    for s in plan.statistics:
        d: dict[str, Any] = {"name": s.name, "kind": s.kind, "mechanism": s.mechanism}
        for key in ("lower", "upper", "bins", "lock_epsilon", "lock_accuracy"):
            if getattr(s, key) is not None:
                d[key] = getattr(s, key)
        d["weight"] = s.weight
        if s.kind == "mean" and s.count_share != DEFAULT_COUNT_SHARE:
            d["count_share"] = s.count_share
        stats.append(d)
    out["statistics"] = stats
    return out


def plan_from_text(text: str, *, fmt: Literal["toml", "json"]) -> Plan:
    """Parse and validate a plan document given as TOML or JSON text."""
    try:
        raw = tomllib.loads(text) if fmt == "toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise PlanError(f"plan: not valid {fmt.upper()}: {' '.join(str(exc).splitlines())}") from exc
    return plan_from_dict(raw)


def load_plan(path: str | Path) -> Plan:
    """Read a plan file: ``.json`` is JSON, anything else TOML."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanError(f"plan file cannot be read: {p} ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise PlanError(f"plan file {p} must be UTF-8 text") from exc
    return plan_from_text(text, fmt="json" if p.suffix.lower() == ".json" else "toml")


def plan_to_toml(plan: Plan) -> str:
    """The plan document as TOML text (a small writer: the schema has only scalars and one table array)."""
    doc = plan_to_dict(plan)
    lines = [f"{k} = {_toml_value(v)}" for k, v in doc.items() if k != "statistics"]
    for s in doc["statistics"]:
        lines.append("")
        lines.append("[[statistics]]")
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in s.items())
    return "\n".join(lines) + "\n"


def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(v)
