"""The CLI contract, proven by a seeded fuzz run of every command, in-process (``optcomp.cli.main``).

Hundreds of generated invocations mix bad and extreme arguments (numbers from −inf to 1e308 and NaN,
k up to 10³⁰, malformed ``--mech`` specs and files). For each one:

* the exit status is 0 (an answer) or 2 (refused), never 1 or an exception (a traceback);
* a refusal is exactly one line on stderr, ``optcomp: error: ...``, and nothing on stdout;
* an answer prints nothing on stderr (no RuntimeWarning), no ``nan`` and no ``-0``/``-0.0``, strict JSON
  when JSON was asked for, and numbers that pass invariant checks against independent truths:
  lower ≤ upper; 0 ≤ optimal ε ≤ basic composition Σε_i; δ in [0, 1]; ``inf`` only where the truth
  is infinite (δ_g below the floor 1 − Π(1 − δ_i)); a privacy-region or trade-off curve inside
  [0, 1]², non-increasing, below 1 − α.

Valid inputs are kept tiny (k ≤ 50) so that every answer is fast; huge sizes go through the up-front
refusal paths. Generation is seeded (random.Random), so a failure names a reproducible command line.

A second, fixed family (:func:`test_fuzz_big_and_hostile_inputs`) feeds every reader large files (10⁴-10⁵
lines or entries), JSON/TOML nested 10⁵ deep, huge counts, and subnormal or huge ε and δ. Every call runs
under a generous wall-clock bound (:data:`CALL_TIME_BOUND_S`), so a hang fails the test instead of stalling
the suite, and no answer may print [0, inf] (no information is no answer).
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import pytest

from optcomp.cli import _register, main
from optcomp.cli._common import cli
from tests.tolerances import EXACT_RTOL

SEED = 20261122

#: Numbers a user might type: invalid (NaN, ±inf, negative, not a number) and valid extremes.
INVALID_NUMBERS = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e400", "-1", "-1e-300", "abc", "", "1,2", "0x10", "--"]
EXTREME_NUMBERS = ["0", "-0", "-0.0", "5e-324", "1e-320", "2.2250738585072014e-308", "1e-300", "1e-16", "1e-6", "0.001", "0.1", "0.5", "1", "2", "709", "710",
                   "1e15", "1e300", "1e308", "1.7976931348623157e308"]
PROBABILITIES = ["0", "-0.0", "5e-324", "1e-320", "1e-300", "1e-12", "1e-6", "0.001", "0.05", "0.5", "1", "1.0000001", "2"]
SMALL_K = ["1", "2", "3", "7", "50"]
HUGE_K = ["100000000000", "1000000000000", "1" + "0" * 30, "9" * 400]
BAD_K = ["0", "-1", "2.5", "1e3", "abc", ""]

ZERO_TO_INF = re.compile(r"\[0, inf\]|│ 0\s+│ inf\s+│")
#: Wall-clock bound of one in-process call: generous (the slowest legitimate call here takes ~10 s on a
#: loaded 2-core machine); it exists so that a hang fails instead of stalling the suite.
CALL_TIME_BOUND_S = 120
NEGATIVE_ZERO = re.compile(r"(?<![\w.])-0(?:\.0*)?(?![\w.])")
NAN = re.compile(r"\bnan\b", re.IGNORECASE)


def _number(rng: random.Random, p_invalid: float = 0.1) -> str:
    return rng.choice(INVALID_NUMBERS) if rng.random() < p_invalid else rng.choice(EXTREME_NUMBERS)


def _prob(rng: random.Random, p_invalid: float = 0.08) -> str:
    return rng.choice(INVALID_NUMBERS) if rng.random() < p_invalid else rng.choice(PROBABILITIES)


def _k(rng: random.Random) -> str:
    r = rng.random()
    return rng.choice(SMALL_K) if r < 0.7 else rng.choice(HUGE_K) if r < 0.85 else rng.choice(BAD_K)


def _float(text: str) -> float:
    return float(text.replace("Infinity", "inf"))


class Files:
    """Well-formed and malformed input files, written once per test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.mech_files: list[str] = []
        self.configs: list[str] = []
        specs = {
            "good.txt": "# eps,delta\n0.1,0\n0.3,1e-6\n\n0.05,0\n",
            "extreme.txt": "1e308,0\n710,0\n5e-324,1e-300\n",
            "nan.txt": "nan,0\n",
            "three.txt": "0.1,0,1\n",
            "words.txt": "eps,delta\n",
            "empty.txt": "",
            "good.json": "[[0.1, 0], [0.2, 1e-6]]",
            "dict.json": '{"eps": 0.1}',
            "short.json": "[[0.1]]",
            "bool.json": "[[true, 0]]",
            "broken.json": "[[0.1, 0]",
            "huge.json": "[[1e999, 0]]",
        }
        for name, text in specs.items():
            (root / name).write_text(text, encoding="utf-8")
            self.mech_files.append(str(root / name))
        (root / "binary.txt").write_bytes(b"\xff\xfe\x00\x81")
        self.mech_files += [str(root / "binary.txt"), str(root / "missing.txt"), str(root)]
        configs = {
            "job.json": '{"delta": 1e-5, "mechanisms": [{"kind": "gaussian", "sigma": 2.0, "count": 3}]}',
            "job.toml": 'delta = 1e-5\n[[mechanisms]]\nkind = "laplace"\nscale = 2.0\ncount = 2\n',
            "list.json": "[1, 2]",
            "notlist.json": '{"mechanisms": 3}',
            "badkind.json": '{"mechanisms": [{"kind": "nosuch"}]}',
            "nanconf.json": '{"delta": NaN, "mechanisms": [{"kind": "laplace", "scale": 1}]}',
            "broken.toml": "delta = = 1\n",
            "badacc.toml": '[accuracy]\nfoo = 1\n[[mechanisms]]\nkind = "rr"\neps = 1\n',
        }
        for name, text in configs.items():
            (root / name).write_text(text, encoding="utf-8")
            self.configs.append(str(root / name))
        self.configs += [str(root / "missing.toml"), str(root / "binary.txt")]
        from optcomp.ledger import Ledger

        self.ledgers = [str(root / f"fuzz-{c}.ledger") for c in ("basic", "zcdp", "gdp")]
        for path, currency in zip(self.ledgers, ("basic", "zcdp", "gdp"), strict=True):
            Ledger.create(path, dataset="fuzz", relation="add_remove", epsilon=1, delta="1e-6",
                          currency=currency).close()
        self.ledgers += [str(root / "missing.ledger"), str(root / "good.txt"), str(root)]
        plan = ('version = 1\nepsilon = {eps}\ndelta = {delta}\nbeta = 0.05\n'
                '[[statistics]]\nname = "n"\nkind = "count"\nmechanism = "{mech}"\n'
                '[[statistics]]\nname = "h"\nkind = "histogram"\nbins = {bins}\nmechanism = "gaussian"\n')
        self.plans = []
        for i, (eps, delta, mech, bins) in enumerate([
            ("1.0", "1e-6", "geometric", "10"), ("1e-320", "1e-6", "laplace", "4"), ("5e-324", "0", "laplace", "2"),
            ("1e308", "1e-6", "gaussian", "3"), ("nan", "1e-6", "laplace", "2"), ("-1", "1e-6", "laplace", "2"),
            ("0.5", "1.5", "gaussian", "2"), ("2.0", "-0.0", "laplace", "2"), ("1.0", "1e-6", "nosuch", "2"),
            ("1.0", "1e-6", "gaussian", "0"), ("1.0", "1e-6", "gaussian", "1e300"), ("0.1", "1e-300", "gaussian", "5"),
        ]):
            (root / f"plan{i}.toml").write_text(plan.format(eps=eps, delta=delta, mech=mech, bins=bins), encoding="utf-8")
            self.plans.append(str(root / f"plan{i}.toml"))
        self.plans += [str(root / "broken.toml"), str(root / "good.json"), str(root / "missing.toml")]


