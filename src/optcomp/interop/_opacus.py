"""Opacus accountant histories → the certified DP-SGD composition, and an accountant for Opacus' ``DPOptimizer``.

Opacus' accountants keep ``history``, a list of ``(noise_multiplier, sample_rate, num_steps)`` entries
(consecutive steps with equal parameters pooled), and ``state_dict()`` returns
``{"history": history, "mechanism": "rdp" | "gdp" | "prv"}``. Each entry is ``num_steps`` DP-SGD steps:
a Poisson-subsampled (rate ``sample_rate``) Gaussian with noise multiplier σ on clipped per-example
gradients (sensitivity 1), under the add/remove-one relation. As a ``DpEvent`` tree that is::

    ComposedDpEvent([SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T), ...])

which :func:`from_opacus_history` reads with :func:`optcomp.interop.from_dp_event`. The result holds
only if batches really were Poisson samples (Opacus' ``poisson_sampling=True``, its default); shuffled
fixed-size batches are a different mechanism and no amplification is claimed for them.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, Bound
from optcomp.interop._dp_event import EventComposition, Sampling, from_dp_event
from optcomp.interop._fields import _integer, _real, _short
from optcomp.interop._safety import PeerUnderReportWarning, emit, opacus_fixed_size

#: ``(noise_multiplier, sample_rate, num_steps)``, as Opacus stores it.
HistoryEntry = tuple[float, float, int]


def _entries(history: object) -> list[HistoryEntry]:
    """Validated entries of a history list or a ``state_dict`` (``ValueError`` naming the entry)."""
    where = "history"
    if isinstance(history, Mapping):
        extra = sorted(set(map(str, history)) - {"history", "mechanism"})
        if "history" not in history or extra:
            raise ValueError(
                "an Opacus state_dict must have keys 'history' (and optionally 'mechanism'), "
                f"got keys {sorted(map(str, history))}"
            )
        history = history["history"]
        where = "state_dict['history']"
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise ValueError(  # noqa: TRY004 (contract: ValueError)
            f"{where} must be a list of (noise_multiplier, sample_rate, num_steps), got {_short(history)}"
        )
    out: list[HistoryEntry] = []
    for i, entry in enumerate(history):
        at = f"{where}[{i}]"
        if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence) or len(entry) != 3:
            raise ValueError(f"{at} must be (noise_multiplier, sample_rate, num_steps), got {_short(entry)}")
        sigma = _real(f"{at}.noise_multiplier", entry[0], low=0.0)
        q = _real(f"{at}.sample_rate", entry[1], low=0.0, high=1.0)
        steps = _integer(f"{at}.num_steps", entry[2], low=0)
        out.append((sigma, q, steps))
    return out


def opacus_history_to_dp_event(history: object) -> dict[str, Any]:
    """The DpEvent JSON (``docs/interop.md``) of an Opacus history or ``state_dict`` (module docstring)."""
    events: list[dict[str, Any]] = [
        {
            "class_name": "SelfComposedDpEvent",
            "event": {
                "class_name": "PoissonSampledDpEvent",
                "sampling_probability": q,
                "event": {"class_name": "GaussianDpEvent", "noise_multiplier": sigma},
            },
            "count": steps,
        }
        for sigma, q, steps in _entries(history)
    ]
    return {"class_name": "ComposedDpEvent", "events": events}


def from_opacus_history(history: object, *, sampling: Sampling = "event") -> EventComposition:
    """The DP-SGD composition an Opacus accountant history describes (add/remove, Poisson sampling).

    Args:
        history: ``accountant.history`` (a list of ``(noise_multiplier, sample_rate, num_steps)``) or
            ``accountant.state_dict()`` (``{"history": ..., "mechanism": ...}``; ``mechanism`` is the
            accountant Opacus used and does not change the composition). JSON lists work as tuples.

    Returns:
        An :class:`optcomp.interop.EventComposition`; ``.epsilon(δ)`` is the certified bracket, equal
        to :func:`optcomp.dpsgd.epsilon` for a one-entry history.

    Raises:
        ValueError: a malformed entry (the message names it, e.g. ``history[1].sample_rate``).

    With ``sampling="fixed_size"`` the batches are read as fixed-size (uniform batches of rate q, Opacus'
    ``poisson_sampling=False``), accounted under substitution as ``optcomp.dpsgd``'s ``"fixed_size"``; the
    result then carries a :class:`~optcomp.interop.PeerWarning`: Opacus' own accountants assume Poisson
    batches, so their number is no guarantee for that run (``docs/interop.md`` §8).
    """
    if sampling == "fixed_size":
        with warnings.catch_warnings():  # the Opacus warning below replaces dp_accounting's
            warnings.simplefilter("ignore", PeerUnderReportWarning)
            read = from_dp_event(opacus_history_to_dp_event(history), neighbouring="substitution", sampling=sampling)
        found = (opacus_fixed_size(),)
        emit(found)
        return dataclasses.replace(read, warnings=found)
    return from_dp_event(opacus_history_to_dp_event(history), neighbouring="add_remove", sampling=sampling)


class Accountant:
    """Opacus' accountant interface (its ``IAccountant``: ``step``, ``get_epsilon``, ``__len__``,
    ``mechanism``, ``get_optimizer_hook_fn``, ``state_dict``/``load_state_dict``, ``history``), answering
    with optcomp's certified bracket. Opacus is not imported: it is duck-typed, so it also works alone.

    In an Opacus training loop it replaces Opacus' accountant before ``make_private`` attaches its hook
    to the ``DPOptimizer``::

        privacy_engine = opacus.PrivacyEngine()
        privacy_engine.accountant = Accountant()           # before make_private
        model, optimizer, loader = privacy_engine.make_private(module=model, optimizer=optimizer,
            data_loader=loader, noise_multiplier=1.1, max_grad_norm=1.0)   # Poisson sampling (default)
        ...                                                 # train: each optimizer step is recorded
        privacy_engine.get_epsilon(1e-5)                    # Bound(lower, upper); upper certified

    or without Opacus::

        accountant = Accountant()
        for batch in loader:                  # Poisson-sampled batches
            ...
            accountant.step(noise_multiplier=1.1, sample_rate=256 / 60_000)
        accountant.get_epsilon(delta=1e-5)   # Bound(lower, upper); upper certified

    ``get_epsilon`` returns a :class:`~optcomp.Bound`, not a float: print ``.upper`` as the guarantee.
    Opacus' ``make_private_with_epsilon`` asks its own accountants for σ by name and cannot use this one;
    calibrate σ with :func:`optcomp.dpsgd.noise_multiplier` and call ``make_private``.

    ``history`` is Opacus' list of ``(noise_multiplier, sample_rate, num_steps)``; consecutive steps with
    the same parameters are pooled into one entry, as Opacus does, so ``state_dict()`` can be loaded by
    an Opacus accountant and vice versa.

    ``sampling`` names the batch sampler every step used (``docs/samplers.md``): ``"poisson"`` (Opacus'
    default; with ``examples_per_user`` = k > 1, user-level), ``"fixed_size"`` (``sample_rate`` = m/n,
    substitution relation) or ``"truncated_poisson"`` (with ``dataset_size`` and ``max_batch_size``).
    Shuffled epochs and balls-in-bins are properties of a whole run, not of a step: use
    :func:`optcomp.dpsgd.epsilon` with ``sampling="shuffle"``/``"balls_in_bins"``.
    """

    def __init__(
        self,
        *,
        accuracy: Accuracy = DEFAULT_ACCURACY,
        sampling: str = "poisson",
        examples_per_user: int = 1,
        dataset_size: int | None = None,
        max_batch_size: int | None = None,
    ) -> None:
        from optcomp.dpsgd import SAMPLERS, Run

        if not isinstance(accuracy, Accuracy):
            raise TypeError(f"accuracy must be an optcomp.Accuracy, got {accuracy!r}")
        if sampling in SAMPLERS and not SAMPLERS[sampling].per_step:
            raise ValueError(
                f"sampling={sampling!r} is a property of a whole run, not of a step: account for it with "
                "optcomp.dpsgd.epsilon(..., sampling=...)"
            )
        # validates the sampler options once (σ, q, steps are placeholders)
        Run.checked(1.0, 0.5, 1, sampling, examples_per_user, dataset_size, max_batch_size)
        self.accuracy = accuracy
        self.sampling = sampling
        self.examples_per_user = examples_per_user
        self.dataset_size = dataset_size
        self.max_batch_size = max_batch_size
        self.history: list[HistoryEntry] = []

    @classmethod
    def mechanism(cls) -> str:
        """The accountant's name in ``state_dict()`` (Opacus uses ``"rdp"``, ``"gdp"``, ``"prv"``)."""
        return "optcomp"

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one DP-SGD step (``ValueError`` for σ < 0 or a rate outside [0, 1])."""
        sigma = _real("noise_multiplier", noise_multiplier, low=0.0)
        q = _real("sample_rate", sample_rate, low=0.0, high=1.0)
        if self.history and self.history[-1][:2] == (sigma, q):
            self.history[-1] = (sigma, q, self.history[-1][2] + 1)
        else:
            self.history.append((sigma, q, 1))

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """Opacus' hook for ``DPOptimizer.attach_step_hook``: after each noisy step it records
        ``step(noise_multiplier=optimizer.noise_multiplier, sample_rate=sample_rate)``.

        Opacus records ``sample_rate × accumulated_iterations`` when several Poisson batches were
        accumulated into one noisy step; a record can then be in several of them (its gradient counted up
        to that many times, a mixture of shifts 0..n, not one batch at rate n·q), which this accountant
        does not approximate: such a step is a ``ValueError``. (Opacus' ``BatchMemoryManager`` splits one
        logical batch into physical ones: one accumulated iteration per step, accounted exactly.)

        Args:
            sample_rate: the Poisson rate of each batch (Opacus passes 1 / len(data_loader)).
        """
        rate = _real("sample_rate", sample_rate, low=0.0, high=1.0)

        def hook(optimizer: Any) -> None:
            accumulated = getattr(optimizer, "accumulated_iterations", 1)
            if accumulated != 1:
                raise ValueError(
                    f"the optimizer accumulated {accumulated} Poisson batches into one noisy step; "
                    "optcomp's Accountant accounts one batch per step (call optimizer.zero_grad() after "
                    "every step, or use Opacus' BatchMemoryManager to split a large batch)"
                )
            self.step(noise_multiplier=optimizer.noise_multiplier, sample_rate=rate)

        return hook

    def __len__(self) -> int:
        """The number of steps recorded."""
        return sum(steps for _, _, steps in self.history)

    def composition(self) -> EventComposition:
        """The composition recorded so far (:func:`from_opacus_history` of ``history``)."""
        return from_opacus_history(self.history)

    def get_epsilon(self, delta: float) -> Bound:
        """Certified bracket on ε at ``delta`` of the steps so far (``Bound(0, 0)`` before any step)."""
        if self.sampling == "poisson" and self.examples_per_user == 1:
            return self.composition().epsilon(delta, accuracy=self.accuracy)
        from optcomp import compose
        from optcomp._numerics import check_open_probability
        from optcomp.dpsgd import Run

        d = check_open_probability("delta", delta)
        items = []
        for sigma, q, steps in self.history:
            if q == 0.0:
                continue
            if sigma == 0.0:
                return Bound(math.inf, math.inf)
            run = Run.checked(
                sigma, q, steps, self.sampling, self.examples_per_user, self.dataset_size, self.max_batch_size
            )
            items.extend(run.items())
        if not items:
            return Bound.exact(0.0)
        # truncated-Poisson and fixed-size steps: the lower end is the run's, from their explicit pairs
        # (optcomp.queries.Composition.dominated)
        return compose(*items, accuracy=self.accuracy).epsilon(d)

    def state_dict(self, destination: dict[str, Any] | None = None) -> dict[str, Any]:
        """``{"history": [...], "mechanism": "optcomp"}``, Opacus' format (written into ``destination``
        when given, as Opacus' accountants do)."""
        out: dict[str, Any] = {} if destination is None else destination
        out["history"] = list(self.history)
        out["mechanism"] = self.mechanism()
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Replace ``history`` by a validated copy of ``state_dict["history"]`` (any Opacus accountant's)."""
        self.history = _entries(state_dict)
