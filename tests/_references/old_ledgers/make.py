"""How ``ledgers.json`` was made: run once at main bdcfc60 (before the release kinds laplace, renyi and
discrete_gaussian and the zCDP δ share), as a script with that version first on the path, at mpmath's
default precision: ``PYTHONPATH=<bdcfc60>/src python tests/_references/old_ledgers/make.py DIR`` (not
``python -m tests._references…``: ``tests/_references/__init__.py`` sets ``mpmath.mp.dps = 50``, which at
bdcfc60 changed the ledger's rounding margin; ``ledgers_mp50.json`` is the same script run that way, kept
for the test of that drift).

Each ledger is written by that version's own ``Ledger`` into a SQLite file, then exported
(``Ledger.export()``: the configuration, the genesis hash and every event with its stored body, time and
hashes). ``tests/test_ledger_kinds.py`` writes those rows back, byte for byte, into a fresh store (SQLite
and PostgreSQL) as that version did, and checks that today's ``verify()`` recomputes every stored charge
bit for bit. ``ledger_zcdp.sqlite.gz`` is the zcdp file itself, as that version left it on disk.

Do not re-run it with a later version: the point of the file is that it was written by the old code.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
from fractions import Fraction

from optcomp.ledger import (
    ApproxDP,
    BatchRelease,
    BudgetExceeded,
    GaussianRelease,
    Ledger,
    PureDP,
    ZCDPRelease,
    from_mechanism,
)
from optcomp.mechanisms import Gaussian, Laplace


def _charge_common(led: Ledger, pure_only: bool = False) -> None:
    led.charge("q-pure-dec", PureDP("0.01"))
    led.charge("q-pure-float", PureDP(0.3))
    led.charge("q-laplace", from_mechanism(Laplace(scale=10.0)))  # a Laplace was stored as kind pure
    led.released("q-pure-dec", "digest-1")
    led.charge("q-approx0", ApproxDP("0.05", 0))
    led.charge("q-void", PureDP("0.02"))
    led.void("q-void", "never ran: the job failed before reading data")
    if not pure_only:
        led.charge("q-gauss", GaussianRelease(4))
        led.charge("q-gauss-mech", from_mechanism(Gaussian(sigma=7.5, sensitivity=2.0)))


def main(out: str) -> None:
    tmp = os.path.join(out, "tmp")
    os.makedirs(tmp, exist_ok=True)
    made: dict[str, object] = {}

    def new(name: str, **kw: object) -> Ledger:
        return Ledger.create(os.path.join(tmp, name + ".ledger"), dataset="old-" + name, relation="add_remove", **kw)

    led = new("zcdp", epsilon=4, delta="1e-6", currency="zcdp")
    _charge_common(led)
    led.charge("q-zcdp", ZCDPRelease("0.001"))
    led.charge("q-batch", BatchRelease([PureDP("0.01")] * 5 + [ApproxDP("0.02", 0)], "1e-7"))
    try:
        led.charge("q-too-big", PureDP(100))
    except BudgetExceeded:
        pass
    made["zcdp"] = led.export()
    led.close()

    led = new("rdp-workload", epsilon=3, delta="1e-6", currency="rdp", workload=PureDP("0.01"))
    _charge_common(led)
    led.charge("q-zcdp", ZCDPRelease("0.001"))
    made["rdp-workload"] = led.export()
    led.close()

    led = new("rdp-order", epsilon=4, delta="1e-6", currency="rdp", orders=[8])
    _charge_common(led)
    made["rdp-order"] = led.export()
    led.close()

    led = new("gdp", epsilon=4, delta="1e-6", currency="gdp")
    _charge_common(led)
    made["gdp"] = led.export()
    led.close()

    led = new("basic", epsilon=2, delta="1e-6", currency="basic")
    _charge_common(led, pure_only=True)
    led.charge("q-approx", ApproxDP("0.1", "1e-8"))
    led.charge("q-batch", BatchRelease([PureDP("0.01")] * 20 + [ApproxDP(0.05, Fraction(1, 10**9))], "1e-7"))
    made["basic"] = led.export()
    led.close()

    led = new("approx-zcdp", epsilon=4, delta="1e-6", currency="approx-zcdp", delta_steps="1e-7")
    _charge_common(led)
    led.charge("q-approx", ApproxDP("0.1", "1e-9"))
    led.charge("q-zcdp", ZCDPRelease("0.001"))
    led.charge("q-batch", BatchRelease([PureDP("0.01")] * 5, "1e-7"))
    made["approx-zcdp"] = led.export()
    led.close()

    led = new("plan", epsilon=5, delta="1e-6", mode="plan",
              plan=[PureDP("0.5"), ApproxDP("0.5", "1e-7"), GaussianRelease(3), GaussianRelease(5, 2), PureDP(1)])
    led.charge("p-0", PureDP("0.4"))
    led.charge("p-2", GaussianRelease(4), slot=2)
    led.charge("p-3", from_mechanism(Gaussian(sigma=6.0, sensitivity=2.0)))
    led.released("p-0", "d")
    made["plan"] = led.export()
    led.close()

    with open(os.path.join(out, "ledgers.json"), "w", encoding="utf-8") as f:
        json.dump({"made_by": "optcomp main bdcfc60", "ledgers": made}, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")
    with (open(os.path.join(tmp, "zcdp.ledger"), "rb") as src,
          open(os.path.join(out, "ledger_zcdp.sqlite.gz"), "wb") as raw,
          gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as dst):
        shutil.copyfileobj(src, dst)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