# ---------------------------------------------------------------------------------------------
# Generators: one per command; each returns an argument list.
# ---------------------------------------------------------------------------------------------


def _sources(rng: random.Random, files: Files) -> list[str]:
    r = rng.random()
    if r < 0.55:
        args = ["--eps", _number(rng), "--delta", _prob(rng), "-k", _k(rng)]
        if rng.random() < 0.05:
            del args[rng.randrange(0, 6, 2) : rng.randrange(0, 6, 2) + 2]
        return args
    if r < 0.85:
        out: list[str] = []
        for _ in range(rng.randint(1, 4)):
            m = rng.random()
            if m < 0.8:
                out += ["--mech", f"{_number(rng, 0.1)},{_prob(rng, 0.1)}"]
            else:
                out += ["--mech", rng.choice(["1", "1,2,3", "a,b", ",", "", "0.1;0", "0.1,"])]
        return out
    return ["--file", rng.choice(files.mech_files)]


def gen_compose(rng: random.Random, files: Files) -> list[str]:
    args = ["compose", *_sources(rng, files)]
    r = rng.random()
    if r < 0.45:
        args += ["--target-delta", _prob(rng)]
    elif r < 0.9:
        args += ["--target-eps", _number(rng)]
    elif r < 0.95:
        args += ["--target-delta", _prob(rng), "--target-eps", _number(rng)]
    if rng.random() < 0.3:
        args += ["--method", rng.choice(["auto", "exact", "grid", "mv", "fast"])]
    if rng.random() < 0.1:
        args += ["--tolerance", _number(rng, 0.5)]
    if rng.random() < 0.5:
        args.append("--json")
    return args


