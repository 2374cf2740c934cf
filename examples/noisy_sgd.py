"""Noisy SGD on MNIST-sized data (Dong–Roth–Su §5): CLT estimate vs certified numerical accounting vs RDP.

Setting: n = 60000 records, batches of 256 (p = 256/60000), noise multiplier σ = 1.1, 15 epochs
(T = ⌊15·60000/256⌋ steps), target δ = 1e-5. Every number says which sampling scheme and which
neighbouring relation it assumes, and whether it is a certified bound or an approximation.

Run:  python examples/noisy_sgd.py
"""

from __future__ import annotations

import optcomp
from optcomp import dpsgd
from optcomp.fdp import advantage, attack_tpr, from_pld, gdp_epsilon, noisy_sgd_mu_estimate
from optcomp.mechanisms import Gaussian, PoissonSubsampled, SubsampledWithoutReplacement

N, BATCH, SIGMA, EPOCHS, DELTA = 60000, 256, 1.1, 15, 1e-5
P = BATCH / N
T = EPOCHS * N // BATCH


def main() -> None:
    print(f"noisy SGD: p = {P:.6f}, sigma = {SIGMA}, T = {T} steps, delta = {DELTA:g}\n")

    # 1. CLT approximations (no error bar). p*sqrt(T*(e^(1/sigma^2)-1)) is the Poisson-sampling CLT
    #    (Bu-Dong-Long-Su 2020); DRS §5 (Thm 4.2, sampling WITHOUT replacement) has its own formula.
    mu = noisy_sgd_mu_estimate(P, SIGMA, T)
    print("CLT, APPROXIMATION (not a guarantee), Poisson sampling:")
    print(f"  mu_estimate = p*sqrt(T*(e^(1/sigma^2)-1)) = {mu:.4f}, "
          f"epsilon_estimate = {gdp_epsilon(mu, DELTA):.4f}")
    mu_wor = noisy_sgd_mu_estimate(P, SIGMA, T, sampling="without_replacement")
    print("CLT (DRS §5), APPROXIMATION (not a guarantee), sampling without replacement:")
    print(f"  mu_estimate = {mu_wor:.4f}, epsilon_estimate = {gdp_epsilon(mu_wor, DELTA):.4f}\n")

    # 2. Certified numerical composition (PLD engine), Poisson sampling, add/remove neighbours.
    eps_poisson = dpsgd.epsilon(SIGMA, P, T, DELTA)
    print("PLD, CERTIFIED bracket, Poisson sampling, add/remove neighbours (optcomp.dpsgd.epsilon):")
    print(f"  epsilon in {eps_poisson}")

    # Trade-off view of the Poisson result: certified bracket of the composed curve (read from one
    # realisation of the PLD, seconds) and the attack it allows; the advantage is the PLD's own δ(0).
    pld = optcomp.compose((PoissonSubsampled(Gaussian(sigma=SIGMA), sampling_rate=P), T))
    bracket = from_pld(pld)
    print(f"  best membership attack: TPR at FPR=0.01 in {attack_tpr(bracket, 0.01)}, "
          f"advantage in {advantage(pld)}")

    # 3. Certified numerical composition, sampling without replacement, substitution neighbours
    #    (the relation of DRS Thm 4.2; Gaussian with sensitivity 1 as in DRS's G_(1/sigma) per step).
    wor = optcomp.compose((SubsampledWithoutReplacement(Gaussian(sigma=SIGMA), sampling_rate=P), T))
    print("PLD, CERTIFIED bracket, sampling without replacement, substitution neighbours:")
    print(f"  epsilon in {wor.epsilon(DELTA)}\n")

    # 4. RDP accountant (Poisson sampling, add/remove), for comparison: an upper bound, typically loose.
    try:
        from dp_accounting import dp_event, rdp
    except ImportError:
        print("RDP: dp_accounting is not installed (pip install 'optcomp[bench]' or dp-accounting)")
        return
    acc = rdp.RdpAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(P, dp_event.GaussianDpEvent(SIGMA)), T)
    print("RDP (dp_accounting.rdp.RdpAccountant), upper bound, Poisson sampling, add/remove:")
    print(f"  epsilon <= {acc.get_epsilon(DELTA):.4f}")


if __name__ == "__main__":
    main()
