"""Issue 27 item 18: a mechanism whose privacy-loss scale Δ/b leaves the range the engines compute is
refused at construction, in the user's terms (the noise parameter and the range it may take), instead of
failing later with a floating-point fault ("invalid value encountered in divide/cast")."""

from __future__ import annotations

import pytest

from optcomp import DEFAULT_ACCURACY, compose
from optcomp._numerics import MAX_LOSS_SCALE
from optcomp.cli import main
from optcomp.mechanisms import (
    DiscreteLaplace,
    Gaussian,
    Laplace,
    PoissonSubsampled,
    ShiftedTruncatedLaplace,
    TruncatedLaplace,
)


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: Gaussian(1e-320), "sigma"),
        (lambda: Gaussian(1.0, sensitivity=1e300), "sigma"),
        (lambda: DiscreteLaplace(1e-300), "scale"),
        (lambda: Laplace(1e-320), "scale"),
        (lambda: TruncatedLaplace(1e-300, truncation=1.0), "scale"),
        (lambda: ShiftedTruncatedLaplace(1e-300, mean=1.0), "scale"),
    ],
)
def test_a_loss_scale_beyond_the_engines_is_refused_naming_the_noise_parameter(build: object, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name} must be at least .*\(0, 1e\+09\]") as info:
        build()  # type: ignore[operator]
    assert "encountered" not in str(info.value)


def test_a_loss_scale_that_underflows_to_zero_is_refused() -> None:
    with pytest.raises(ValueError, match=r"sensitivity/sigma underflows to 0"):
        Gaussian(1e300, sensitivity=1e-300)


def test_the_edge_of_the_range_is_computed() -> None:
    """Δ/b = MAX_LOSS_SCALE itself is accepted and answered (ε = Δ/b for a Laplace/discrete Laplace)."""
    for mechanism in (Laplace(1.0, sensitivity=MAX_LOSS_SCALE), DiscreteLaplace(1.0 / MAX_LOSS_SCALE)):
        bound = compose(mechanism).epsilon(1e-5)
        rw = DEFAULT_ACCURACY.relative_width
        assert bound.lower <= MAX_LOSS_SCALE * (1 + rw) and bound.upper >= MAX_LOSS_SCALE * (1 - rw)
    assert PoissonSubsampled(Gaussian(1.0 / MAX_LOSS_SCALE), sampling_rate=0.5).mechanism.mu == pytest.approx(MAX_LOSS_SCALE)


@pytest.mark.parametrize(
    ("mech", "name"), [("gaussian:sigma=1e-320", "sigma"), ("discrete_laplace:scale=1e-300", "scale")]
)
def test_cli_refusal_is_one_line_in_the_users_terms(
    capsys: pytest.CaptureFixture[str], mech: str, name: str
) -> None:
    code = main(["account", "--mech", mech, "--delta", "1e-5"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert f"{name} must be at least" in err and "encountered" not in err


def test_rdp_of_a_gaussian_forms_mu_first() -> None:
    """Δ = σ = 1e-300: μ = 1, and the RDP comparator's ρ(α) = αμ²/2 is finite (it formed Δ²/σ² = 0/0)."""
    from optcomp import rdp

    values = rdp.gaussian(1e-300, sensitivity=1e-300, orders=[2.0, 8.0])
    assert values.tolist() == pytest.approx([1.0, 4.0])
    assert all(v >= t for v, t in zip(values.tolist(), (1.0, 4.0), strict=True))