def gen_region(rng: random.Random, files: Files) -> list[str]:
    args = ["region", *_sources(rng, files)]
    if rng.random() < 0.4:
        args += ["--points", rng.choice(["2", "5", "21", "0", "1", "-3", "x", "1000000000000"])]
    if rng.random() < 0.2:
        args += ["--eps-points", rng.choice(["1", "3", "0", "-1", "1000000000000"])]
    r = rng.random()
    if r < 0.3:
        args.append("--json")
    elif r < 0.5:
        args += ["--format", rng.choice(["csv", "json", "xml"])]
    if rng.random() < 0.1:
        args += ["--output", rng.choice([str(files.root / "region.csv"), str(files.root), "/nonexistent/dir/r.csv"])]
    return args


def gen_tradeoff(rng: random.Random, files: Files) -> list[str]:
    args = ["tradeoff"]
    r = rng.random()
    if r < 0.45:
        args += ["--gdp", _number(rng)]
    elif r < 0.9:
        args += ["--eps", _number(rng)]
        if rng.random() < 0.7:
            args += ["--delta", _prob(rng)]
    elif r < 0.95:
        args += ["--gdp", _number(rng), "--eps", _number(rng)]
    if rng.random() < 0.5:
        args += ["-k", _k(rng)]
    if rng.random() < 0.2:
        args += ["--group", rng.choice(["1", "2", "5", "0", "1000000000", "1" + "0" * 30])]
    if rng.random() < 0.2:
        args += ["--subsample", _prob(rng)]
    if rng.random() < 0.3:
        args += ["--points", rng.choice(["2", "3", "21", "0", "1", "100000000", "1000000000000"])]
    if rng.random() < 0.2:
        args += ["--fpr", _prob(rng)]
    r = rng.random()
    if r < 0.4:
        args.append("--json")
    elif r < 0.6:
        args += ["--format", rng.choice(["table", "csv", "json", "yaml"])]
    if rng.random() < 0.05:
        args += ["--output", rng.choice([str(files.root / "curve.json"), str(files.root / "curve.csv"), str(files.root)])]
    return args


_KIND_FIELDS: dict[str, list[str]] = {
    "gaussian": ["sigma", "sensitivity"],
    "laplace": ["scale", "sensitivity"],
    "epsdelta": ["eps", "delta"],
    "rr": ["eps"],
    "discrete_laplace": ["scale", "sensitivity"],
}


