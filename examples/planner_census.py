"""The README's worked example: 20 statistics of a census-like table under one (ε, δ) = (1, 1e-6) budget.

Prints, per statistic, the accuracy α (half-width of the 95% interval of the noise; histograms per bin)
under basic composition, optimal black-box composition (MV Thm 1.5) and mechanism-aware accounting (PLD /
GDP), and the gain over basic. Run: ``PYTHONPATH=src python examples/planner_census.py``.
"""

from __future__ import annotations

from pathlib import Path

from optcomp.planner import load_plan, plan_all

PLAN = Path(__file__).resolve().parent / "census_plan.toml"


def main() -> None:
    plan = load_plan(PLAN)
    results = plan_all(plan, ("basic", "optimal", "mechanism_aware"))
    basic, opt, mech = results["basic"], results["optimal"], results["mechanism_aware"]
    print(f"Budget ε = {plan.epsilon:g}, δ = {plan.delta:g}, β = {plan.beta:g}, n = {plan.dataset_size}.")
    print(f"Certified ε of the plan: basic {basic.epsilon_certified:.4f}, optimal {opt.epsilon_certified:.4f}, "
          f"mechanism-aware {mech.epsilon_certified:.4f}.")
    print()
    print("| statistic | kind | mechanism | α basic | α optimal | α mechanism-aware | gain (optimal / mech.-aware) |")
    print("|---|---|---|---|---|---|---|")
    for st, b, o, m in zip(plan.statistics, basic.statistics, opt.statistics, mech.statistics):
        lock = " (locked α ≤ 100)" if st.lock_accuracy is not None else ""
        print(f"| {st.name}{lock} | {st.kind} | {st.mechanism} | {b.accuracy:.4g} | {o.accuracy:.4g} | "
              f"{m.accuracy:.4g} | {o.gain_vs_basic:.2f}× / {m.gain_vs_basic:.2f}× |")


if __name__ == "__main__":
    main()
