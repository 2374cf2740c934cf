"""Matrix mechanisms described as data: jax_privacy's BandMF configuration, and short text specifications.

* :func:`from_jax_privacy_config` reads a jax_privacy ``BandMFExecutionPlanConfig`` — the object itself
  (attributes read by name), its ``dataclasses.asdict`` or a JSON object with the same field names — as an
  amplified :class:`~optcomp.matrix.BandMF` run, without importing jax or jax_privacy. The fields and their
  meaning are those of jax_privacy 2.0 (``jax_privacy/experimental/execution_plan.py`` as read): ``strategy``
  (Toeplitz coefficients, ``num_bands`` = their number = the cycle length), ``iterations`` (n),
  ``noise_multiplier`` (σ, relative to the clip norm times the max column norm), ``sampling_prob`` (q),
  ``num_examples`` (given ⇒ ``EQUAL_SPLIT`` partition and zero-out adjacency; absent ⇒ ``INDEPENDENT`` and
  add/remove), ``truncated_batch_size`` (refused: jax_privacy accounts it under zero-out, optcomp's
  truncated law is for add/remove), ``column_normalize`` (every column scaled to norm 1: no
  per-column refinement). jax_privacy draws the partition at random, so the run's partition is hidden.
* :func:`strategy_from_text` / :func:`pattern_from_text`: the CLI's ``kind:key=value,...`` spellings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from optcomp._keyvalues import parse_key_values
from optcomp._numerics import check_int
from optcomp.matrix._bandmf import BandMF
from optcomp.matrix._pattern import Pattern, fixed_epoch, from_min_separation, min_sep, single
from optcomp.matrix._strategy import Strategy, blt, bsr, dense, toeplitz, tree

#: The fields of jax_privacy's ``BandMFExecutionPlanConfig`` optcomp reads (others are ignored by name).
JAX_PRIVACY_FIELDS: tuple[str, ...] = (
    "iterations",
    "strategy",
    "noise_multiplier",
    "sampling_prob",
    "truncated_batch_size",
    "num_examples",
    "column_normalize",
)
#: Fields that do not change the privacy accounting (clipping is normalised to 1 by ``l2_clip_norm``).
_IGNORED = ("l2_clip_norm", "rescale_to_unit_norm", "normalize_by", "class_name", "epsilon", "delta")


def _field(config: object, name: str, default: object = None) -> Any:
    if isinstance(config, Mapping):
        return config.get(name, default)
    return getattr(config, name, default)


def from_jax_privacy_config(config: object, *, per_column: bool = True) -> BandMF:
    """A jax_privacy ``BandMFExecutionPlanConfig`` (object, dict or JSON object) as a :class:`BandMF` run.

    Args:
        config: the configuration; ``noise_multiplier`` must be set (a calibrated config).
        per_column: use the per-column sensitivities (ignored, i.e. ``False``, with ``column_normalize``).

    Raises:
        ValueError: a missing or invalid field, named (``config.noise_multiplier must be set ...``).
    """
    if isinstance(config, Mapping):
        unknown = sorted(set(map(str, config)) - set(JAX_PRIVACY_FIELDS) - set(_IGNORED))
        if unknown:
            raise ValueError(f"config has unknown field(s) {unknown}; BandMFExecutionPlanConfig reads {list(JAX_PRIVACY_FIELDS)}")
    coefs = _field(config, "strategy")
    if coefs is None:
        raise ValueError("config.strategy must be the Toeplitz coefficients of the BandMF strategy (a list of numbers)")
    values = np.asarray(coefs, dtype=np.float64).ravel().tolist() if not isinstance(coefs, (str, bytes)) else coefs
    iterations = _field(config, "iterations")
    sigma = _field(config, "noise_multiplier")
    if sigma is None:
        raise ValueError("config.noise_multiplier must be set (calibrate the config, or give the noise multiplier)")
    strategy = toeplitz(values, check_int("config.iterations", iterations, minimum=1))
    num_examples = _field(config, "num_examples")
    truncated = _field(config, "truncated_batch_size")
    if truncated is not None:
        raise ValueError(
            "config.truncated_batch_size: jax_privacy accounts truncated batches under zero-out (REPLACE_SPECIAL) "
            "with a random equal split; optcomp's truncated-Poisson law is derived for add/remove within a group "
            "of known size (docs/samplers.md §3), so this configuration is refused rather than approximated"
        )
    normalize = bool(_field(config, "column_normalize", False))
    return BandMF(
        strategy,
        strategy.bands,
        _field(config, "sampling_prob", 1.0),
        sigma,
        "equal_split" if num_examples is not None else "independent",
        False,
        per_column and not normalize,
    )


def _key_values(text: str, what: str) -> tuple[str, dict[str, str]]:
    """``KIND:KEY=VALUE,...`` through the one spec parser (a key given twice is refused)."""
    return parse_key_values(text, what)


def _int(fields: dict[str, str], key: str, what: str) -> int:
    if key not in fields:
        raise ValueError(f"{what} needs {key}=<integer>")
    try:
        return int(fields[key])
    except ValueError:
        raise ValueError(f"{key} must be an integer, got {fields[key]!r}") from None


def _floats(fields: dict[str, str], key: str) -> list[float]:
    try:
        return [float(v) for v in fields.get(key, "").split("/") if v]
    except ValueError:
        raise ValueError(f"{key} must be numbers separated by '/', got {fields.get(key)!r}") from None


def _ints(fields: dict[str, str], key: str) -> list[int]:
    try:
        return [int(v) for v in fields.get(key, "").split("/") if v]
    except ValueError:
        raise ValueError(f"{key} must be integers separated by '/', got {fields.get(key)!r}") from None


def _dense_file(path: str) -> Strategy:
    p = Path(path)
    array = np.load(p) if p.suffix == ".npy" else np.loadtxt(p, delimiter=",", ndmin=2)
    return dense(array)


_STRATEGIES: dict[str, Callable[[dict[str, str]], Strategy]] = {
    "bsr": lambda f: bsr(_int(f, "n", "bsr"), _int(f, "bands", "bsr")),
    "toeplitz": lambda f: toeplitz(_floats(f, "coefs"), _int(f, "n", "toeplitz")),
    "blt": lambda f: blt(_floats(f, "buf_decay"), _floats(f, "output_scale"), _int(f, "n", "blt")),
    "tree": lambda f: (
        tree(step_counts=_ints(f, "step_counts"), completion=f.get("completion") == "1")
        if "step_counts" in f
        else tree(_int(f, "n", "tree"), completion=f.get("completion") == "1")
    ),
    "dense": lambda f: _dense_file(f.get("file", "")),
}

_PATTERNS: dict[str, Callable[[dict[str, str]], Pattern]] = {
    "single": lambda f: single(),
    "fixed_epoch": lambda f: fixed_epoch(_int(f, "k", "fixed_epoch")),
    "min_sep": lambda f: min_sep(_int(f, "b", "min_sep"), _int(f, "k", "min_sep") if "k" in f else None),
    "min_separation": lambda f: from_min_separation(
        _int(f, "s", "min_separation"), _int(f, "k", "min_separation") if "k" in f else None
    ),
}


def strategy_from_text(text: str) -> Strategy:
    """``bsr:n=2000,bands=64``, ``toeplitz:n=100,coefs=1/0.5``, ``blt:n=..,buf_decay=../..,output_scale=..``,
    ``tree:n=2000[,completion=1]``, ``tree:step_counts=1000/1000`` or ``dense:file=C.npy`` (or .csv)."""
    kind, fields = _key_values(text, "strategy")
    if kind not in _STRATEGIES:
        raise ValueError(f"strategy must be one of {sorted(_STRATEGIES)} (kind:key=value,...), got {text!r}")
    return _STRATEGIES[kind](fields)


def pattern_from_text(text: str) -> Pattern:
    """``single``, ``fixed_epoch:k=20``, ``min_sep:b=64[,k=32]`` (y − x) or ``min_separation:s=313[,k=6]``
    (the DP-FTRL notebook's y − x − 1)."""
    kind, fields = _key_values(text, "pattern")
    if kind not in _PATTERNS:
        raise ValueError(f"pattern must be one of {sorted(_PATTERNS)} (kind:key=value,...), got {text!r}")
    return _PATTERNS[kind](fields)

