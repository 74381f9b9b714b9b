"""The figures as a prometheus-client registry: a fresh one each time, never the global one."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client import CollectorRegistry, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from custodian_runtime import __version__
from custodian_runtime.core.metrics import METRICS, Figures, Sample, build_info, samples
from custodian_runtime.packaged import revision


class _Totals(Collector):
    """The journal's running totals as counters: their values are set, never incremented here."""

    def __init__(self, found: list[Sample]) -> None:
        self.found = found

    def collect(self) -> Iterator[CounterMetricFamily]:
        for metric in (m for m in METRICS if m.kind == "counter"):
            family = CounterMetricFamily(metric.name, metric.help, labels=metric.labels)
            for sample in (s for s in self.found if s.name == metric.name):
                family.add_metric([sample.labels[k] for k in metric.labels], sample.value)
            yield family


def registry_of(figures: Iterable[Figures]) -> CollectorRegistry:
    """A new registry holding every known value of every domain's figures, and build_info."""
    registry = CollectorRegistry(auto_describe=True)
    gauges = {
        m.name: Gauge(m.name, m.help, m.labels, registry=registry)
        for m in METRICS
        if m.kind == "gauge"
    }
    counted: list[Sample] = []
    for one in figures:
        for sample in samples(one):
            if sample.name in gauges:
                gauges[sample.name].labels(**sample.labels).set(sample.value)
            else:
                counted.append(sample)
    info = build_info(__version__, revision())
    gauges[info.name].labels(**info.labels).set(info.value)
    registry.register(_Totals(counted))
    return registry


def exposition(figures: Iterable[Figures]) -> str:
    """The Prometheus text exposition format, for a node-exporter textfile collector."""
    return generate_latest(registry_of(figures)).decode("utf-8")
