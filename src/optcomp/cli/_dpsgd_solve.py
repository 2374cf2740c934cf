"""``optcomp dpsgd --target-epsilon E``: solve a DP-SGD run for σ (``--solve sigma``, the default) or for
the number of steps (``--solve steps``), through :func:`optcomp.dpsgd.noise_multiplier` /
:func:`optcomp.dpsgd.steps` — one library call; the command then accounts the solved run as usual.

Both searches return the safe side of the root: the solved run's certified ε is ≤ the target (the
library evaluates it there before returning it), so the table printed for it is its own certificate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from optcomp.dpsgd import SamplerOptions

#: What ``--solve`` can find, and the option it replaces.
SOLVE_FOR: dict[str, str] = {"sigma": "--sigma", "steps": "--steps"}


def solve_run(
    target_epsilon: float,
    solve: str,
    noise_multiplier: float | None,
    sampling_rate: float,
    steps: int | None,
    delta: float,
    sampler: SamplerOptions,
    accuracy: Any,
    max_steps: int | None,
) -> tuple[float, int]:
    """(σ, steps) of the run meeting ``target_epsilon``: the one given, and the one solved for."""
    from optcomp import dpsgd

    given = {"sigma": noise_multiplier, "steps": steps}
    if given[solve] is not None:
        raise click.UsageError(f"{SOLVE_FOR[solve]} is what --target-epsilon solves for (--solve {solve}): "
                               f"leave it out")
    other = "steps" if solve == "sigma" else "sigma"
    if given[other] is None:
        raise click.UsageError(f"--target-epsilon with --solve {solve} needs {SOLVE_FOR[other]}")
    if max_steps is not None and solve != "steps":
        raise click.UsageError("--max-steps goes with --solve steps")
    if solve == "sigma" and steps is not None:
        sigma = dpsgd.noise_multiplier(target_epsilon, sampling_rate, steps, delta, accuracy=accuracy, **sampler)
        return sigma, steps
    if noise_multiplier is None:  # excluded above; narrows the type
        raise click.UsageError("--target-epsilon with --solve steps needs --sigma")
    limit = {} if max_steps is None else {"max_steps": max_steps}
    found = dpsgd.steps(target_epsilon, noise_multiplier, sampling_rate, delta, accuracy=accuracy, **limit, **sampler)
    return noise_multiplier, found
