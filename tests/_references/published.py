"""Numbers published by other accountants (run once, pinned here with the call that produced them)."""

from __future__ import annotations

#: dp_accounting 0.6.0, ``PLDAccountant`` (default discretisation 1e-4, pessimistic), run on
#: 2026-11-24: ε at δ = 1e-5 of ``MixtureOfGaussiansDpEvent(1.0, [0, 1], [0.5, 0.5])``.
DP_ACCOUNTING_MOG_EPSILON = 3.5339979859709816
#: ... and of ``SelfComposedDpEvent(TruncatedSubsampledGaussianDpEvent(60000, 256/60000, 300, 1.1), 3516)``.
DP_ACCOUNTING_TRUNCATED_EPSILON = 2.395486972345338
#: PLD_accounting 2.0 (Feldman–Shenfeld), ``gaussian_allocation_epsilon_range(delta=1e-6, sigma=3.0,
#: num_steps=100, num_selected=10, num_epochs=1)``, run on 2026-11-24: its (lower, upper) ε.
PLD_ACCOUNTING_ALLOCATION_EPSILON = (1.4575104425149317, 1.5257305409041644)
