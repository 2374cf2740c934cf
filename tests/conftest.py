"""Test configuration: hypothesis runs derandomised in CI (a fixed example stream, so a submission's
verdict does not depend on the draw) and randomised on developers' machines (to keep hunting)."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
