"""Custodian: a bounded runtime that lets a language model look after a state-hub's project state."""

__version__ = "0.1.0"
