"""Independent reference values for the tests, computed from the papers' formulas with mpmath.

One home for every truth a test compares the library against (never a copy per test file): closed forms,
quadratures, exact enumerations and high-precision recomputations. Each function evaluates its formula as
written in the paper (its docstring gives the formula and the source), without going through any optcomp
code. Test files import from here (``from tests._references import X``); no other test module imports mpmath
(``tests/test_style.py`` checks).

Modules by topic:

* ``gdp``: δ_μ(ε), log δ_μ(ε), their inverses in ε and μ, the composed μ (Dong–Roth–Su);
* ``composition``: the (ε, δ) composition δ, the classic closed forms (DRV, KOV, Smith–Ullman), the δ floor;
* ``optimal``: Murtagh–Vadhan's sums and the enumerated / convolved canonical laws (KOV Thm III.3);
* ``mechanisms``: single mechanisms and their subsampled forms (Gaussian, Laplace, k-RR, pairs, pmfs);
* ``staircase``: the staircase density, its δ, moments and k-fold δ (Geng–Viswanath);
* ``fdp``: trade-off functions (group privacy, attack power);
* ``rdp``: Rényi divergences by quadrature, the zCDP closed-form conversion, finite laws' Rényi moments and
  dual certificates of the optimal conversion re-checked; ``numerics``: the log-space helpers at 50 digits;
* ``ledger``: adaptive RR trees and the ledger currencies' thresholds and counts;
* ``exact``: exact comparisons of floats with high-precision truths (no rounding on the test's side);
* ``published``: other accountants' numbers, pinned with the call that produced them;
* ``dgauss``: the discrete Gaussian composed exactly on its lattice (integer bookkeeping), CKS's zCDP conversion;
* ``selection``: laws of K by their pmf series, the exact best-of-K law and its worst order, Papernot–Steinke
  Thm 2 / Thm 6 as written.

Precision: most functions fix their own (``MPMATH_DPS`` unless their docstring says otherwise); those in
``optimal`` and ``ledger`` work at the ambient precision. ``mpmath.mp.dps`` is set to ``MPMATH_DPS`` here,
once, so that the ambient precision, and arithmetic on a returned ``mpf``, is ``MPMATH_DPS`` digits (as when
each test module set it itself).
"""

from __future__ import annotations

import mpmath

from tests.tolerances import MPMATH_DPS

mpmath.mp.dps = MPMATH_DPS

from tests._references.composition import (
    classic_closed_forms,
    delta_floor,
    epsilon_delta_composition_delta,
    kov_corollary_v1,
    no_failure_probability,
    total_variation_bound,
)
from tests._references.dgauss import (
    delta_bracket as dgauss_delta_bracket,
)
from tests._references.dgauss import (
    epsilon_reference as dgauss_epsilon_reference,
)
from tests._references.dgauss import (
    zcdp_conversion_epsilon,
)
from tests._references.exact import (
    abs_error_at_most,
    at_least_within,
    brackets,
    decimal,
    excess,
    lower_within_ulps,
    reciprocal,
    upper_within_ulps,
)
from tests._references.fdp import (
    gaussian_attack_tpr,
    group_epsilon_delta_delta,
    group_epsilon_delta_tradeoff,
)
from tests._references.gdp import (
    gdp_composed_mu,
    gdp_delta,
    gdp_epsilon,
    gdp_log_delta,
    gdp_mu,
)
from tests._references.ledger import (
    Tree,
    admitted_counts,
    approx_zcdp_rho_star,
    at_precision,
    gdp_delta_at_mu_squared,
    hockey_stick_both_ways,
    rr_keep_probability,
    rr_path_delta,
    rr_tree_deltas,
    rr_tree_leaves,
    rr_worst_tree,
)
from tests._references.mechanisms import (
    canonical_pmfs,
    discrete_delta,
    discrete_kfold_delta,
    gaussian_delta_by_quadrature,
    gaussian_loss_log_sf,
    kary_rr_delta,
    kary_rr_epsilon,
    laplace_epsilon,
    mixture_gaussian_delta,
    pmf_pair_delta_exact,
    poisson_gaussian_delta,
    poisson_gaussian_log_p_sf,
    poisson_gaussian_two_step_delta,
    poisson_laplace_delta,
    subsampled_gaussian_delta,
    truncated_laplace_delta,
    two_point_pair_delta,
    vuvuzela_pmfs,
    without_replacement_gaussian_epsilon,
    without_replacement_laplace_log_q_sf,
)
from tests._references.numerics import (
    log1mexp_exact,
    log_sum_exp_exact,
)
from tests._references.optimal import (
    Law,
    canonical_homogeneous_law,
    canonical_lattice_law,
    canonical_outcomes,
    delta_target,
    kov_theorem_iii3_deltas,
    lattice_hockey_stick_float,
    law_delta_at,
    law_hockey_stick,
    law_least_epsilon,
    mv_heterogeneous_sum,
    mv_homogeneous_sum,
    mv_homogeneous_sum_large_k,
    mv_lattice_sum,
    optimal_delta_from_sum,
    optimal_epsilon_from_sum,
    two_group_homogeneous_hockey_stick,
)
from tests._references.published import (
    DP_ACCOUNTING_MOG_EPSILON,
    DP_ACCOUNTING_TRUNCATED_EPSILON,
    PLD_ACCOUNTING_ALLOCATION_EPSILON,
)
from tests._references.rdp import (
    Density,
    dual_certificate_gap,
    dual_certificate_value,
    finite_law_delta,
    gaussian_mixture_pdf,
    laplace_pdf,
    law_kls,
    law_log_moments,
    normal_pdf,
    renyi_divergence,
    zcdp_closed_form_delta,
    zcdp_closed_form_epsilon,
)
from tests._references.rdp_binary import (
    BinaryCurve,
    best_pair_delta,
    best_pair_epsilon,
    binary_certificate_value,
    binary_lagrangian_grid_max,
    pair_delta,
    pair_epsilon,
    pair_meets,
)
from tests._references.staircase import (
    staircase_delta,
    staircase_density,
    staircase_moments,
    three_atom_kfold_delta,
)