def _mech_spec(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.1:
        return rng.choice(["", ":", "gaussian:", "gaussian:sigma", "gaussian:=1", "nosuch:x=1", "GaussianLoss:mu=1",
                           "PoissonSubsampled:sampling_rate=0.1", "gaussian:sigma=1,,count=2", "gaussian:foo=1"])
    kind = rng.choice(list(_KIND_FIELDS))
    parts = []
    for field in _KIND_FIELDS[kind]:
        if field == "delta":
            parts.append(f"delta={_prob(rng)}")
        elif field == "sensitivity" and kind == "discrete_laplace":
            parts.append(f"sensitivity={rng.choice(['1', '2', '0', '1.5'])}")
        elif rng.random() < 0.9 or field != "sensitivity":
            parts.append(f"{field}={_number(rng, 0.15)}")
    if rng.random() < 0.4:
        parts.append("count=" + rng.choice(["1", "2", "3", "0", "-1", "1.5", "x", "1000000000000", "1" + "0" * 30]))
    if rng.random() < 0.3:
        parts.append(f"q={_prob(rng)}")
    return f"{kind}:{','.join(parts)}"


def gen_account(rng: random.Random, files: Files) -> list[str]:
    args = ["account"]
    for _ in range(rng.choice([0, 1, 1, 1, 2])):
        args += ["--mech", _mech_spec(rng)]
    if rng.random() < 0.25 or len(args) == 1:
        args += ["--config", rng.choice(files.configs)]
    r = rng.random()
    if r < 0.5:
        args += ["--delta", _prob(rng)]
    elif r < 0.9:
        args += ["--epsilon", _number(rng)]
    if rng.random() < 0.1:
        args += ["--accuracy", rng.choice(["grid_step=0", "grid_step=nan", "foo=1", "grid_step", "grid_step=1e-300",
                                           "grid_step=-1", "grid_step=0.01"])]
    if rng.random() < 0.6:
        args.append("--json")
    return args


def gen_dpsgd(rng: random.Random, files: Files) -> list[str]:
    args = ["dpsgd"]
    options = {
        "--sigma": lambda: _number(rng),
        "--q": lambda: _prob(rng),
        "--steps": lambda: rng.choice(["1", "2", "10", "0", "-1", "1.5", "1000000000000", "1" + "0" * 30]),
        "--delta": lambda: _prob(rng),
    }
    for name, value in options.items():
        if rng.random() < 0.95:
            args += [name, value()]
    if rng.random() < 0.6:
        args.append("--json")
    return args


def gen_plot(rng: random.Random, files: Files) -> list[str]:
    output = rng.choice([str(files.root / "fig.png"), str(files.root / "fig.svg"), str(files.root / "fig.txt"), str(files.root)])
    which = rng.choice(["tradeoff", "region", "compare"])
    args = ["plot", which]
    cheap = rng.random() < 0.8  # most plot invocations carry one invalid value, so that few figures are drawn
    bad = (lambda: rng.choice(INVALID_NUMBERS)) if cheap else (lambda: rng.choice(EXTREME_NUMBERS))
    if which == "tradeoff":
        args += ["--gdp", bad()] if rng.random() < 0.5 else ["--eps", bad(), "--delta", _prob(rng, 0.0)]
        if rng.random() < 0.3:
            args += ["-k", _k(rng)]
    elif which == "region":
        args += ["--eps", bad(), "--delta", _prob(rng, 0.0)]
        for _ in range(rng.randint(0, 2)):
            args += ["-k", _k(rng)]
    else:
        args += ["--eps", bad(), "--delta-g", _prob(rng, 0.0), "--max-k", rng.choice(["1", "10", "0", *HUGE_K])]
    if rng.random() < 0.9:
        args += ["--output", output]
    return args


def _release_spec(rng: random.Random) -> str:
    kind = rng.choice(["pure", "pure", "approx", "gaussian", "gaussian", "zcdp", "nosuch", ""])
    keys = {"pure": ["epsilon"], "approx": ["epsilon", "delta"], "gaussian": ["sigma", "sensitivity"],
            "zcdp": ["rho"]}.get(kind, ["x"])
    sane = {"epsilon": ["0.01", "0.1", "1e-9"], "delta": ["0", "1e-9"], "sigma": ["5", "20", "1000"],
            "sensitivity": ["1", "2"], "rho": ["0.001", "1e-6"], "x": ["1"]}
    parts = [f"{key}={rng.choice(sane[key]) if rng.random() < 0.6 else _prob(rng) if key == 'delta' else _number(rng)}"
             for key in keys if rng.random() < 0.95]
    return f"{kind}:{','.join(parts)}"


def gen_ledger(rng: random.Random, files: Files) -> list[str]:
    sub = rng.choice(["init", "charge", "charge", "charge", "released", "void", "report", "verify", "export"])
    if sub == "init":
        args = ["ledger", "init", str(files.root / f"new-{rng.randrange(10**9)}.ledger"), "--dataset", "d",
                "--relation", rng.choice(["add_remove", "substitution", "nosuch"]),
                "--epsilon", _number(rng), "--delta", _prob(rng),
                "--currency", rng.choice(["basic", "approx-zcdp", "zcdp", "rdp", "gdp"])]
    else:
        args = ["ledger", sub, rng.choice(files.ledgers)]
        rid = rng.choice(["r1", "r2", "r3", "", "x" * 300])
        if sub == "charge":
            args += [rid, _release_spec(rng)]
        elif sub == "released":
            args += [rid, "--digest", "d"]
        elif sub == "void":
            args += [rid, "--reason", rng.choice(["never ran", ""])]
        elif sub == "report" and rng.random() < 0.5:
            args += ["--fits", _release_spec(rng)]
    if sub != "export" and rng.random() < 0.5:
        args.append("--json")
    return args


def gen_plan(rng: random.Random, files: Files) -> list[str]:
    plan = rng.choice(files.plans) if rng.random() < 0.6 else rng.choice([files.plans[i] for i in (0, 7, 11)])
    args = ["plan", plan, "--mode", rng.choice(["basic", "advanced", "kov", "optimal"])]
    if rng.random() < 0.5:
        args.append("--json")
    return args


GENERATORS: dict[str, tuple[Callable[[random.Random, Files], list[str]], int]] = {
    "compose": (gen_compose, 150),
    "region": (gen_region, 90),
    "tradeoff": (gen_tradeoff, 110),
    "account": (gen_account, 110),
    "dpsgd": (gen_dpsgd, 60),
    "plot": (gen_plot, 40),
    "ledger": (gen_ledger, 120),
    "plan": (gen_plan, 40),
}


# ---------------------------------------------------------------------------------------------
# Independent truths and invariants.
# ---------------------------------------------------------------------------------------------


def _strict_json(text: str) -> Any:
    def refuse(token: str) -> float:
        raise AssertionError(f"non-JSON constant {token} in output")

    return json.loads(text, parse_constant=refuse)


def _num(x: Any) -> float:
    """A JSON number or the strings "inf"/"-inf" the CLI writes for infinities."""
    if x in ("inf", "-inf"):
        return float(x)
    assert isinstance(x, (int, float)) and not isinstance(x, bool), x
    return float(x)


def _pairs_from(args: list[str], files: Files) -> list[tuple[float, float]] | None:
    """The (ε_i, δ_i) list the command line describes (None for a --file: checked elsewhere)."""
    if "--eps" in args and "-k" in args:
        e, d, k = _float(args[args.index("--eps") + 1]), _float(args[args.index("--delta") + 1]), int(args[args.index("-k") + 1])
        return [(e, d)] * k
    pairs = [args[i + 1] for i, a in enumerate(args) if a == "--mech"]
    if pairs:
        return [(_float(p.split(",")[0]), _float(p.split(",")[1])) for p in pairs]
    return None


def _check_compose(args: list[str], data: dict[str, Any], files: Files) -> None:
    pairs = _pairs_from(args, files)
    quantity = "epsilon" if "epsilon" in data else "delta"
    values = data[quantity]
    opt = values["optimal"]
    lo, hi = _num(opt["lower"]), _num(opt["upper"])
    assert 0.0 <= lo <= hi, opt
    for key in ("basic", "advanced_drv", "advanced_lecture_notes", "kov"):
        v = _num(values[key])
        assert v >= 0.0, (key, v)
        assert v >= lo * (1 - EXACT_RTOL), f"theorem {key} = {v} below the optimal lower end {lo}"
    if pairs is None:
        return
    sum_eps = math.fsum(e for e, _ in pairs)
    sum_delta = math.fsum(d for _, d in pairs)
    floor = -math.expm1(math.fsum(math.log1p(-d) for _, d in pairs)) if all(d < 1 for _, d in pairs) else 1.0
    if quantity == "epsilon":
        target = _num(data["target_delta"])
        basic = sum_eps if sum_delta <= target else math.inf
        assert _num(values["basic"]) == pytest.approx(basic, rel=EXACT_RTOL) or basic == _num(values["basic"])
        assert lo <= basic * (1 + EXACT_RTOL), f"optimal ε lower {lo} above basic composition {basic}"
        if math.isinf(lo):
            assert target < floor * (1 + EXACT_RTOL), f"ε = inf but δ_g = {target} ≥ floor {floor}"
        if target < floor * (1 - EXACT_RTOL):
            assert math.isinf(hi), f"δ_g = {target} below the floor {floor}: the optimal ε is inf, got {hi}"
        if target > floor * (1 + EXACT_RTOL) and math.isfinite(sum_eps):
            assert math.isfinite(hi) and hi <= sum_eps * (1 + EXACT_RTOL) + 0.0, (hi, sum_eps)
    else:
        target = _num(data["target_epsilon"])
        assert hi <= 1.0
        assert hi >= floor * (1 - EXACT_RTOL), f"optimal δ upper {hi} below the floor {floor}"
        if target >= sum_eps:
            assert lo <= min(1.0, sum_delta) * (1 + EXACT_RTOL)


def _check_curve(alphas: list[float], betas: list[float]) -> None:
    assert alphas == sorted(alphas) and all(0.0 <= a <= 1.0 for a in alphas)
    assert all(0.0 <= b <= 1.0 for b in betas)
    assert all(b1 >= b2 for b1, b2 in itertools.pairwise(betas)), "β(α) must be non-increasing"
    assert all(b <= 1.0 - a + EXACT_RTOL for a, b in zip(alphas, betas)), "β(α) above 1 − α"


def _check_region(args: list[str], out: str) -> None:
    if out.startswith("{"):
        data = _strict_json(out)
        for c in data["constraints"]:
            assert _num(c["epsilon"]) >= 0.0 and 0.0 <= _num(c["delta"]) <= 1.0
        assert 0.0 <= _num(data["tv_bound"]) <= 1.0
        _check_curve([_num(a) for a in data["alpha"]], [_num(b) for b in data["beta"]])
    else:
        lines = out.strip().splitlines()
        assert lines[0] == "alpha,beta"
        rows = [[float(x) for x in line.split(",")] for line in lines[1:]]
        _check_curve([r[0] for r in rows], [r[1] for r in rows])


def _check_tradeoff(data: dict[str, Any]) -> None:
    pts = data["points"]
    alphas = [_num(p["alpha"]) for p in pts]
    if "beta" in pts[0]:
        _check_curve(alphas, [_num(p["beta"]) for p in pts])
    else:
        lower = [_num(p["beta_lower"]) for p in pts]
        upper = [_num(p["beta_upper"]) for p in pts]
        assert all(x <= y for x, y in zip(lower, upper))
        _check_curve(alphas, upper)
        assert all(0.0 <= x <= 1.0 for x in lower)
    for key in ("advantage", "attack_tpr"):
        b = data[key]
        assert 0.0 <= _num(b["lower"]) <= _num(b["upper"]) <= 1.0, (key, b)


def _check_bracket_rows(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        lo, hi = _num(r["lower"]), _num(r["upper"])
        assert 0.0 <= lo <= hi, r
        assert not (lo == 0.0 and math.isinf(hi)), f"[0, inf] printed as an answer: {r}"
        if r.get("query") == "delta":
            assert hi <= 1.0, r


def check_invocation(args: list[str], rc: int, out: str, err: str, files: Files) -> None:
    where = "optcomp " + " ".join(repr(a) if (" " in a or not a) else a for a in args)
    assert "Traceback" not in err + out, where
    assert rc in (0, 2), f"{where}: exit status {rc}, stderr {err!r}"
    if rc == 2:
        assert err.startswith("optcomp: error: ") and err.endswith("\n") and err.count("\n") == 1, f"{where}: {err!r}"
        assert out == "", f"{where}: refused but printed {out[:200]!r}"
        return
    notes = err.splitlines()
    assert all(line.startswith("optcomp: note: ") for line in notes), f"{where}: answered with stderr {err!r}"
    assert not NAN.search(out + err), f"{where}: NaN in {out[:400]!r}"
    assert not ZERO_TO_INF.search(out), f"{where}: printed a [0, inf] bracket: {out[:400]!r}"
    assert not NEGATIVE_ZERO.search(out), f"{where}: -0 in {out[:400]!r}"
    command = args[0]
    wants_json = "--json" in args or ("--format" in args and args[args.index("--format") + 1] == "json")
    if "--output" in args:
        return
    if command == "compose" and wants_json:
        _check_compose(args, _strict_json(out), files)
    elif command == "region":
        _check_region(args, out)
    elif command == "tradeoff" and wants_json:
        _check_tradeoff(_strict_json(out))
    elif command == "account" and wants_json:
        _check_bracket_rows(_strict_json(out)["results"])
    elif command == "dpsgd" and wants_json:
        _check_bracket_rows([_strict_json(out)["epsilon"]])
    elif command == "plot":
        assert out.startswith("wrote "), f"{where}: {out!r}"


class Hang(BaseException):
    """An in-process call ran past :data:`CALL_TIME_BOUND_S`."""


@contextmanager
def time_bound(seconds: float, where: str) -> Iterator[None]:
    """Raise :class:`Hang` in the main thread if the block runs longer than ``seconds`` (SIGALRM; where
    signals are unavailable the block runs unbounded)."""
    if not hasattr(signal, "setitimer"):  # pragma: no cover - Windows
        yield
        return

    def fire(signum: int, frame: object) -> None:
        raise Hang(f"{where} ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def bounded_main(args: list[str]) -> int:
    """``main(args)`` under :func:`time_bound` (a hang is a failure naming the command line)."""
    with time_bound(CALL_TIME_BOUND_S, "optcomp " + " ".join(args)):
        return main(args)


def _invocations(files: Files) -> list[list[str]]:
    rng = random.Random(SEED)
    calls = []
    for gen, count in GENERATORS.values():
        calls += [gen(rng, files) for _ in range(count)]
    return calls


def _command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for name, cmd in group.commands.items():
        paths.append((*prefix, name))
        if isinstance(cmd, click.Group):
            paths += _command_paths(cmd, (*prefix, name))
    return paths


def _run_all(calls: list[list[str]], files: Files, capsys: pytest.CaptureFixture[str]) -> dict[int, int]:
    """Run each invocation under the time bound, check it, and count the exit statuses."""
    outcomes = {0: 0, 2: 0}
    for args in calls:
        rc = bounded_main(args)
        captured = capsys.readouterr()
        check_invocation(args, rc, captured.out, captured.err, files)
        outcomes[rc] += 1
    return outcomes


@pytest.mark.filterwarnings("error")
def test_fuzz_every_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = Files(tmp_path)
    calls = _invocations(files)
    assert len(calls) >= 720  # with the big and hostile family below: more than 800 invocations
    outcomes = _run_all(calls, files, capsys)
    # Both sides of the contract are exercised: many refusals and many answers.
    assert outcomes[0] >= 80 and outcomes[2] >= 250, outcomes


@pytest.mark.filterwarnings("error")
def test_every_command_has_readable_help_and_refuses_unknown_options(capsys: pytest.CaptureFixture[str]) -> None:
    _register()
    paths = _command_paths(cli)
    assert {("compose",), ("region",), ("tradeoff",), ("account",), ("dpsgd",), ("plot", "compare")} <= set(paths)
    for path in [(), *paths]:
        assert main([*path, "--help"]) == 0
        text = capsys.readouterr().out
        assert text.startswith("Usage: optcomp") and "…" not in text, path
        assert main([*path, "--no-such-option-xyz"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("optcomp: error: ") and err.count("\n") == 1 and "--no-such-option-xyz" in err, path


# ---------------------------------------------------------------------------------------------
# Big and hostile inputs (issues 15 and 19): large files, deep nesting, huge counts, extreme ε/δ.
# ---------------------------------------------------------------------------------------------

DEEP = 100_000


def _big_files(root: Path) -> dict[str, Path]:
    """Large and deeply nested input files, written once."""
    rng = random.Random(SEED)
    texts = {
        "pairs_1e5_same.txt": "0.01,0\n" * 100_000,
        "pairs_1e4.txt": "".join(f"{rng.uniform(0.001, 0.01)!r},0\n" for _ in range(10_000)),
        "pairs_1e5.json": json.dumps([[0.01 + (i % 7) * 1e-3, 0.0] for i in range(100_000)]),
        "conf_1e4.json": json.dumps({"delta": 1e-5, "mechanisms": [
            {"kind": "gaussian", "sigma": rng.uniform(50.0, 100.0)} for _ in range(10_000)]}),
        "conf_1e5_same.toml": "delta = 1e-5\n" + '[[mechanisms]]\nkind = "laplace"\nscale = 1000.0\n' * 100_000,
        "opacus_1e4.json": json.dumps([[1.0, 0.01, 100]] * 10_000),
        "event_count.json": json.dumps({"class_name": "SelfComposedDpEvent", "count": 10**15,
                                        "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}),
        "event_many.json": json.dumps({"class_name": "ComposedDpEvent", "events": [
            {"class_name": "GaussianDpEvent", "noise_multiplier": 5.0 + i * 1e-3} for i in range(1000)]}),
        "deep_list.json": "[" * DEEP + "]" * DEEP,
        "deep_object.json": '{"a":' * DEEP + "1" + "}" * DEEP,
        "deep.toml": "a = " + "[" * DEEP + "]" * DEEP,
        "deep_event.json": '{"class_name":"ComposedDpEvent","events":[' * DEEP
        + '{"class_name":"GaussianDpEvent","noise_multiplier":1.0}' + "]}" * DEEP,
        "deep_plan.json": '{"statistics":' * DEEP + "1" + "}" * DEEP,
    }
    paths = {}
    for name, text in texts.items():
        paths[name] = root / name
        paths[name].write_text(text, encoding="utf-8")
    return paths


def big_and_hostile(files: dict[str, Path]) -> list[list[str]]:
    """The fixed family: each reader on large/deep files, huge counts, subnormal and huge ε and δ."""
    f = {name: str(path) for name, path in files.items()}
    calls: list[list[str]] = []
    for name in ("deep_list.json", "deep_object.json"):
        calls += [["compose", "--file", f[name], "--target-delta", "1e-5"], ["region", "--file", f[name]],
                  ["account", "--config", f[name], "--delta", "1e-5"],
                  ["account", "--dp-event", f[name], "--delta", "1e-5"],
                  ["account", "--opacus-history", f[name], "--epsilon", "1"], ["plan", f[name]]]
    calls += [["account", "--config", f["deep.toml"], "--delta", "1e-5"], ["plan", f["deep.toml"]],
              ["account", "--dp-event", f["deep_event.json"], "--delta", "1e-5"], ["plan", f["deep_plan.json"]]]
    calls += [
        ["compose", "--file", f["pairs_1e5_same.txt"], "--target-delta", "1e-6", "--json"],
        ["compose", "--file", f["pairs_1e4.txt"], "--target-eps", "1", "--json"],
        ["compose", "--file", f["pairs_1e5.json"], "--target-delta", "1e-5", "--json"],
        ["region", "--file", f["pairs_1e4.txt"], "--eps-points", "2", "--points", "5", "--json"],
        ["region", "--file", f["pairs_1e5_same.txt"], "--points", "5"],
        ["account", "--config", f["conf_1e4.json"], "--json"],
        ["account", "--config", f["conf_1e5_same.toml"], "--json"],
        ["account", "--opacus-history", f["opacus_1e4.json"], "--delta", "1e-5", "--json"],
        ["account", "--dp-event", f["event_count.json"], "--delta", "1e-5", "--json"],
        ["account", "--dp-event", f["event_many.json"], "--epsilon", "1", "--json"],
        ["account", "--mech", "gaussian:sigma=1,q=1e-6,count=10000000000000", "--delta", "1e-5"],
        ["account", "--mech", "gaussian:sigma=1,count=1000000000000000", "--delta", "1e-5", "--json"],
        ["account", "--mech", "laplace:scale=1,count=1" + "0" * 30, "--delta", "1e-5"],
        ["account", "--mech", "gaussian:sigma=1", "--accuracy", "relative_width=1e-9,memory_cap=100000000000000",
         "--delta", "1e-5"],
        ["tradeoff", "--gdp", "1", "--points", "10000000000", "--format", "csv"],
        ["tradeoff", "--eps", "1e-320", "--group", "1000000000", "--json"],
        ["tradeoff", "--eps", "1e-320", "--group", "100", "--json"],
        ["dpsgd", "--sigma", "1", "--q", "0.01", "--steps", "10000000000000", "--delta", "1e-5", "--json"],
    ]
    for eps in ("5e-324", "1e-320", "2.2250738585072014e-308", "1e300", "1e308", "1.7976931348623157e308"):
        calls += [["account", "--mech", "gaussian:sigma=1", "--epsilon", eps, "--json"],
                  ["account", "--mech", "laplace:scale=1,count=3", "--epsilon", eps, "--json"],
                  ["compose", "--eps", eps, "--delta", "0", "-k", "3", "--target-delta", "1e-6", "--json"],
                  ["tradeoff", "--eps", eps, "--points", "3", "--json"]]
    for delta in ("5e-324", "1e-320", "1e-310", "1e-300"):
        calls += [["account", "--mech", "gaussian:sigma=1,count=10", "--delta", delta, "--json"],
                  ["compose", "--eps", "0.1", "--delta", delta, "-k", "10", "--target-eps", "1", "--json"],
                  ["dpsgd", "--sigma", "1", "--q", "0.01", "--steps", "100", "--delta", delta, "--json"]]
    return calls


@pytest.mark.slow  # 15-40 s: make test-slow (keeps make test under 10 minutes on 2 cores)
@pytest.mark.filterwarnings("error")
def test_fuzz_big_and_hostile_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = Files(tmp_path)
    calls = big_and_hostile(_big_files(tmp_path))
    assert len(calls) >= 60
    outcomes = _run_all(calls, files, capsys)
    assert outcomes[0] >= 25 and outcomes[2] >= 20, outcomes
