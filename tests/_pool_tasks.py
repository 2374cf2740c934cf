"""Tasks for the local process pool's tests (``tests/test_sweep_executors.py``): a module of its own, light
to import in a forkserver worker, whose functions kill the worker running them."""

from __future__ import annotations

import os
import signal


def square(x: int) -> int:
    """A task that finishes."""
    return x * x


def die_once(arg: tuple[str, int]) -> int:
    """The first task to run (across all processes: the flag file ``arg[0]`` is created exclusively)
    kills its own worker with SIGKILL; every other run returns ``arg[1]²``."""
    flag, x = arg
    try:
        os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return x * x
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")


def die(x: int) -> int:
    """Kills its own worker with SIGKILL, every time."""
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")
