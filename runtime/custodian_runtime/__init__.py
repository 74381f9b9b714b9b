"""Custodian: a bounded runtime that lets a language model look after a state-hub's state."""

# The one version source: pyproject.toml reads it (setuptools `dynamic`), so the wheel, the
# editable install, `custodian --version` and every run_started record agree.
__version__ = "0.4.0"
