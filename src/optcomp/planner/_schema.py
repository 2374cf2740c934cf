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
import reprlib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from optcomp.mechanisms import Neighbouring, planner_mechanisms

#: Version of the plan schema this module reads and writes.
SCHEMA_VERSION = 1

Kind = Literal["count", "sum", "mean", "histogram", "quantile"]
#: The planner's mechanisms for the type checker: the ``planner`` entries of the one name table
#: :data:`optcomp.mechanisms.MECHANISM_NAMES` (``tests/test_mechanism_names.py`` holds the two equal).
MechanismName = Literal["laplace", "gaussian", "discrete_laplace", "dgauss", "exponential"]

KINDS: tuple[str, ...] = ("count", "sum", "mean", "histogram", "quantile")
#: The mechanism a quantile is released by (and the only kind it releases): the exponential mechanism.
SELECTION_MECHANISM = "exponential"
#: The mechanisms a statistic may use, from the name table, in its order.
MECHANISMS: tuple[str, ...] = tuple(e.name for e in planner_mechanisms())
#: Other accepted spellings of them (``geometric`` is the two-sided geometric = discrete Laplace).
MECHANISM_ALIASES: dict[str, str] = {alias: e.name for e in planner_mechanisms() for alias in e.aliases}
NEIGHBOURINGS: tuple[str, ...] = ("add_remove", "substitution")

#: Largest total ε and δ a plan may ask for: beyond them a "privacy budget" protects nothing, and the
#: engines' work (lattice and grid sizes grow with ε_i) is unbounded. The same cap holds for a locked ε_i.
MAX_EPSILON = 100.0
MAX_DELTA = 0.1
#: Smallest budget ε (and ε − reserve). Below it every statistic's noise is over 10⁶ times its
#: sensitivity (nothing useful is released), the Gaussians' δ share rather than ε decides what fits, and
#: certifying a composed ε that small needs PLD grids finer than 10⁻⁹ (minutes per evaluation).
MIN_EPSILON = 1e-6
#: Largest ``bins`` and ``dataset_size``: integers beyond 2**53 are not exact in float64 arithmetic.
MAX_COUNT = 2**53
#: Largest weight (weights are relative: a ratio beyond 10⁶ between two statistics is not a plan).
MAX_WEIGHT = 1e6
#: Default failure probability β of the reported (1 − β) intervals.
DEFAULT_BETA = 0.05
#: Default share of the global δ handed to the Gaussian statistics (split evenly among them) in the
#: black-box accounting modes; the rest is the composition theorem's own slack.
DEFAULT_GAUSSIAN_DELTA_SHARE = 0.5
#: Default quantile of a ``quantile`` statistic: the median.
DEFAULT_QUANTILE = 0.5
#: Default share of a mean's budget spent on its noisy count when the dataset size is not public.
DEFAULT_COUNT_SHARE = 0.5


