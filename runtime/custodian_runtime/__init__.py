"""Custodian: a bounded runtime that lets a language model look after a state-hub's state."""

__version__ = "0.1.0"
