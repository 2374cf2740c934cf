"""Amplified BandMF with cyclic Poisson sampling: per-group compositions of Poisson-subsampled Gaussians.

The scheme ("(Amplified) Banded Matrix Factorization", Choquette-Choo, Ganesh, McKenna, McMahan, Rush,
Thakurta, Xu, NeurIPS 2023, arXiv 2306.08153, Algorithm 2 and Theorem 4 as cited by jax_privacy):
the examples are split into b̂ = ``cycle_length`` groups; group j is eligible only at the steps
i ≡ j (mod b̂) and is Poisson-sampled there at rate q; C is lower-triangular and every column c_i is
supported on rows [i, i + b̂) (at most b̂ bands). Noise N(0, σ²ζ²), ζ = max_i ‖c_i‖.

**Reduction (``docs/matrix.md`` P5).** An example of group j touches the columns i ≡ j, whose supports
are disjoint row blocks; block [i, i + b̂) depends on the example only through its step-i participation,
and the blocks compose adaptively. So the run is dominated, for each group, by the composition
⊗_{i≡j} PoissonSubsampled(Gaussian(σ, ‖c_i‖/ζ), q), and its ε is the max over groups. With
``per_column=False`` every ‖c_i‖/ζ is replaced by 1 (the standard reduction: DP-SGD with ⌈n/b̂⌉ steps,
as jax_privacy's ``DpsgdTrainingAccountant``). Groups whose sorted sensitivities are dominated by
another group's (fewer columns, each no larger) are skipped: ε is monotone in each sensitivity (a
smaller shift is a post-processing of a larger one) and in the number of components.

**Lower end.** Take the pair where every other gradient is 0 and the example's gradient a fixed unit
vector g: projecting each block onto c_i gᵀ shows that, for a group the adversary knows, the output is
exactly that product of Poisson pairs. With a **public** partition (Theorem 4's model) the per-column
bracket is therefore a bracket on the run's true ε. With a **hidden** random partition (jax_privacy's
``EQUAL_SPLIT`` shuffles, ``INDEPENDENT`` draws a group per example) only the upper end is a statement
about the run (conditioning on the group is valid): :meth:`BandMF.epsilon` reports lower end 0 there, and
the revealed-partition mechanism's bracket is :meth:`BandMF.revealed_epsilon`. Relation: ``equal_split`` → zero-out, ``independent`` → add/remove.

Variants, each block's law scaled by ‖c_i‖/ζ (Gaussian scale invariance: sensitivity s at noise σ is
sensitivity 1 at noise σ/s): truncated Poisson batches (``TruncatedPoissonGaussian``, group size and
batch cap; its law is derived for add/remove, so only a public partition with groups of known size is
accepted — jax_privacy's zero-out truncated setting is refused) and users with several examples
(``MixtureOfGaussians`` with Bin(k, q) weights).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

import numpy as np

from optcomp._numerics import (
    CALIBRATION_RTOL,
    DEFAULT_ACCURACY,
    Accuracy,
    Bound,
    check_int,
    check_nonnegative,
    check_open_probability,
    check_positive,
    check_sampling_rate,
)
from optcomp._rounding import next_down, next_up
from optcomp.matrix._exact import sqrt_down, sqrt_up
from optcomp.matrix._strategy import Dense, Toeplitz

if TYPE_CHECKING:
    from optcomp.mechanisms import Mechanism
    from optcomp.queries import Composition, RunBracket

Partition = Literal["equal_split", "independent"]
#: Partition types (jax_privacy's ``PartitionType``) and the relation each one's statement is for.
PARTITION_RELATION: dict[str, str] = {"equal_split": "zero_out", "independent": "add_remove"}


def _check_partition(value: object) -> Partition:
    if value == "equal_split":
        return "equal_split"
    if value == "independent":
        return "independent"
    raise ValueError(f"partition must be one of {tuple(PARTITION_RELATION)}, got {value!r}")


def _check_banded(strategy: object, cycle: int) -> Toeplitz | Dense:
    """``strategy`` if every column i is supported on rows [i, i + cycle); ``ValueError`` naming it otherwise."""
    if isinstance(strategy, Toeplitz):
        if strategy.bands > cycle:
            raise ValueError(
                f"strategy must have at most cycle_length={cycle} bands for amplified BandMF, got {strategy.bands}"
            )
        return strategy
    if isinstance(strategy, Dense) and strategy.lower_triangular:
        c = strategy.matrix
        rows = np.arange(c.shape[0])[:, None] - np.arange(c.shape[1])[None, :]
        if np.all((c == 0.0) | ((rows >= 0) & (rows < cycle))):
            return strategy
    raise ValueError(
        "strategy must be lower-triangular with at most cycle_length bands (a banded Toeplitz/BSR, or a dense "
        f"matrix whose column i lives in rows [i, i + {cycle})) for amplified BandMF, got {type(strategy).__name__}"
    )


@dataclass(frozen=True)
class BandMF:
    """An amplified BandMF run with cyclic Poisson sampling (module docstring); validated at construction.

    Attributes:
        strategy: a banded lower-triangular strategy (``Toeplitz``/``bsr`` or ``Dense``).
        cycle_length: b̂ ≥ bands, ≤ n.
        sampling_rate: q in (0, 1].
        noise_multiplier: σ > 0 (noise std σζ, ζ = max column norm).
        partition: ``"equal_split"`` (zero-out) or ``"independent"`` (add/remove).
        partition_public: whether the partition is fixed and known (then the bracket is on the truth).
        per_column: use the per-column sensitivities ‖c_i‖/ζ (else 1 for every column).
        group_size, max_batch_size: truncated Poisson batches (both or neither).
        examples_per_user: k ≥ 1 examples per privacy unit.
    """

    strategy: Toeplitz | Dense
    cycle_length: int
    sampling_rate: float
    noise_multiplier: float
    partition: Partition = "equal_split"
    partition_public: bool = False
    per_column: bool = True
    group_size: int | None = None
    max_batch_size: int | None = None
    examples_per_user: int = 1

    def __post_init__(self) -> None:
        n = getattr(self.strategy, "n", None)
        cycle = check_int("cycle_length", self.cycle_length, minimum=1, maximum=n if isinstance(n, int) else None)
        object.__setattr__(self, "cycle_length", cycle)
        object.__setattr__(self, "strategy", _check_banded(self.strategy, cycle))
        object.__setattr__(self, "sampling_rate", check_sampling_rate("sampling_rate", self.sampling_rate))
        object.__setattr__(self, "noise_multiplier", check_positive("noise_multiplier", self.noise_multiplier))
        object.__setattr__(self, "partition", _check_partition(self.partition))
        for name in ("partition_public", "per_column"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")  # noqa: TRY004
        if (self.group_size is None) != (self.max_batch_size is None):
            raise ValueError("group_size and max_batch_size (truncated Poisson batches) go together: give both or neither")
        if self.group_size is not None:
            if not self.partition_public:
                raise ValueError(
                    "group_size (truncated Poisson batches) needs partition_public=True: the truncated law is "
                    "derived for adding/removing one example of a group of fixed, known size (docs/samplers.md §3); "
                    "zero-out under a random equal split (jax_privacy's truncated setting) is not covered"
                )
            object.__setattr__(self, "group_size", check_int("group_size", self.group_size, minimum=1))
            object.__setattr__(self, "max_batch_size", check_int("max_batch_size", self.max_batch_size, minimum=1))
        k = check_int("examples_per_user", self.examples_per_user, minimum=1)
        if k > 1 and self.group_size is not None:
            raise ValueError("examples_per_user > 1 is supported with plain Poisson batches only (no truncation)")
        object.__setattr__(self, "examples_per_user", k)

    @property
    def rounds(self) -> int:
        """⌈n / b̂⌉: the most steps one group is eligible for."""
        return -(-self.strategy.n // self.cycle_length)

    @property
    def relation(self) -> str:
        """The neighbouring relation of the statement (``PARTITION_RELATION``; add/remove with truncation)."""
        return "add_remove" if self.group_size is not None else PARTITION_RELATION[self.partition]

    def group_ratios(self) -> list[list[Fraction]]:
        """Per non-dominated group, the squared ratios ‖c_i‖²/ζ² of its columns, largest first (exact)."""
        n, cycle = self.strategy.n, self.cycle_length
        if not self.per_column:
            return [[Fraction(1)] * self.rounds]
        norms = self.strategy.column_norms_squared()
        zeta2 = max(norms)
        groups = [sorted((norms[i] / zeta2 for i in range(j, n, cycle)), reverse=True) for j in range(cycle)]
        groups.sort(key=len, reverse=True)
        kept: list[list[Fraction]] = []
        for g in groups:
            if not any(len(h) >= len(g) and all(a >= b for a, b in zip(h, g, strict=False)) for h in kept):
                kept.append(g)
        return kept

    def mechanism(self, ratio: Fraction, side: Literal["upper", "lower"]) -> Mechanism | None:
        """One block's law at sensitivity √ratio, rounded up (``"upper"``) or down (``"lower"``)."""
        from optcomp.dpsgd import user_level_mixture
        from optcomp.mechanisms import Gaussian, PoissonSubsampled, TruncatedPoissonGaussian

        s = sqrt_up(ratio) if side == "upper" else sqrt_down(ratio)
        if s == 0.0:
            return None
        sigma, q = self.noise_multiplier, self.sampling_rate
        if self.group_size is None and self.examples_per_user == 1:
            base = Gaussian(sigma, sensitivity=s)
            return base if q == 1.0 else PoissonSubsampled(base, sampling_rate=q)
        scaled = sigma / s if s == 1.0 else (next_down(sigma / s) if side == "upper" else next_up(sigma / s))
        if self.group_size is not None and self.max_batch_size is not None:
            # its law only dominates the block: the run bracket's lower side takes the explicit pair (issue 27 C)
            return TruncatedPoissonGaussian(
                scaled, dataset_size=self.group_size, sampling_rate=q, max_batch_size=self.max_batch_size
            )
        return user_level_mixture(scaled, q, self.examples_per_user)

    def compositions(self, side: Literal["upper", "lower"], accuracy: Accuracy) -> list[Composition]:
        """One composition per non-dominated group (items pooled by sensitivity), the laws' own
        (``Composition.dominating``); the ``"lower"`` side's items are the run bracket's dominated ones
        (:func:`optcomp._items.dominated_items`: a truncated-Poisson block's explicit pair)."""
        from optcomp import compose
        from optcomp._items import dominated_items

        out = []
        for ratios in self.group_ratios():
            counts: dict[Mechanism, int] = {}
            for r in ratios:
                m = self.mechanism(r, side)
                if m is not None:
                    counts[m] = counts.get(m, 0) + 1
            items = tuple(counts.items())
            if side == "lower":
                items = dominated_items(items) or items
            out.append(compose(*items, accuracy=accuracy).dominating())
        return out

    def brackets(self, accuracy: Accuracy, *, revealed: bool = True) -> list[RunBracket]:
        """One :class:`~optcomp.queries.RunBracket` per non-dominated group: upper ends from its blocks at
        sensitivities rounded up, lower ends from its blocks rounded down (explicit pairs) — the
        revealed-partition mechanism's; ``revealed=False`` (a hidden partition): no lower end (0)."""
        from optcomp.queries import RunBracket

        uppers = self.compositions("upper", accuracy)
        lowers = self.compositions("lower", accuracy) if revealed else [None] * len(uppers)
        return [RunBracket(u, low) for u, low in zip(uppers, lowers, strict=True)]

    def epsilon(self, delta: float, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> Bound:
        """Certified ε(δ) of the run: :meth:`revealed_epsilon` with a public partition; with a hidden one
        its upper end and lower end 0 (the per-group lower end bounds the revealed-partition mechanism,
        which dominates the run, not the run: module docstring, issue 27 C's audit)."""
        d = check_open_probability("delta", delta)
        return _worst(b.epsilon(d) for b in self.brackets(accuracy, revealed=self.partition_public))

    def delta(self, epsilon: float, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> Bound:
        """Certified δ(ε) of the run (ends as in :meth:`epsilon`)."""
        e = check_nonnegative("epsilon", epsilon)
        return _worst(b.delta(e) for b in self.brackets(accuracy, revealed=self.partition_public))

    def revealed_epsilon(self, delta: float, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> Bound:
        """ε(δ) bracket of the mechanism with the partition revealed (the run's own with a public one): the
        worst group's (:meth:`brackets`)."""
        d = check_open_probability("delta", delta)
        return _worst(b.epsilon(d) for b in self.brackets(accuracy))

    def revealed_delta(self, epsilon: float, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> Bound:
        """δ(ε) bracket of the mechanism with the partition revealed (ends as in :meth:`revealed_epsilon`)."""
        e = check_nonnegative("epsilon", epsilon)
        return _worst(b.delta(e) for b in self.brackets(accuracy))

    def statement(self) -> str:
        """One paragraph: the reduction, the partition (public or hidden), the relation, ζ (P9)."""
        cols = "per-column sensitivities ‖c_i‖/ζ" if self.per_column else "sensitivity 1 for every column"
        if self.partition_public:
            scope = "The partition is fixed and public: both ends of the bracket bound the run's true ε."
        else:
            scope = (
                "The partition is drawn at random and kept hidden: only the upper end is a statement about the "
                "run (its lower end is 0; the same mechanism with the partition revealed is bracketed apart)."
            )
        batches = ""
        if self.group_size is not None:
            batches = (
                f" Batches are truncated Poisson (group size {self.group_size}, cap {self.max_batch_size}); the "
                "relation is add/remove of one example within its (public, fixed-size) group."
            )
        if self.examples_per_user > 1:
            batches += (
                f" Each privacy unit has up to {self.examples_per_user} examples, all in the same group (the "
                "partition is by unit; examples of one unit spread over groups are not covered)."
            )
        return (
            f"Amplified BandMF: n = {self.strategy.n} steps, {self.cycle_length} groups in cyclic order, Poisson "
            f"rate q = {self.sampling_rate:g}, noise N(0, σ²ζ²) with σ = {self.noise_multiplier:g} and ζ = the max "
            f"column norm of C. Accounted as the max over groups of compositions of Poisson-subsampled Gaussians "
            f"with {cols} (arXiv 2306.08153, Thm 4), under the {self.relation.replace('_', '-')} relation "
            f"({self.partition} partition).{batches} {scope}"
        )


def _worst(groups: Iterable[Bound]) -> Bound:
    """The run's bracket from its groups' (each example is in one group: its ε is the worst group's)."""
    bounds = list(groups)
    return Bound(max(b.lower for b in bounds), max(b.upper for b in bounds))


def noise_multiplier(run: BandMF, target_epsilon: float, delta: float, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> float:
    """The least σ (safe side) whose certified upper ε(δ) ≤ ``target_epsilon`` for ``run`` at that σ.

    With ``run.per_column`` the per-column run is searched directly with :func:`optcomp._inverse.solve`
    (the one inverse solver: the σ returned was evaluated and its certified upper ε meets the target);
    otherwise the standard reduction (every column at 1) is calibrated by
    :func:`optcomp.calibrate.noise_for_target`. Either σ meets the target for the run.
    """
    from optcomp._inverse import solve
    from optcomp.calibrate import noise_for_target

    target = check_positive("target_epsilon", target_epsilon)
    d = check_open_probability("delta", delta)
    unit = replace(run, noise_multiplier=1.0, per_column=False)

    def family(sigma: float) -> Mechanism:
        m = replace(unit, noise_multiplier=sigma).mechanism(Fraction(1), "upper")
        if m is None:
            raise ValueError("internal: a unit-sensitivity block has no law")
        return m

    standard = noise_for_target(family, target, d, unit.rounds, accuracy=accuracy).noise
    if not run.per_column:
        return standard
    _, passing = solve(
        lambda sigma: replace(run, noise_multiplier=sigma).epsilon(d, accuracy=accuracy),
        target, name="noise_multiplier", guess=standard, rtol=CALIBRATION_RTOL, passing=standard,
    )
    return standard if passing is None else passing


def steps(run: BandMF, target_epsilon: float, delta: float, *, accuracy: Accuracy = DEFAULT_ACCURACY) -> int:
    """The most training steps n = R·b̂ whose certified upper ε ≤ target (every column at sensitivity 1).

    R, the most rounds per group, is :func:`optcomp.dpsgd.steps` of the per-group DP-SGD run (the inverse
    solver on the certified upper end); every group then has at most R participations.
    """
    from optcomp import dpsgd

    sampling: Literal["truncated_poisson", "poisson"] = "truncated_poisson" if run.group_size is not None else "poisson"
    rounds = dpsgd.steps(
        target_epsilon, run.noise_multiplier, run.sampling_rate, delta, sampling=sampling,
        examples_per_user=run.examples_per_user, dataset_size=run.group_size,
        max_batch_size=run.max_batch_size, accuracy=accuracy,
    )
    return rounds * run.cycle_length
