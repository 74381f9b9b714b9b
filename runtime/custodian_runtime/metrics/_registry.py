"""The figures as a prometheus-client registry: a fresh one each time, never the global one."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from custodian_runtime.core.metrics import METRICS, Figures, samples


def registry_of(figures: Iterable[Figures]) -> CollectorRegistry:
    """A new registry holding every known value of every domain's figures."""
    registry = CollectorRegistry(auto_describe=True)
    gauges = {m.name: Gauge(m.name, m.help, m.labels, registry=registry) for m in METRICS}
    for one in figures:
        for sample in samples(one):
            gauges[sample.name].labels(**sample.labels).set(sample.value)
    return registry


def exposition(figures: Iterable[Figures]) -> str:
    """The Prometheus text exposition format, for a node-exporter textfile collector."""
    return generate_latest(registry_of(figures)).decode("utf-8")
