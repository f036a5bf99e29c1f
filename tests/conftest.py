"""Test-wide settings. Under CI (CI=true) property tests use a fixed Hypothesis seed, so a CI run is
reproducible; local runs keep drawing new examples."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
