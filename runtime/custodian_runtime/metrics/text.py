"""The Prometheus text format written directly, and a fleet's text kept per domain.

`custodian watch` serves the figures of thousands of domains and changes a few per pass, so
each domain's lines are formatted once when its figures change (`FleetText.put`) and a scrape
joins what is kept, family by family (the format wants a family's lines together): its cost in
Python is O(domains that changed), the joins are C. The lines are those prometheus-client writes
(`_registry.exposition`, which `custodian status` and a push keep using).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from custodian_runtime.core.metrics import BUILD_INFO, LAST_CHECK, METRICS, Figures, Sample, samples


def number(value: float) -> str:
    """A sample's value as prometheus-client writes it (Go's float format)."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    text = repr(float(value))
    dot = text.find(".")
    if value > 0 and dot > 6:  # Go switches to an exponent sooner than Python
        mantissa = f"{text[0]}.{text[1:dot]}{text[dot + 1 :]}".rstrip("0.")
        return f"{mantissa}e+{dot - 1:02d}"
    return text


def escaped(value: str) -> str:
    """A label value as the text format writes it."""
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def labelled(name: str, labels: Mapping[str, str]) -> str:
    """`name{a="x",b="y"}`, or `name` alone: a sample's line up to its value."""
    if not labels:
        return name
    return name + "{" + ",".join(f'{k}="{escaped(v)}"' for k, v in labels.items()) + "}"


def line(name: str, labels: Mapping[str, str], value: float) -> str:
    """One sample's line."""
    return f"{labelled(name, labels)} {number(value)}\n"


def header(name: str, text: str, kind: str) -> str:
    """A family's `# HELP` and `# TYPE` lines."""
    helped = text.replace("\\", r"\\").replace("\n", r"\n")
    return f"# HELP {name} {helped}\n# TYPE {name} {kind}\n"


class FleetText:
    """Every domain's figures as Prometheus text, each domain's lines made once per change.

    The last check is not kept here: it moves every pass for every domain, so the caller gives
    it at each scrape (`text(checked=...)`); the families around it are kept as bytes, joined
    again only after a change. Not thread-safe: the caller locks.
    """

    def __init__(self, info: Sample) -> None:
        self._info = line(info.name, info.labels, info.value)
        self._kept: dict[str, dict[str, str]] = {m.name: {} for m in METRICS}
        self._joined: dict[str, str | None] = dict.fromkeys(self._kept)
        self._around: tuple[bytes, bytes] | None = None  # the families before and after checks
        self._prefix: dict[str, str] = {}  # a domain's last-check line up to its value

    def put(self, figures: Figures) -> None:
        """Keep `figures` as the domain's lines, in place of what was kept for it."""
        grouped: dict[str, list[str]] = {}
        for s in samples(figures):
            grouped.setdefault(s.name, []).append(line(s.name, s.labels, s.value))
        for name, kept in self._kept.items():
            if name in (BUILD_INFO, LAST_CHECK):
                continue
            now, before = "".join(grouped.get(name, ())), kept.get(figures.domain)
            if now == (before or ""):
                continue
            if now:
                kept[figures.domain] = now
            else:
                del kept[figures.domain]
            self._joined[name], self._around = None, None

    def text(self, checked: Mapping[str, float]) -> bytes:
        """The whole text, UTF-8: each family's kept lines, and each given domain's last check."""
        if self._around is None:
            self._around = self._families()
        before, after = self._around
        checks = "".join(self._checks(checked))
        if not checks:
            return before + after
        metric = next(m for m in METRICS if m.name == LAST_CHECK)
        return before + (header(LAST_CHECK, metric.help, "gauge") + checks).encode() + after

    def _families(self) -> tuple[bytes, bytes]:
        """The families before the last check's and after it, headers and lines."""
        parts: tuple[list[str], list[str]] = ([], [])
        side = 0
        for metric in METRICS:
            if metric.name == LAST_CHECK:
                side = 1
                continue
            kind = "counter" if metric.kind == "counter" else "gauge"
            body = self._info if metric.name == BUILD_INFO else self._body(metric.name)
            if body:
                parts[side].extend((header(metric.name, metric.help, kind), body))
        return "".join(parts[0]).encode(), "".join(parts[1]).encode()

    def _body(self, name: str) -> str:
        joined = self._joined[name]
        if joined is None:
            joined = self._joined[name] = "".join(self._kept[name].values())
        return joined

    def _checks(self, checked: Mapping[str, float]) -> Iterable[str]:
        prefix = self._prefix
        values: dict[float, str] = {}  # a pass checks its domains at one time: one format
        for domain, at in checked.items():
            start = prefix.get(domain)
            if start is None:
                start = prefix[domain] = labelled(LAST_CHECK, {"domain": domain}) + " "
            value = values.get(at)
            if value is None:
                value = values[at] = number(at) + "\n"
            yield start + value
