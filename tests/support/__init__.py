"""What the tests share and are not tests: hubs, runs, fakes, builders, golden files.

Every test folder imports it as `support` (pytest's `pythonpath` names `tests/`); fixtures
every test may ask for by name are in `tests/conftest.py`.
"""
