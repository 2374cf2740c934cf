"""A short, honest privacy statement for a DP-SGD training run (``optcomp dpsgd --statement``)."""

from __future__ import annotations

import math
import textwrap
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from optcomp._numerics import Bound, check_int, check_open_probability, check_positive, check_probability

#: Line width of the statement paragraphs.
STATEMENT_WIDTH = 88
#: Significant digits of the numbers quoted in the statement.
STATEMENT_DIGITS = 6


def _rounded(x: float, rounding: str) -> str:
    """``x`` to ``STATEMENT_DIGITS`` significant digits, rounded in the given direction (exact decimal)."""
    if not math.isfinite(x) or x == 0.0:
        return "inf" if x == math.inf else f"{x:g}"
    exponent = math.floor(math.log10(abs(x))) - STATEMENT_DIGITS + 1
    value = Decimal(x).quantize(Decimal(1).scaleb(exponent), rounding=rounding)
    return f"{value.normalize():f}" if -7 < exponent < 10 else f"{value.normalize():E}"


def dpsgd_statement(
    *, noise_multiplier: float, sampling_rate: float, steps: int, delta: float, epsilon: Bound
) -> str:
    """The privacy statement of ``steps`` DP-SGD steps whose certified ε bracket at ``delta`` is ``epsilon``.

    States the certified ε (the bracket's upper end) at δ under Poisson sampling and the add/remove-one
    relation, what the guarantee assumes (Poisson batches, clipping, independent Gaussian noise, no
    other access to the data) and what it does not cover (shuffled once-per-epoch batches, which are not
    Poisson sampling: no amplification is claimed for them; hyper-parameter search; floating-point noise
    generation).

    Args:
        noise_multiplier: σ > 0 (noise standard deviation over the clipping norm).
        sampling_rate: q in (0, 1].
        steps: integer ≥ 1.
        delta: δ in (0, 1).
        epsilon: the certified bracket from :func:`optcomp.dpsgd.epsilon` for these parameters.

    Returns:
        Two or three wrapped paragraphs of plain text.
    """
    sigma = check_positive("noise_multiplier", noise_multiplier)
    q = check_probability("sampling_rate", sampling_rate)
    if q == 0.0:
        raise ValueError("sampling_rate must be in (0, 1], got 0.0")
    k = check_int("steps", steps, minimum=1)
    d = check_open_probability("delta", delta)
    if not isinstance(epsilon, Bound):
        raise TypeError(f"epsilon must be an optcomp.Bound, got {epsilon!r}")
    if q < 1.0:
        batches = (
            f"each step used a Poisson-sampled batch: every record was included independently with "
            f"probability q = {q:g}"
        )
    else:
        batches = "each step used the whole dataset (q = 1: no sampling, so no amplification is used)"
    upper = _rounded(epsilon.upper, ROUND_CEILING)  # quoted numbers keep the safe side
    claim = (
        f"Privacy statement. This model was trained with {k} steps of DP-SGD: per-example gradients clipped "
        f"to norm C, Gaussian noise of standard deviation {sigma:g}·C added to their sum, and {batches}. "
        f"Under the add/remove-one-record neighbouring relation, the final model and every intermediate "
        f"model together satisfy (ε, δ)-differential privacy with ε = {upper} at "
        f"δ = {d:g}. This ε is a certified upper bound: optcomp's privacy-loss-distribution bracket "
        f"[{_rounded(epsilon.lower, ROUND_FLOOR)}, {upper}] contains the optimal ε of this mechanism, and its "
        f"upper end accounts for discretisation, truncated tails and floating-point error (quoted numbers "
        f"are rounded outwards)."
    )
    assumed = (
        "Assumed: the batches were formed exactly as stated; every per-example gradient was clipped "
        "before noise was added; the noise was fresh, independent and Gaussian at every step; nothing else "
        "read the training data (hyper-parameter search, evaluation on training data and earlier runs are "
        "not covered). Idealised: the noise sampler is treated as exact real-valued Gaussian noise."
    )
    parts = [claim, assumed]
    if q < 1.0:
        parts.append(
            "Not covered: shuffling the data once per epoch and cutting it into fixed-size batches is not "
            "Poisson sampling. This statement does not apply to such a run, and no amplification by "
            "sampling is claimed for it."
        )
    return "\n\n".join(textwrap.fill(p, STATEMENT_WIDTH) for p in parts)
