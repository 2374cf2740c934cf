"""Draw trade-off curves (the README figure) to a scratch file, or to ``--output``.

Curves: G_1 (1-GDP); the exact 100-fold composition of (0.1, 1e-4)-DP (KOV Thm III.3 as a trade-off
function) with its CLT approximation (labelled as such) and the certified Berry–Esseen band (DRS Thm 3.4);
and the subsampled Gaussian C_0.2(G_2) (DRS Thm 4.2) as a certified bracket.

Run:  python examples/tradeoff_curve.py                                  # writes to the temp directory
      python examples/tradeoff_curve.py --output docs/img/tradeoff.png    # regenerate the tracked figure
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from optcomp.fdp import (
    clt_epsilon_delta,
    epsilon_delta_composition,
    gaussian_tradeoff,
    subsample,
)
from optcomp.plot import plot_tradeoff

#: Where the figure goes unless ``--output`` says otherwise: never the tracked docs/img/tradeoff.png.
DEFAULT_OUTPUT = Path(tempfile.gettempdir()) / "optcomp-tradeoff.png"


def main(output: Path) -> None:
    eps, delta, k = 0.1, 1e-4, 100
    clt = clt_epsilon_delta([eps] * k, [delta] * k)
    curves = [
        ("1-GDP: G_1", gaussian_tradeoff(1.0)),
        (f"({eps}, {delta:g})-DP composed {k}x (exact)", epsilon_delta_composition(eps, delta, k)),
        (f"CLT approximation, mu_estimate={clt.mu_estimate:.3f}", clt.estimate),
        ("Berry-Esseen band (DRS Thm 3.4)", clt.band),
        ("subsampled C_0.2(G_2)", subsample(gaussian_tradeoff(2.0), 0.2)),
    ]
    output.parent.mkdir(parents=True, exist_ok=True)
    plot_tradeoff(curves, path=output, title="Trade-off functions (type II vs type I error)")
    print(f"wrote {output}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help=f"PNG to write (default {DEFAULT_OUTPUT})")
    main(parser.parse_args().output)
