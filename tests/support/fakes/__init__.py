"""Fakes for tests and end-to-end runs: provider servers on loopback, a fake `claude` CLI."""