__all__ = [
    "DP_ACCOUNTING_MOG_EPSILON",
    "DP_ACCOUNTING_TRUNCATED_EPSILON",
    "PLD_ACCOUNTING_ALLOCATION_EPSILON",
    "BinaryCurve",
    "Density",
    "Law",
    "Tree",
    "abs_error_at_most",
    "admitted_counts",
    "approx_zcdp_rho_star",
    "at_least_within",
    "at_precision",
    "best_pair_delta",
    "best_pair_epsilon",
    "binary_certificate_value",
    "binary_lagrangian_grid_max",
    "brackets",
    "canonical_homogeneous_law",
    "canonical_lattice_law",
    "canonical_outcomes",
    "canonical_pmfs",
    "classic_closed_forms",
    "decimal",
    "delta_floor",
    "delta_target",
    "dgauss_delta_bracket",
    "dgauss_epsilon_reference",
    "discrete_delta",
    "discrete_kfold_delta",
    "dual_certificate_gap",
    "dual_certificate_value",
    "epsilon_delta_composition_delta",
    "excess",
    "finite_law_delta",
    "gaussian_attack_tpr",
    "gaussian_delta_by_quadrature",
    "gaussian_loss_log_sf",
    "gaussian_mixture_pdf",
    "gdp_composed_mu",
    "gdp_delta",
    "gdp_delta_at_mu_squared",
    "gdp_epsilon",
    "gdp_log_delta",
    "gdp_mu",
    "group_epsilon_delta_delta",
    "group_epsilon_delta_tradeoff",
    "hockey_stick_both_ways",
    "kary_rr_delta",
    "kary_rr_epsilon",
    "kov_corollary_v1",
    "kov_theorem_iii3_deltas",
    "laplace_epsilon",
    "laplace_pdf",
    "lattice_hockey_stick_float",
    "law_delta_at",
    "law_hockey_stick",
    "law_kls",
    "law_least_epsilon",
    "law_log_moments",
    "log1mexp_exact",
    "log_sum_exp_exact",
    "lower_within_ulps",
    "mixture_gaussian_delta",
    "mv_heterogeneous_sum",
    "mv_homogeneous_sum",
    "mv_homogeneous_sum_large_k",
    "mv_lattice_sum",
    "no_failure_probability",
    "normal_pdf",
    "optimal_delta_from_sum",
    "optimal_epsilon_from_sum",
    "pair_delta",
    "pair_epsilon",
    "pair_meets",
    "pmf_pair_delta_exact",
    "poisson_gaussian_delta",
    "poisson_gaussian_log_p_sf",
    "poisson_gaussian_two_step_delta",
    "poisson_laplace_delta",
    "reciprocal",
    "renyi_divergence",
    "rr_keep_probability",
    "rr_path_delta",
    "rr_tree_deltas",
    "rr_tree_leaves",
    "rr_worst_tree",
    "staircase_delta",
    "staircase_density",
    "staircase_moments",
    "subsampled_gaussian_delta",
    "three_atom_kfold_delta",
    "total_variation_bound",
    "truncated_laplace_delta",
    "two_group_homogeneous_hockey_stick",
    "two_point_pair_delta",
    "upper_within_ulps",
    "vuvuzela_pmfs",
    "without_replacement_gaussian_epsilon",
    "without_replacement_laplace_log_q_sf",
    "zcdp_closed_form_delta",
    "zcdp_closed_form_epsilon",
    "zcdp_conversion_epsilon",
]
