"""Opacus histories and ``Accountant`` (Opacus' IAccountant, on a real DPOptimizer): the bracket of ``optcomp.dpsgd``."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from optcomp import Accuracy, Bound, compose, dpsgd
from optcomp.interop import Accountant, from_dp_event, from_opacus_history, opacus_history_to_dp_event
from optcomp.mechanisms import Gaussian, PoissonSubsampled
from tests.tolerances import COARSE_GRID_STEP, DP_ACCOUNTING_FINE_STEP

DELTA = 1e-5
COARSE = Accuracy(grid_step=COARSE_GRID_STEP)


def test_one_entry_history_is_the_dpsgd_call() -> None:
    history = [(1.1, 0.01, 200)]
    assert from_opacus_history(history).epsilon(DELTA) == dpsgd.epsilon(1.1, 0.01, 200, DELTA)


def test_state_dict_and_json_lists_read_the_same() -> None:
    history = [(1.1, 0.01, 30), (0.8, 0.02, 10)]
    state = json.loads(json.dumps({"history": history, "mechanism": "rdp"}))
    assert from_opacus_history(state).items == from_opacus_history(history).items
    expected = (
        (PoissonSubsampled(Gaussian(sigma=1.1), sampling_rate=0.01), 30),
        (PoissonSubsampled(Gaussian(sigma=0.8), sampling_rate=0.02), 10),
    )
    assert from_opacus_history(history).items == expected
    assert from_opacus_history(history).epsilon(DELTA, accuracy=COARSE) == compose(
        *expected, accuracy=COARSE
    ).epsilon(DELTA)


def test_history_event_is_the_documented_dp_event_tree() -> None:
    tree = opacus_history_to_dp_event([(1.0, 0.5, 3)])
    assert tree == {
        "class_name": "ComposedDpEvent",
        "events": [
            {
                "class_name": "SelfComposedDpEvent",
                "event": {
                    "class_name": "PoissonSampledDpEvent",
                    "sampling_probability": 0.5,
                    "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0},
                },
                "count": 3,
            }
        ],
    }
    assert from_dp_event(tree).items == from_opacus_history([(1.0, 0.5, 3)]).items


def test_accountant_pools_steps_like_opacus_and_answers_like_dpsgd() -> None:
    accountant = Accountant(accuracy=COARSE)
    assert accountant.get_epsilon(DELTA) == Bound(0.0, 0.0)
    for _ in range(5):
        accountant.step(noise_multiplier=1.0, sample_rate=0.02)
    accountant.step(noise_multiplier=1.0, sample_rate=0.04)
    accountant.step(noise_multiplier=1.0, sample_rate=0.02)
    assert accountant.history == [(1.0, 0.02, 5), (1.0, 0.04, 1), (1.0, 0.02, 1)]
    assert len(accountant) == 7
    uniform = Accountant(accuracy=COARSE)
    for _ in range(6):
        uniform.step(noise_multiplier=1.0, sample_rate=0.02)
    assert uniform.get_epsilon(DELTA) == dpsgd.epsilon(1.0, 0.02, 6, DELTA, accuracy=COARSE)
    assert accountant.get_epsilon(DELTA).lower >= uniform.get_epsilon(DELTA).lower  # one step has a larger q


def test_accountant_state_dict_round_trip() -> None:
    accountant = Accountant()
    accountant.step(noise_multiplier=2.0, sample_rate=0.1)
    state = accountant.state_dict()
    assert state == {"history": [(2.0, 0.1, 1)], "mechanism": "optcomp"}
    other = Accountant()
    other.load_state_dict(json.loads(json.dumps({"history": [[2.0, 0.1, 1]], "mechanism": "prv"})))
    assert other.history == accountant.history


def test_zero_noise_is_not_private_and_zero_rate_is_a_no_op() -> None:
    assert from_opacus_history([(0.0, 0.01, 3)]).epsilon(DELTA).upper == math.inf
    assert from_opacus_history([(1.0, 0.0, 3), (1.0, 0.5, 0)]).epsilon(DELTA) == Bound(0.0, 0.0)


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ("abc", r"history must be a list"),
        ([(1.0, 0.1)], r"history\[0\] must be \(noise_multiplier, sample_rate, num_steps\)"),
        ([(1.0, 0.1, 3), (1.0, 1.5, 3)], r"history\[1\]\.sample_rate must be in \[0, 1\], got 1\.5"),
        ([(-1.0, 0.1, 3)], r"history\[0\]\.noise_multiplier must be in \[0, inf\), got -1\.0"),
        ([(1.0, 0.1, 2.5)], r"history\[0\]\.num_steps must be an integer >= 0"),
        ({"history": [(1.0, 0.1, 1)], "optimizer": 3}, "an Opacus state_dict must have keys 'history'"),
        ({"history": [(1.0, 0.1, "x")]}, r"state_dict\['history'\]\[0\]\.num_steps"),
    ],
)
def test_malformed_histories_name_the_entry(history: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_opacus_history(history)


def test_accountant_step_validates() -> None:
    with pytest.raises(ValueError, match="sample_rate must be in"):
        Accountant().step(noise_multiplier=1.0, sample_rate=-0.1)
    with pytest.raises(TypeError, match="accuracy"):
        Accountant(accuracy=0.1)  # type: ignore[arg-type]


def test_history_brackets_dp_accounting_fine_grid() -> None:
    dp = pytest.importorskip("dp_accounting")
    history = [(2.0, 0.05, 3), (3.0, 0.02, 2)]
    bound = from_opacus_history(history).epsilon(DELTA)
    accountant = dp.pld.PLDAccountant(value_discretization_interval=DP_ACCOUNTING_FINE_STEP)
    accountant.compose(_events(dp, history))
    estimate = accountant.get_epsilon(DELTA)
    assert bound.lower <= estimate <= bound.upper + 5 * DP_ACCOUNTING_FINE_STEP


def _events(dp: object, history: list[tuple[float, float, int]]) -> object:
    e = dp.dp_event  # type: ignore[attr-defined]
    return e.ComposedDpEvent(
        [e.SelfComposedDpEvent(e.PoissonSampledDpEvent(q, e.GaussianDpEvent(s)), k) for s, q, k in history]
    )


def test_optimizer_hook_records_each_noisy_step() -> None:
    """The hook Opacus attaches to its DPOptimizer, driven by a stand-in optimizer (no Opacus needed)."""
    accountant = Accountant()
    hook = accountant.get_optimizer_hook_fn(sample_rate=0.01)
    optimizer = SimpleNamespace(noise_multiplier=1.1, accumulated_iterations=1)
    for _ in range(40):
        hook(optimizer)
    assert accountant.history == [(1.1, 0.01, 40)] and len(accountant) == 40
    assert accountant.get_epsilon(1e-5) == dpsgd.epsilon(1.1, 0.01, 40, 1e-5)
    with pytest.raises(ValueError, match="accumulated 2 Poisson batches"):
        hook(SimpleNamespace(noise_multiplier=1.1, accumulated_iterations=2))
    with pytest.raises(ValueError, match="sample_rate"):
        accountant.get_optimizer_hook_fn(sample_rate=1.5)
    destination: dict[str, object] = {"kept": True}
    assert accountant.state_dict(destination) is destination
    assert destination == {"kept": True, "history": [(1.1, 0.01, 40)], "mechanism": "optcomp"}


def test_accountant_replaces_opacus_accountant_in_a_training_loop() -> None:
    """A real (tiny, CPU) Opacus training run with optcomp's Accountant in place of Opacus' own."""
    torch = pytest.importorskip("torch")
    opacus = pytest.importorskip("opacus")
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    model = torch.nn.Linear(4, 2)
    engine = opacus.PrivacyEngine()
    engine.accountant = Accountant()
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=DataLoader(data, batch_size=8), noise_multiplier=1.1, max_grad_norm=1.0,
    )
    for x, y in loader:  # one epoch of Poisson batches at rate 1/8
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    assert engine.accountant.history == [(1.1, 1 / 8, 8)]
    assert engine.get_epsilon(1e-5) == dpsgd.epsilon(1.1, 1 / 8, 8, 1e-5)
