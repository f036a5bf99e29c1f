"""Test-wide settings. Under CI (CI=true) property tests use a fixed Hypothesis seed, so a CI run is
reproducible; local runs keep drawing new examples."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Commands run by the tests (in this process and in the processes they start) run in their own process: no
# resident solver is used or left behind (solver.app.server; tests/solver/test_server.py turns it on where it
# checks it).
os.environ["BONGARD_SOLVER_SERVER"] = "off"
