"""Test tolerances: the one place tests take their numbers from (never inline)."""

#: Relative agreement demanded between an exact float64 formula and a 50-digit mpmath computation.
EXACT_RTOL = 1e-9
#: Agreement of two exact float64 methods for the same quantity (e.g. brute force vs grid DP).
METHOD_RTOL = 1e-9
#: Digits used for independent mpmath references.
MPMATH_DPS = 50
#: GDP δ(ε) vs mpmath (issue: 1e-12 relative, or 1e-300 absolute where it underflows).
GDP_RTOL = 1e-12
GDP_ATOL = 1e-300
#: Mechanism laws: a midpoint-rule quadrature of E_P[e^{-L}] on a fine grid vs 1 (discretisation error).
LAW_GRID_RTOL = 1e-4
#: Absolute error of a float64 hockey-stick sum Σ max(P − e^ε Q, 0) over a few pmf entries.
PMF_ATOL = 1e-15
#: Optimal composition (issue 2): target ε-width asked of method="grid" in tests, and the η given to method="mv".
OPTIMAL_GRID_TOLERANCE = 1e-3
OPTIMAL_MV_ETA = 5e-2
#: f-DP: width of the C_p (subsampling) bracket on the default grid, and of the δ-curve → trade-off bracket.
FDP_SUBSAMPLE_WIDTH = 1e-5
FDP_DELTA_CURVE_WIDTH = 0.05
#: f-DP: δ(ε) of a finely sampled chord interpolant of G_μ vs the closed form (grid error, not rounding).
FDP_CHORD_DELTA_ATOL = 1e-6
#: f-DP: CLT μ estimate vs √n·ε for small ε (an approximation, checked loosely).
CLT_MU_RTOL = 0.05
#: PLD engine tests: grid steps (coarse, typical, fine) used by tests/test_pld*.py.
PLD_COARSE_STEP = 1e-2
PLD_TEST_STEP = 5e-4
PLD_FINE_STEP = 1e-4
#: δ → ε → δ round trip through a closed form with exp/sqrt (conditioning up to ~(ε/σ)² amplifies rounding).
ROUND_TRIP_RTOL = 1e-6
#: Relative bracket width of optimal ε for k = 10^6 copies (log C(k, ℓ) via gammaln carries ~u·ln k! absolute error).
OPTIMAL_LARGE_K_RTOL = 1e-8
#: PLD grid step for property tests that hold at any accuracy (monotonicity, safe-side inverses): coarse = fast.
COARSE_GRID_STEP = 1e-3
#: f-DP (ε, δ) composition: relative width allowed of its certified log-space δ bracket (≈ u·log k! at k ≤ 2·10⁵).
FDP_COMPOSITION_DELTA_RTOL = 1e-6
#: Staircase: Geng–Viswanath's closed-form optimal γ vs a numerical minimisation of the closed-form cost.
STAIRCASE_GAMMA_ATOL = 1e-6
#: RDP: closed forms vs mpmath quadrature of the Rényi integral (quadrature error), and vs dp_accounting.
RDP_QUAD_RTOL = 1e-8
RDP_PEER_RTOL = 1e-3
#: Rényi conversion (issue 35): relative width demanded of the optimal route's ε bracket.
RENYI_BRACKET_RTOL = 1e-4
#: Interop (issue 12): dp_accounting's fine PLD grid, value_discretization_interval; its ε estimate may exceed the
#: truth by up to one interval per discretised step (pessimistic rounding of each loss).
DP_ACCOUNTING_FINE_STEP = 1e-5
#: Optimal composition on a common lattice (split engine, FFT error certified): relative width of its "exact" bracket.
OPTIMAL_LATTICE_RTOL = 1e-6
#: Samplers (issue 17): relative resolution of the shuffle lower pair's 2000 bins against a single cube
#: threshold, and the absolute error allowed to mpmath quadrature of a hockey-stick integral.
SHUFFLE_BIN_RTOL = 1e-3
QUADRATURE_ATOL = 1e-12
#: f-DP readouts on a PLD (issue 15): wall-clock bound per call that turns a hang into a failure (not a timing test).
FDP_PLD_CALL_SECONDS = 120.0
#: Directed GDP closed forms (issue 15): relative excess allowed of the directed δ over the 50-digit value where
#: μ ≥ 0.1 (the stated error bound is ≈ 8u(κ + a² + |log δ| + 8) in log δ; a few hundred ulps at ε ≤ 200).
GDP_DIRECTED_RTOL = 1e-11
#: README/docs numbers (tests/test_readme.py): a number quoted with a decimal point matches within this many
#: units of its last quoted digit (documents round; bracket ends are rounded outwards).
DOC_LAST_DIGIT_UNITS = 1
#: optcomp.sweep tests: the relative width asked of the engine (certified at any width; coarse = fast).
SWEEP_RELATIVE_WIDTH = 1e-2
#: Discrete Gaussian on its exact lattice (issue 35): largest relative width of an ε or δ bracket the lattice
#: engine may return (the issue's "≤ 1e-6 wide where the lattice is exact"; it is typically ~1e-10).
DGAUSS_LATTICE_RTOL = 1e-6
#: Private selection: relative agreement of a law of K's closed forms (pgf, mean, tails) with the pmf series, and of
#: the Papernot-Steinke routes with the formulas evaluated at 50 digits (ours rounded up by a few hundred ulps).
SELECTION_LAW_RTOL = 1e-12
SELECTION_ROUTE_RTOL = 1e-12
#: Slack of a certified upper end of the selection's δ over an exact reference (float rounding of the reference).
SELECTION_DELTA_ATOL = 1e-14
#: Bounded range: a closed form (KL_max, zCDP, family RDP) rounded up vs 50-digit mpmath (a few ulps above).
BR_CLOSED_FORM_RTOL = 1e-13
#: Bounded range: how far above KL_max the order-wise D_α/α may read on the grid of orders (its own rounding).
BR_ZCDP_SLACK = 1e-12
#: Bounded range: the lattice adversary's value (the engine's lower end on the lattice) vs the exhaustive tree
#: over the same t-grid, in mpmath (both exact: rounding only).
BR_TREE_RTOL = 1e-10
#: Bounded range: a brute-force t-scan of the chord interpolant may sit this far (relative) below the cell
#: maxima the engine certifies (the scan's own grid misses the maximiser by a little).
BR_SCAN_RTOL = 1e-9
