"""The README's worked example: 21 statistics of a census-like table under one (ε, δ) = (1, 1e-6) budget.

Prints, per statistic, the accuracy α (half-width of the 95% interval of the noise; histograms per bin; the
median's α is a rank error, docs/planner.md) under all five accounting modes — basic, advanced, KOV,
optimal black-box composition (MV Thm 1.5) and mechanism-aware accounting (PLD / GDP / the adaptive
bounded-range recursion for the median) — and the gain over basic. Run:
``PYTHONPATH=src python examples/planner_census.py``.
"""

from __future__ import annotations

from pathlib import Path

from optcomp.planner import load_plan, plan_all

PLAN = Path(__file__).resolve().parent / "census_plan.toml"
LABELS = {"basic": "basic", "advanced": "advanced", "kov": "KOV", "optimal": "optimal",
          "mechanism_aware": "mechanism-aware"}


def main() -> None:
    plan = load_plan(PLAN)
    results = plan_all(plan)  # every mode: basic, advanced, kov, optimal, mechanism_aware
    opt, mech = results["optimal"], results["mechanism_aware"]
    print(f"Budget ε = {plan.epsilon:g}, δ = {plan.delta:g}, β = {plan.beta:g}, n = {plan.dataset_size}.")
    print("Certified ε of the plan: " + ", ".join(f"{LABELS[m]} {r.epsilon_certified:.4f}" for m, r in results.items())
          + ".")
    print()
    print("| statistic | kind | mechanism | " + " | ".join(f"α {LABELS[m]}" for m in results)
          + " | gain (optimal / mech.-aware) |")
    print("|---|---|---|" + "---|" * len(results) + "---|")
    for i, st in enumerate(plan.statistics):
        lock = " (locked α ≤ 100)" if st.lock_accuracy is not None else ""
        unit = " (ranks)" if st.kind == "quantile" else ""
        alphas = " | ".join(f"{r.statistics[i].accuracy:.4g}" for r in results.values())
        print(f"| {st.name}{lock}{unit} | {st.kind} | {st.mechanism} | {alphas} | "
              f"{opt.statistics[i].gain_vs_basic:.2f}× / {mech.statistics[i].gain_vs_basic:.2f}× |")


if __name__ == "__main__":
    main()
