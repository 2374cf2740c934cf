"""The ``optcomp`` command line: one small module per command, wired here.

Every command parses its arguments, makes one public library call, and formats the answer (a rich
table, or ``--json`` for scripts). No mathematics lives in the CLI. A bad argument — a ``ValueError``
from the library, a usage error from click, an ``OSError`` for a file that cannot be read or written, or
a ``NotImplementedError`` for an unsupported combination, a ``MemoryError`` for sizes beyond the
machine, an ``OverflowError`` from an engine that left the float range — is reported as one line on
stderr with exit status 2, never a traceback. ``optcomp`` or ``optcomp plot`` without a command print
their help (exit status 0).

Commands run under ``numpy.errstate(invalid="raise")``: a NaN produced anywhere in an engine (inf − inf,
0·inf) stops the command with one line instead of flowing into a printed answer; overflow to ±inf and
underflow to 0 are IEEE arithmetic the engines rely on and stay silent (no RuntimeWarning noise).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click
import numpy as np

from optcomp.cli._common import MAX_JSON_DEPTH, accuracy_advice, cli
from optcomp.pld import GridTooLargeError


def _register() -> None:
    # Importing a command module attaches its command(s) to ``cli``.
    import optcomp.cli.sweep  # noqa: F401
    from optcomp.cli import account, compose, fdp, ledger, plan, plot, reproduce, serve  # noqa: F401


def _error(message: str) -> int:
    """Report ``message`` as exactly one stderr line (any newline flattened); exit status 2."""
    click.echo("optcomp: error: " + " ".join(message.splitlines()), err=True)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``optcomp`` console script. Returns the process exit status."""
    _register()
    try:
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="raise"):
            cli.main(args=list(argv) if argv is not None else None, prog_name="optcomp", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("optcomp: aborted", err=True)
        return 1
    except click.exceptions.NoArgsIsHelpError as exc:  # bare ``optcomp`` / ``optcomp plot``: the help, readable
        click.echo(exc.ctx.get_help())
        return 0
    except click.ClickException as exc:
        return _error(exc.format_message())
    except GridTooLargeError as exc:  # the library names Accuracy's fields: name the --accuracy option
        return _error(accuracy_advice(str(exc)))
    except ValueError as exc:
        return _error(str(exc))
    except RecursionError:  # a nested input that a reader walked recursively (files are checked up front)
        return _error(f"an input is nested too deeply (at most {MAX_JSON_DEPTH} levels of lists/objects)")
    except OSError as exc:  # an input file that cannot be read or an output file that cannot be written
        where = f": {exc.filename}" if exc.filename is not None else ""
        return _error(f"{exc.strerror or exc}{where}")
    except NotImplementedError as exc:  # a combination the library refuses rather than approximates
        return _error(f"not supported: {exc}")
    except MemoryError as exc:  # a size (-k, --points, grid) far beyond this machine
        detail = f" ({exc})" if str(exc) else ""
        return _error(f"not enough memory{detail}; use a smaller -k/--points or a coarser accuracy")
    except OverflowError as exc:  # an engine's exp/power left the float range on extreme parameters
        return _error(f"a value of this computation is beyond the floating-point range ({exc}); "
                      "use less extreme parameters")
    except FloatingPointError as exc:  # numpy produced a NaN inside an engine (errstate above)
        return _error(f"these parameters are beyond what the engines can evaluate ({exc}); "
                      "use less extreme parameters")
    except ArithmeticError as exc:  # the output guard found a NaN: a bug, reported without a traceback
        click.echo("optcomp: " + " ".join(str(exc).splitlines()), err=True)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
