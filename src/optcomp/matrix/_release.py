"""The un-amplified matrix mechanism: one Gaussian release, μ-GDP with μ = Δ/(σζ), certified.

C X + Z with Z ~ N(0, σ²ζ²) is, in the worst direction, the pair (N(0, σ²ζ²), N(Δ, σ²ζ²)), so it is
μ-GDP with μ = r·Δ/(σζ) and its trade-off curve is exactly G_μ (``docs/matrix.md`` P1). Training is
adaptive (X's rows depend on earlier outputs); the adaptive streaming release is μ-GDP with the same Δ
when C is lower-triangular (Denisov, McMahan, Rush, Smith, Thakurta, NeurIPS 2022, single
participation; Choquette-Choo et al., "Multi-Epoch Matrix Factorization Mechanisms for Private Machine
Learning", arXiv 2211.06530, multiple participations). Here

* σ is the ``noise_multiplier`` and ζ the ``normalizer``, named explicitly: ``"absolute"`` (ζ = 1: the
  noise standard deviation is σ times the clip norm; DP-FTRL, dp_accounting's tree event) or
  ``"max_column_norm"`` (ζ = max_i ‖c_i‖: jax_privacy's column-normalised strategies);
* r is fixed by the ``relation``: 1 under ``"zero_out"`` (a record's gradients replaced by 0,
  dp_accounting's ``REPLACE_SPECIAL``) and ``"add_remove"``, 2 under ``"substitution"`` (replace-one);
* μ's ends are μ_lo = r·Δ_lo/(σζ_hi) rounded down and μ_hi = r·Δ_hi/(σζ_lo) rounded up, and ε, δ come
  from the queries floor's certified GDP route (``Gaussian(1, sensitivity=μ)``: DRS Cor 2.13 at μ
  rounded outward), the upper end at μ_hi and the lower end at μ_lo.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from optcomp._numerics import Bound, check_nonnegative, check_open_probability, check_positive
from optcomp._rounding import next_down, next_up
from optcomp.matrix._exact import sqrt_down, sqrt_up
from optcomp.matrix._pattern import MinSep, Pattern
from optcomp.matrix._sensitivity import SensitivityBound, check_strategy, max_column_norm_squared, sensitivity
from optcomp.matrix._strategy import Blt, Dense, Toeplitz, Tree
from optcomp.mechanisms import Relation

if TYPE_CHECKING:
    from optcomp.queries import Composition

Normalizer = Literal["absolute", "max_column_norm"]

#: The normalisers ζ of the noise (module docstring).
NORMALIZERS: tuple[Normalizer, ...] = ("absolute", "max_column_norm")
#: The neighbouring relations a matrix-mechanism statement may name, and the factor r on Δ.
RELATIONS: dict[str, int] = {"zero_out": 1, "add_remove": 1, "substitution": 2}


def check_normalizer(value: object) -> Normalizer:
    """``value`` as a normaliser name; ``ValueError`` naming ``normalizer`` otherwise."""
    for name in NORMALIZERS:
        if value == name:
            return name
    raise ValueError(f"normalizer must be one of {NORMALIZERS}, got {value!r}")


def check_relation(value: object) -> Relation:
    """``value`` as a relation name; ``ValueError`` naming ``relation`` otherwise."""
    if value == "zero_out":
        return "zero_out"
    if value == "add_remove":
        return "add_remove"
    if value == "substitution":
        return "substitution"
    raise ValueError(f"relation must be one of {tuple(RELATIONS)}, got {value!r}")


@dataclass(frozen=True)
class Release:
    """One un-amplified matrix-mechanism release and its certified μ (module docstring).

    Attributes:
        sensitivity: the certified Δ bracket (and its method).
        zeta_squared: (ζ²_lo, ζ²_hi), exact rationals (1 for ``"absolute"``).
        noise_multiplier: σ > 0.
        normalizer: ``"absolute"`` or ``"max_column_norm"``.
        relation: ``"zero_out"``, ``"add_remove"`` or ``"substitution"``.
        mu: the certified bracket on μ = r·Δ/(σζ).
        pattern: the participation pattern, for statements.
        strategy_label: the strategy's name, for statements.
        n: the number of steps.
    """

    sensitivity: SensitivityBound
    zeta_squared: tuple[Fraction, Fraction]
    noise_multiplier: float
    normalizer: Normalizer
    relation: Relation
    mu: Bound
    pattern: Pattern
    strategy_label: str
    n: int

    def epsilon(self, delta: float) -> Bound:
        """Certified ε(δ) of μ-GDP: upper end at μ_hi, lower end at μ_lo (queries' GDP route)."""
        d = check_open_probability("delta", delta)
        return Bound(_gdp(self.mu.lower).epsilon(d).lower, _gdp(self.mu.upper).epsilon(d).upper)

    def delta(self, epsilon: float) -> Bound:
        """Certified δ(ε) of μ-GDP (same ends as :meth:`epsilon`)."""
        e = check_nonnegative("epsilon", epsilon)
        return Bound(_gdp(self.mu.lower).delta(e).lower, _gdp(self.mu.upper).delta(e).upper)

    def rdp_epsilon(self, delta: float) -> float:
        """The RDP comparator at μ_hi (Gaussian RDP α·μ²/2, dp_accounting's orders, improved conversion):
        an upper bound only, the number RDP accountants report (``optcomp.rdp``)."""
        from optcomp import rdp
        from optcomp.mechanisms import Gaussian

        d = check_open_probability("delta", delta)
        return rdp.compose(Gaussian(1.0, sensitivity=self.mu.upper)).epsilon(d).value

    def statement(self) -> str:
        """One paragraph naming the four conventions (``docs/matrix.md`` P9)."""
        exact = "exactly" if self.sensitivity.exact else "within a certified bracket"
        zeta = "ζ = 1 (noise std = σ × clip norm)" if self.normalizer == "absolute" else "ζ = max column norm of C"
        return (
            f"The {self.strategy_label} matrix mechanism under {self.pattern.describe()} has sensitivity "
            f"Δ² ∈ [{float(self.sensitivity.squared_lower):.12g}, {float(self.sensitivity.squared_upper):.12g}] "
            f"({exact}; method {self.sensitivity.method}). With noise N(0, σ²ζ²), σ = {self.noise_multiplier:g} and "
            f"{zeta}, the release is μ-GDP with μ ∈ [{self.mu.lower:.10g}, {self.mu.upper:.10g}] under the "
            f"{self.relation.replace('_', '-')} relation (Δ ×{RELATIONS[self.relation]}), also when the rows of X are "
            "chosen adaptively, since C is lower-triangular (Denisov et al. 2022; arXiv 2211.06530). "
            "No amplification by sampling is assumed." + _cap_note(self.pattern, self.n)
        )


def _cap_note(pattern: Pattern, n: int) -> str:
    """The design note's warning: a user cap below the combinatorial maximum is an assumption on the run."""
    if isinstance(pattern, MinSep) and pattern.max_participations is not None and pattern.participations(n) < pattern.feasible(n):
        return (
            f" The cap of {pattern.max_participations} participations is below the {pattern.feasible(n)} that "
            f"min_sep = {pattern.min_sep} allows in {n} steps: the guarantee rests on the cap being enforced."
        )
    return ""


def _gdp(mu: float) -> Composition:
    from optcomp import compose
    from optcomp.mechanisms import Gaussian

    return compose(Gaussian(1.0, sensitivity=mu))


def _label(strategy: Toeplitz | Blt | Dense | Tree) -> str:
    if isinstance(strategy, Toeplitz):
        return f"{strategy.label} ({strategy.bands} bands, n = {strategy.n})"
    if isinstance(strategy, Tree):
        restarts = f", {len(strategy.step_counts)} trees" if len(strategy.step_counts) > 1 else ""
        return f"binary-tree (n = {strategy.n}{restarts}{', completed' if strategy.completion else ''})"
    return f"{type(strategy).__name__.lower()} (n = {strategy.n})"


def release(
    strategy: Toeplitz | Blt | Dense | Tree,
    pattern: Pattern,
    *,
    noise_multiplier: float,
    normalizer: Normalizer = "absolute",
    relation: Relation = "zero_out",
) -> Release:
    """The un-amplified release of ``strategy`` under ``pattern`` with noise N(0, σ²ζ²) (module docstring).

    Args:
        strategy: a strategy specification; it must be lower-triangular (streamable), which the adaptive
            theorems need.
        pattern: the participation pattern.
        noise_multiplier: σ > 0.
        normalizer: ζ, ``"absolute"`` (1) or ``"max_column_norm"``.
        relation: ``"zero_out"``, ``"add_remove"`` or ``"substitution"``.

    Raises:
        ValueError: a parameter out of range (named), or a strategy that is not lower-triangular.
    """
    s = check_strategy(strategy)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    norm = check_normalizer(normalizer)
    rel = check_relation(relation)
    if not s.lower_triangular:
        raise ValueError(
            "strategy must be lower-triangular (square, with a non-zero diagonal) for the adaptive release "
            "theorems (Denisov et al. 2022; arXiv 2211.06530): C⁻¹ must be lower-triangular to stream the noise"
        )
    sens = sensitivity(s, pattern)
    zeta = max_column_norm_squared(s) if norm == "max_column_norm" else (Fraction(1), Fraction(1))
    r = RELATIONS[rel]
    mu_hi = next_up(r * sens.upper / next_down(sigma * sqrt_down(zeta[0])))
    mu_lo = next_down(r * sens.lower / next_up(sigma * sqrt_up(zeta[1])))
    return Release(sens, zeta, sigma, norm, rel, Bound(max(0.0, mu_lo), mu_hi), pattern, _label(s), s.n)


def epsilon(
    strategy: Toeplitz | Blt | Dense | Tree,
    pattern: Pattern,
    *,
    noise_multiplier: float,
    delta: float,
    normalizer: Normalizer = "absolute",
    relation: Relation = "zero_out",
) -> Bound:
    """Certified ε(δ) of the un-amplified release (:func:`release`, then :meth:`Release.epsilon`)."""
    return release(strategy, pattern, noise_multiplier=noise_multiplier, normalizer=normalizer,
                   relation=relation).epsilon(delta)


def delta(
    strategy: Toeplitz | Blt | Dense | Tree,
    pattern: Pattern,
    *,
    noise_multiplier: float,
    epsilon: float,
    normalizer: Normalizer = "absolute",
    relation: Relation = "zero_out",
) -> Bound:
    """Certified δ(ε) of the un-amplified release (:func:`release`, then :meth:`Release.delta`)."""
    return release(strategy, pattern, noise_multiplier=noise_multiplier, normalizer=normalizer,
                   relation=relation).delta(epsilon)



