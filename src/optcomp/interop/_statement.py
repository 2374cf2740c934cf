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


#: The relation of a sampler's statement (``optcomp.dpsgd.SAMPLERS``' ``relation``), in words.
_RELATION_WORDS: dict[str, str] = {
    "add_remove": "the add/remove-one-record neighbouring relation",
    "substitution": "the substitution (replace-one-record) neighbouring relation, with sensitivity 2C",
    "zero_out": (
        "the zero-out relation (one record replaced by a null record with zero gradient; the "
        "relation under which Poisson's add/remove numbers compare)"
    ),
}


def dpsgd_statement(
    *,
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    delta: float,
    epsilon: Bound,
    sampling: str = "poisson",
    examples_per_user: int = 1,
    dataset_size: int | None = None,
    max_batch_size: int | None = None,
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
        sampling, examples_per_user, dataset_size, max_batch_size: the sampler, as in
            :func:`optcomp.dpsgd.epsilon`; the statement names the relation and, for ``"shuffle"``
            and ``"truncated_poisson"``, which end of the bracket is tight.

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
    from optcomp.dpsgd import SAMPLERS

    if sampling not in SAMPLERS:
        raise ValueError(f"sampling must be one of {tuple(SAMPLERS)}, got {sampling!r}")
    batches, relation = _batches_and_relation(sampling, q, examples_per_user, dataset_size, max_batch_size)
    upper = _rounded(epsilon.upper, ROUND_CEILING)  # quoted numbers keep the safe side
    lower = _rounded(epsilon.lower, ROUND_FLOOR)
    claim = (
        f"Privacy statement. This model was trained with {k} steps of DP-SGD: per-example gradients clipped "
        f"to norm C, Gaussian noise of standard deviation {sigma:g}·C added to their sum, and {batches}. "
        f"Under {relation}, the final model and every intermediate "
        f"model together satisfy (ε, δ)-differential privacy with ε = {upper} at "
        f"δ = {d:g}. {_bracket_sentences(sampling, lower, upper)}"
    )
    parts = [claim, _ASSUMED]
    if q < 1.0 and SAMPLERS[sampling].per_step:  # a per-step sampler claims amplification
        parts.append(_not_covered(sampling))
    return "\n\n".join(textwrap.fill(p, STATEMENT_WIDTH) for p in parts)


#: The statement's second paragraph: what the guarantee assumes.
_ASSUMED = (
    "Assumed: the batches were formed exactly as stated; every per-example gradient was clipped "
    "before noise was added; the noise was fresh, independent and Gaussian at every step; nothing else "
    "read the training data (hyper-parameter search, evaluation on training data and earlier runs are "
    "not covered). Idealised: the noise sampler is treated as exact real-valued Gaussian noise."
)


def _batches_and_relation(
    sampling: str, q: float, examples_per_user: int, dataset_size: int | None, max_batch_size: int | None
) -> tuple[str, str]:
    """(how the batches were formed, the neighbouring relation), in words, for the sampler (its row of
    ``optcomp.dpsgd.SAMPLERS``)."""
    from optcomp.dpsgd import SAMPLERS

    row = SAMPLERS[sampling]
    batches, relation = row.batches.format(q=f"{q:g}", n=dataset_size, b=max_batch_size), _RELATION_WORDS[row.relation]
    if q == 1.0 and sampling == "poisson":
        batches = "each step used the whole dataset (q = 1: no sampling, so no amplification is used)"
    if examples_per_user > 1:
        relation = (
            f"the add/remove-one-user neighbouring relation (a user holds at most {examples_per_user} "
            "examples, each clipped separately)"
        )
    return batches, relation


def _bracket_sentences(sampling: str, lower: str, upper: str) -> str:
    """What the quoted ε is and which end of the bracket [lower, upper] (already rounded outwards) is tight."""
    if sampling == "shuffle":
        return (
            f"This ε is a certified upper bound that uses no amplification (each epoch counted as one "
            f"Gaussian release): no valid amplified bound is known for adaptive shuffled training at "
            f"practical δ (the other records' positions depend on this record's, so the balls-in-bins "
            f"argument fails). The run's true ε is at least {lower}, certified from an explicit pair of "
            f"datasets (Chua et al., ICML 2024). Neither end is proven tight: the truth lies between them. "
            f"A number computed as if batches were Poisson-sampled is not a guarantee for this run."
        )
    if sampling == "balls_in_bins":
        return (
            f"This ε is a certified, amplified upper bound: the run is dominated by the worst-case pair of "
            f"balls-in-bins epochs (Chua et al., AISTATS 2025; docs/samplers.md Lemma A), whose privacy "
            f"loss optcomp bounds by certified convolution (Lemmas C and D); the run's true ε for the worst "
            f"dataset lies in [{lower}, {upper}]. A number computed as if batches were Poisson-sampled is "
            f"not a guarantee for this run."
        )
    if sampling == "truncated_poisson":
        return (
            f"This ε is a certified upper bound from a dominating pair that reveals whether the batch was "
            f"truncated (not claimed tight); the run's true ε is at least {lower}, certified from an "
            f"explicit pair of datasets (all other gradients zero), so the truth lies in [{lower}, {upper}]."
        )
    return (
        f"This ε is a certified upper bound: optcomp's privacy-loss-distribution bracket [{lower}, {upper}] "
        f"contains the optimal ε of this mechanism, and its upper end accounts for discretisation, "
        f"truncated tails and floating-point error (quoted numbers are rounded outwards)."
    )


def _not_covered(sampling: str) -> str:
    """The third paragraph, for a sampled run (q < 1) whose sampler claims amplification: shuffled
    once-per-epoch batches are not that sampler."""
    from optcomp.dpsgd import SAMPLERS

    name = SAMPLERS[sampling].title
    return (
        "Not covered: shuffling the data once per epoch and cutting it into fixed-size batches is not "
        f"{name}. This statement does not apply to such a run (optcomp dpsgd --sampling shuffle "
        "accounts for it), and no amplification by sampling is claimed for it."
    )
