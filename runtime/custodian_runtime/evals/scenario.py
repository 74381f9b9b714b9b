"""Eval scenarios on disk: one JSON file each, parsed strictly; a mistake names the file and field.

A scenario file holds::

    {"description": "what it tests and why",
     "category": "stale" | "injection" | ...,        (free text, groups the report)
     "domain": "website", "now": "2026-03-02T09:00:00Z",
     "seed": {...the `hub serve --seed` JSON shape...}   or   "seed_file": "../seeds/x.json",
     "approvals": [{"operation", "params", "status": "pending" | "rejected", "reason"?,
                    "by"?, "days_ago"?}],
     "expectations": [{"kind": "must_flag", "task": "web-t-1", "required": true, "why": "..."}]}
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from custodian_hub import SeedError, read_seed_file, validate_seed
from custodian_runtime.core.contract import DomainName
from custodian_runtime.core.tooling.eval_expect import ANY, Expectation
from custodian_runtime.errors import ConfigError

SETTING = "--scenarios"


class SeededApproval(BaseModel):
    """An approval item the scenario's memory holds before the run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operation: Annotated[str, Field(min_length=1, max_length=100)]
    params: dict[str, Any]
    status: Literal["pending", "rejected"]
    rationale: str | None = None
    reason: str | None = None
    by: str = "a person"
    days_ago: Annotated[int, Field(ge=0, le=13)] = 1


class ScenarioFile(BaseModel):
    """The JSON of one scenario file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: Annotated[str, Field(min_length=1)]
    category: Annotated[str, Field(min_length=1, max_length=60)]
    domain: DomainName
    now: AwareDatetime
    seed: dict[str, Any] | None = None
    seed_file: str | None = None
    approvals: tuple[SeededApproval, ...] = ()
    expectations: Annotated[tuple[Expectation, ...], Field(min_length=1)]

    @model_validator(mode="after")
    def _one_seed(self) -> ScenarioFile:
        if (self.seed is None) == (self.seed_file is None):
            raise ValueError("give exactly one of 'seed' (inline) and 'seed_file' (a path)")
        return self


class Scenario(BaseModel):
    """A loaded scenario: its name (the file's stem), its file, and the seed dataset resolved."""

    model_config = ConfigDict(frozen=True)

    name: str
    path: Path
    spec: ScenarioFile
    dataset: dict[str, Any]

    @property
    def now(self) -> datetime:
        """The scenario's fixed clock."""
        return self.spec.now


def load_scenarios(directory: Path, only: Sequence[str] = ()) -> list[Scenario]:
    """Every `*.json` scenario under `directory` (or only the named ones), sorted by name."""
    if not directory.is_dir():
        raise ConfigError(
            f"no scenario directory at {directory}: pass --scenarios DIR", setting=SETTING
        )
    paths = {p.stem: p for p in sorted(directory.glob("*.json"))}
    unknown = sorted(set(only) - set(paths))
    if unknown:
        raise ConfigError(
            f"no scenario named {', '.join(unknown)} in {directory}; "
            f"known: {', '.join(paths) or 'none'}",
            setting="--only",
        )
    chosen = [paths[name] for name in (sorted(set(only)) if only else paths)]
    if not chosen:
        raise ConfigError(f"{directory} holds no *.json scenario files", setting=SETTING)
    return [load_scenario(path) for path in chosen]


def load_scenario(path: Path) -> Scenario:
    """One scenario file, checked: schema, seed, and every id its expectations name."""
    raw = _read_json(path, "scenario file")
    try:
        spec = ScenarioFile.model_validate(raw)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
            for err in exc.errors(include_url=False)[:8]
        ]
        raise ConfigError(f"scenario {path}: " + "; ".join(problems), setting=SETTING) from None
    dataset = spec.seed if spec.seed is not None else _seed_file(path, spec.seed_file or "")
    try:
        validate_seed(dataset)
    except SeedError as exc:
        raise ConfigError(f"scenario {path}: seed: {exc.message}", setting=SETTING) from None
    _check_ids(path, spec, dataset)
    return Scenario(name=path.stem, path=path, spec=spec, dataset=dataset)


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError) as exc:
        raise ConfigError(f"{what} {path} cannot be read: {exc}", setting=SETTING) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{what} {path} is not valid JSON: {exc}", setting=SETTING) from None


def _seed_file(path: Path, name: str) -> dict[str, Any]:
    seed_path = (path.parent / name).resolve()
    try:
        return read_seed_file(seed_path)
    except SeedError as exc:
        raise ConfigError(f"scenario {path}: seed_file: {exc.message}", setting=SETTING) from None


def _check_ids(path: Path, spec: ScenarioFile, dataset: dict[str, Any]) -> None:
    """A typo in an id would make a forbidding expectation pass vacuously: refuse it."""
    domains = {ws.get("domain") for ws in dataset.get("workstreams", [])}
    if spec.domain not in domains:
        raise ConfigError(
            f"scenario {path}: domain: the seed has no domain {spec.domain!r}", setting=SETTING
        )
    known = {
        "task": {t.get("id") for t in dataset.get("tasks", [])},
        "event": {e.get("id") for e in dataset.get("events", [])},
    }
    for i, e in enumerate(spec.expectations):
        for field, ids in known.items():
            value = getattr(e, field, None)
            if value is not None and value != ANY and value not in ids:
                raise ConfigError(
                    f"scenario {path}: expectations.{i}.{field}: the seed has no {field} {value!r}",
                    setting=SETTING,
                )