class PlanError(ValueError):
    """An invalid plan: the message is one line naming the statistic and the field.

    Attributes:
        field: the plan or statistic field the error is about (``None`` when it is about no one field).
        index: the 0-based position of the statistic it is about (``None`` for the plan's own fields).
    """

    def __init__(self, message: str, *, field: str | None = None, index: int | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.index = index

    def __reduce__(self) -> tuple[Any, ...]:  # keep field and index through pickling
        return (_plan_error, (str(self), self.field, self.index))


def _plan_error(message: str, field: str | None, index: int | None) -> PlanError:
    return PlanError(message, field=field, index=index)


#: Values quoted in messages are shortened (a message stays one short line, whatever was sent).
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 2, 40, 40, 4, 4


def show(value: object) -> str:
    """``repr(value)``, shortened to a few dozen characters (never recursing deeply)."""
    if isinstance(value, float):
        return repr(value)
    return _REPR.repr(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Statistic:
    """One statistic to release.

    Attributes:
        name: unique, non-empty label.
        kind: ``count``, ``sum`` (of values clipped to [lower, upper]), ``mean`` (of the same),
            ``histogram`` (counts over ``bins`` disjoint bins: one record falls in one bin) or ``quantile``
            (the ``quantile``-th quantile, chosen among ``candidates`` public values by the exponential
            mechanism; its accuracy is a rank error, :mod:`optcomp.planner._noise`).
        mechanism: ``laplace``, ``gaussian``, ``discrete_laplace`` or ``dgauss`` (the discrete Gaussian;
            alias ``discrete_gaussian``) (the last two: integer outputs; need an integer sensitivity);
            ``exponential`` for a quantile (its only mechanism, and its default).
        lower, upper: declared bounds of each record's value (``sum`` and ``mean``; ``lower < upper``).
        bins: number of bins (``histogram``), an integer ≥ 1.
        weight: how much the user values this statistic's accuracy (> 0): free statistics get
            ε_i = scale · weight.
        lock_epsilon: hold ε_i at this value (> 0) instead of scaling it.
        lock_accuracy: hold the accuracy α at this value (> 0): ε_i is the least one that reaches it.
        count_share: for a mean whose dataset size is not public, the share of ε_i given to the noisy
            count, in (0, 1).
        quantile: for a quantile, q ∈ (0, 1) (default 0.5: the median).
        candidates: for a quantile, the number G ≥ 2 of public candidate values it chooses among (a grid
            fixed before seeing the data, e.g. 121 for ages 0..120).
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
    quantile: float | None = None
    candidates: int | None = None


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
    if isinstance(name, str) and name:
        return f"statistic {show(name)} (#{index + 1})"
    return f"statistic #{index + 1}"


def _fail(index: int | None, name: object, field: str | None, text: str) -> PlanError:
    """The :class:`PlanError` ``<where>: <text>`` about ``field`` of statistic ``index`` (or of the plan)."""
    return PlanError(f"{_where(index, name)}: {text}", field=field, index=index)


class _At:
    """Where a value lives (a statistic by position and name, or the plan): raises located errors."""

    def __init__(self, index: int | None = None, name: object = None) -> None:
        self.index = index
        self.name = name

    def error(self, field: str | None, text: str) -> PlanError:
        return _fail(self.index, self.name, field, text)

    def real(self, key: str, value: object, *, lo: float, hi: float, lo_open: bool, hi_open: bool) -> float:
        rng = ("(" if lo_open else "[") + f"{lo:g}, {hi:g}" + (")" if hi_open else "]")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise self.error(key, f"field '{key}' must be a number in {rng}, got {show(value)}")
        try:
            x = float(value)
        except OverflowError:  # an integer beyond float64
            x = math.inf if int(value) > 0 else -math.inf  # type: ignore[call-overload]
        ok = not math.isnan(x) and (x > lo if lo_open else x >= lo) and (x < hi if hi_open else x <= hi)
        if not ok:
            raise self.error(key, f"field '{key}' must be in {rng}, got {show(x)}")
        return x

    def integer(self, key: str, value: object, *, minimum: int, maximum: int = MAX_COUNT) -> int:
        rng = f"an integer in [{minimum}, 2**53]"
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise self.error(key, f"field '{key}' must be {rng}, got {show(value)}")
        if not minimum <= int(value) <= maximum:
            raise self.error(key, f"field '{key}' must be {rng}, got {show(int(value))}")
        return int(value)

    def choice(self, key: str, value: object, allowed: tuple[str, ...]) -> str:
        if isinstance(value, str):
            value = MECHANISM_ALIASES.get(value, value) if key == "mechanism" else value
        if not isinstance(value, str) or value not in allowed:
            raise self.error(key, f"field '{key}' must be one of {', '.join(allowed)}, got {show(value)}")
        return value


def _statistic(index: int, raw: object, *, needs_n: bool) -> Statistic:
    if not isinstance(raw, Mapping):
        raise _fail(index, None, None, f"must be a table of fields, got {show(raw)}")
    name = raw.get("name")
    at = _At(index, name)
    unknown = sorted(str(k) for k in set(raw) - _STAT_KEYS)
    if unknown:
        raise at.error(None, f"unknown field {show(unknown[0])} (allowed: {', '.join(sorted(_STAT_KEYS))})")
    if not isinstance(name, str) or not name.strip():
        raise at.error("name", f"field 'name' must be a non-empty string, got {show(name)}")
    if "kind" not in raw:
        raise at.error("kind", f"field 'kind' is required (one of {', '.join(KINDS)})")
    kind = at.choice("kind", raw["kind"], KINDS)
    mechanism = at.choice("mechanism", raw.get("mechanism", SELECTION_MECHANISM if kind == "quantile" else "laplace"),
                          MECHANISMS)
    if (kind == "quantile") != (mechanism == SELECTION_MECHANISM):
        if kind == "quantile":
            raise at.error("mechanism", f"field 'mechanism' of a quantile must be {SELECTION_MECHANISM}, "
                           f"got {show(mechanism)}")
        raise at.error("mechanism", f"field 'mechanism' {SELECTION_MECHANISM} releases a quantile only, "
                       f"not a {kind} (its noise is not additive)")
    quantile = candidates = None
    if kind == "quantile":
        if "candidates" not in raw:
            raise at.error("candidates", "field 'candidates' is required for a quantile (the number of public "
                           "candidate values, an integer >= 2)")
        candidates = at.integer("candidates", raw["candidates"], minimum=2)
        quantile = at.real("quantile", raw.get("quantile", DEFAULT_QUANTILE), lo=0.0, hi=1.0,
                           lo_open=True, hi_open=True)
    else:
        for key in ("quantile", "candidates"):
            if key in raw:
                raise at.error(key, f"field '{key}' applies to a quantile only, not a {kind}")
    lower = upper = None
    if kind in ("sum", "mean"):
        for key in ("lower", "upper"):
            if key not in raw:
                raise at.error(key, f"field '{key}' is required for a {kind}")
        lower = at.real("lower", raw["lower"], lo=-math.inf, hi=math.inf, lo_open=True, hi_open=True)
        upper = at.real("upper", raw["upper"], lo=lower, hi=math.inf, lo_open=True, hi_open=True)
    elif "lower" in raw or "upper" in raw:
        key = "lower" if "lower" in raw else "upper"
        raise at.error(key, f"fields 'lower'/'upper' apply to a sum or mean only, not a {kind}")
    bins = None
    if kind == "histogram":
        if "bins" not in raw:
            raise at.error("bins", "field 'bins' is required for a histogram")
        bins = at.integer("bins", raw["bins"], minimum=1)
    elif "bins" in raw:
        raise at.error("bins", f"field 'bins' applies to a histogram only, not a {kind}")
    weight = at.real("weight", raw.get("weight", 1.0), lo=0.0, hi=MAX_WEIGHT, lo_open=True, hi_open=False)
    lock_eps = raw.get("lock_epsilon")
    lock_acc = raw.get("lock_accuracy")
    if lock_eps is not None and lock_acc is not None:
        raise at.error("lock_accuracy", "fields 'lock_epsilon' and 'lock_accuracy' cannot both be set")
    if lock_eps is not None:
        lock_eps = at.real("lock_epsilon", lock_eps, lo=0.0, hi=MAX_EPSILON, lo_open=True, hi_open=False)
    if lock_acc is not None:
        lock_acc = at.real("lock_accuracy", lock_acc, lo=0.0, hi=math.inf, lo_open=True, hi_open=True)
    share = at.real("count_share", raw.get("count_share", DEFAULT_COUNT_SHARE),
                    lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    if kind == "mean" and needs_n:
        raise at.error("dataset_size", "a mean needs the plan field 'dataset_size' (public, or assumed for accuracy)")
    return Statistic(name=name, kind=kind, mechanism=mechanism, lower=lower, upper=upper,  # type: ignore[arg-type]
                     bins=bins, weight=weight, lock_epsilon=lock_eps, lock_accuracy=lock_acc, count_share=share,
                     quantile=quantile, candidates=candidates)


def plan_from_dict(raw: object, *, max_statistics: int | None = None) -> Plan:
    """Validate a parsed plan document (schema version 1) into a :class:`Plan`.

    Args:
        raw: the parsed document.
        max_statistics: refuse plans with more statistics than this (before validating them).

    Raises:
        PlanError: the first invalid field, named with its statistic, allowed range and value (its
            ``field`` and ``index`` attributes locate it).
    """
    at = _At()
    if not isinstance(raw, Mapping):
        raise at.error(None, f"must be a table (mapping) of fields, got {type(raw).__name__}")
    unknown = sorted(str(k) for k in set(raw) - _PLAN_KEYS)
    if unknown:
        raise at.error(None, f"unknown field {show(unknown[0])} (allowed: {', '.join(sorted(_PLAN_KEYS))})")
    version = raw.get("version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise at.error("version", f"field 'version' must be {SCHEMA_VERSION}, got {show(version)}")
    for key in ("epsilon", "delta"):
        if key not in raw:
            raise at.error(key, f"field '{key}' is required")
    eps = at.real("epsilon", raw["epsilon"], lo=MIN_EPSILON, hi=MAX_EPSILON, lo_open=False, hi_open=False)
    delta = at.real("delta", raw["delta"], lo=0.0, hi=MAX_DELTA, lo_open=False, hi_open=False)
    neighbouring = at.choice("neighbouring", raw.get("neighbouring", "add_remove"), NEIGHBOURINGS)
    beta = at.real("beta", raw.get("beta", DEFAULT_BETA), lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    reserve = at.real("reserve_epsilon", raw.get("reserve_epsilon", 0.0), lo=0.0, hi=eps, lo_open=False, hi_open=True)
    if eps - reserve < MIN_EPSILON:
        raise at.error("reserve_epsilon", f"field 'reserve_epsilon' must leave a budget epsilon - reserve >= "
                       f"{MIN_EPSILON:g}, got {reserve!r} of {eps!r}")
    share = at.real("gaussian_delta_share", raw.get("gaussian_delta_share", DEFAULT_GAUSSIAN_DELTA_SHARE),
                    lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    n_raw = raw.get("dataset_size")
    n = None if n_raw is None else at.integer("dataset_size", n_raw, minimum=1)
    public = raw.get("dataset_size_public", True)
    if not isinstance(public, bool):
        raise at.error("dataset_size_public", f"field 'dataset_size_public' must be true or false, got {show(public)}")
    if neighbouring == "substitution" and not public:
        raise at.error("dataset_size_public", "field 'dataset_size_public' must be true under substitution "
                       "neighbouring (replacing a record never changes n)")
    stats_raw = raw.get("statistics")
    if not isinstance(stats_raw, list) or not stats_raw:
        raise at.error("statistics", f"field 'statistics' must be a non-empty list, got {show(stats_raw)}")
    if max_statistics is not None and len(stats_raw) > max_statistics:
        raise at.error("statistics", f"field 'statistics' may hold at most {max_statistics} statistics here, "
                       f"got {len(stats_raw)}")
    stats = tuple(_statistic(i, s, needs_n=n is None) for i, s in enumerate(stats_raw))
    seen: set[str] = set()
    for i, s in enumerate(stats):
        if s.name in seen:
            raise _fail(i, s.name, "name", f"field 'name' must be unique, {show(s.name)} is used twice")
        seen.add(s.name)
        if neighbouring == "substitution" and s.kind == "count":
            raise _fail(i, s.name, "kind", "field 'kind' count is public under substitution "
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
        for key in ("lower", "upper", "bins", "quantile", "candidates", "lock_epsilon", "lock_accuracy"):
            if getattr(s, key) is not None:
                d[key] = getattr(s, key)
        d["weight"] = s.weight
        if s.kind == "mean" and s.count_share != DEFAULT_COUNT_SHARE:
            d["count_share"] = s.count_share
        stats.append(d)
    out["statistics"] = stats
    return out


def plan_from_text(text: str, *, fmt: Literal["toml", "json"], max_statistics: int | None = None) -> Plan:
    """Parse and validate a plan document given as TOML or JSON text."""
    try:
        raw = tomllib.loads(text) if fmt == "toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise PlanError(f"plan: not valid {fmt.upper()}: {' '.join(str(exc).splitlines())}") from exc
    except RecursionError as exc:
        raise PlanError(f"plan: not valid {fmt.upper()}: nested too deeply") from exc
    return plan_from_dict(raw, max_statistics=max_statistics)


def load_plan(path: str | Path) -> Plan:
    """Read a plan file: ``.json`` is JSON, anything else TOML."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanError(f"plan file cannot be read: {p} ({exc.strerror})", field="file") from exc
    except UnicodeDecodeError as exc:
        raise PlanError(f"plan file {p} must be UTF-8 text", field="file") from exc
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
