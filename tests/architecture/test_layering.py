"""Imports point one way: later run steps to earlier ones, the shell's upper floors to lower ones.

The floors below are the plan of the house, written as data. A module may import its own
package and anything on a lower floor, never a higher one; inside `custodian_runtime.run`, a
module may import only the modules listed before it. The reference hub (`custodian_hub`) sees only
the core, and the runtime reaches it only through the doors listed here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import custodian_runtime

PACKAGE = Path(custodian_runtime.__file__).parent
RUNTIME = PACKAGE.parent

# Lowest first. Each entry names modules or packages under `custodian` (longest name wins).
FLOORS: tuple[tuple[str, ...], ...] = (
    # The pure core, the error types it raises, the package's version, and the lazy attributes
    # every package's __init__ uses.
    ("core", "errors", "", "_lazy"),
    ("settings.table",),  # every setting's variable, flag and default: data the settings read
    # Small shell utilities every part may use: the clock, the process's stop flag and stderr
    # lines, the canon on disk, the wheel's data, and what settings read below the settings.
    (
        "clock",
        "process.stopping",
        "process.log_lines",
        "canon",
        "packaged",
        "settings.dotenv",
        "settings.numbers",
        "settings.seal_keys",
    ),
    ("net.bounded_http", "process"),  # process: its face, the crash line and phase lines
    ("net",),  # the one retry policy: its waits are cut short by the stop flag
    # The doors to the world: files on disk (each concept's disk half), the hub's client, the
    # models, the renderer.
    ("files", "statehub", "llm", "render"),
    # Each concept's disk half, written through files/'s atomic writes, in the order they read
    # each other: the queue's index and the notes; the queue (pruning and resealing the journal
    # keep what it holds); the journal, with a person's words and standing (journal/person/).
    ("journal.person._queue_index", "notes"),
    ("journal.person.queue",),
    ("journal",),
    # Settings name the model adapters; metrics (a run's push, `custodian status`) read the disk.
    ("settings", "metrics"),
    ("statehub.connect",),  # the one hub connector opens a client from the settings
    # The write chain: send, dispatch, origin, preflight and the summary read, shared below both
    # the run and the approvals.
    ("writes",),
    # A person's side: an item's status as the journal says it (read by the run), the queue's
    # commands, an approved item executed, `custodian policy` and `grants`.
    ("person",),
    ("run",),
    # watch runs many domains, as `custodian run` does; cli._people names who decides
    ("audit", "watch", "cli._people"),
    ("review", "evals", "cli._run", "cli.hub", "cli.standing"),
    ("cli",),
    ("__main__",),
)
# On this floor packages may import each other: the core raises the error types, and the
# errors carry the core's contract models.
SHARED_FLOOR = 0

# Inside `custodian_runtime.run`, in the order a run goes; a module may import only those before it.
RUN_ORDER: tuple[str, ...] = (
    "_evidence",
    "_result",
    "_planner",
    "_context",
    "_earlier",
    "_inputs",
    "_started",
    "observe",
    "_unchanged",
    "orient",
    "_facts",
    "decide",
    "act",
    "_late",
    "_shadow",
    "_reconcile",
    "record",
    "_notice",
    "_ending",
    "_full",
    "_metrics",
    "_runner",
    "_quick_result",
    "_quick_append",
    "_quick",  # the skip `custodian run` tries before run(): it imports only the light steps
)

# The runtime modules that may import the reference hub: where the CLI wires in the embedded hub,
# `custodian hub serve`, and the evals' own seeded hub and seed checks. Never the client package.
HUB_DOORS = ("cli.hub", "cli._main", "evals.runner", "evals.scenario")
# The hub sees the core, the error types, the version, the one wall clock
# (custodian_runtime.clock) and the lazy attributes of its __init__.
HUB_MAY_IMPORT = ("core", "errors", "", "__version__", "clock", "_lazy")


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every absolute module name `path` imports (`from a import b` counts `a` and `a.b`)."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _inner(name: str) -> str | None:
    """`custodian_runtime.run.act` -> `run.act`; the package itself -> ``; else None."""
    if name == "custodian_runtime":
        return ""
    return (
        name.removeprefix("custodian_runtime.") if name.startswith("custodian_runtime.") else None
    )


def _within(name: str, entry: str) -> bool:
    if entry == "":
        return name == ""
    return name == entry or name.startswith(entry + ".")


def _floor(name: str, *, strict: bool = False) -> tuple[int, str]:
    """The floor of a module (inner name) and the entry that placed it there.

    An imported name on no floor is an attribute of the package (`custodian_runtime.__version__`);
    with `strict`, a module on no floor is an error.
    """
    best: tuple[int, str] | None = None
    for level, entries in enumerate(FLOORS):
        for entry in entries:
            if _within(name, entry) and (best is None or len(entry) > len(best[1])):
                best = (level, entry)
    if best is None and (strict or "." in name):
        raise AssertionError(f"custodian_runtime.{name} is on no floor: add it to FLOORS")
    return best or (0, "")


def _module_name(path: Path) -> str:
    parts = path.relative_to(RUNTIME).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def violations(path: Path, module: str) -> list[str]:
    """What `path` (module `module`, a full dotted name) imports against the plan."""
    found: set[str] = set()
    for line, name in _imports(path):
        problem = _problem(module, name)
        if problem is not None:
            found.add(f"{module}:{line}: {problem}")
    return sorted(found)


def _problem(module: str, name: str) -> str | None:
    top = name.split(".")[0]
    if module.split(".")[0] == "custodian_hub":
        inner = _inner(name)
        if top == "custodian_runtime" and not any(_within(inner or "", e) for e in HUB_MAY_IMPORT):
            return f"the reference hub may import only the core, not {name}"
        return None
    source = _inner(module)
    if source is None:
        return None
    if top == "custodian_hub":
        ok = any(_within(source, door) for door in HUB_DOORS)
        return None if ok else "only the hub doors (HUB_DOORS) may import custodian_hub"
    target = _inner(name)
    if target is None:
        return None
    return _step_problem(source, target) or _floor_problem(source, target)


def _floor_problem(source: str, target: str) -> str | None:
    (low, low_entry), (high, high_entry) = _floor(target), _floor(source)
    if low_entry == high_entry or low < high or low == high == SHARED_FLOOR:
        return None
    return f"{high_entry or 'custodian_runtime'} (floor {high}) imports {low_entry} (floor {low})"


def _step_problem(source: str, target: str) -> str | None:
    if not (_within(source, "run") and _within(target, "run")):
        return None
    first, second = source.split("."), target.split(".")
    if len(first) < 2 or len(second) < 2 or first[1] == second[1]:
        return None
    if first[1] not in RUN_ORDER or second[1] not in RUN_ORDER:
        return f"run.{first[1]} or run.{second[1]} is not in RUN_ORDER"
    if RUN_ORDER.index(second[1]) > RUN_ORDER.index(first[1]):
        return f"run.{first[1]} comes before run.{second[1]}; a step imports only earlier ones"
    return None


def _sources() -> list[tuple[Path, str]]:
    paths = sorted(PACKAGE.rglob("*.py")) + sorted((RUNTIME / "custodian_hub").rglob("*.py"))
    return [(p, _module_name(p)) for p in paths]


def unplaced(modules: set[str]) -> list[str]:
    """Each step of RUN_ORDER that is no module of `modules`, and each module on no floor."""
    problems = [
        f"run.{name}: in RUN_ORDER, and no module"
        for name in RUN_ORDER
        if f"custodian_runtime.run.{name}" not in modules
    ]
    for module in sorted(modules):
        inner = _inner(module)
        try:
            if inner is not None:
                _floor(inner, strict=True)  # raises for a module on no floor
        except AssertionError as exc:
            problems.append(str(exc))
    return problems


def test_the_floors_and_the_run_order_name_real_modules() -> None:
    assert unplaced({m for _, m in _sources()}) == []


def test_a_made_up_module_on_no_floor_and_a_step_gone_are_named() -> None:
    modules = {f"custodian_runtime.run.{name}" for name in RUN_ORDER if name != "_late"}
    modules |= {"custodian_runtime.core.plan", "custodian_runtime.annex", "custodian_hub._app"}
    assert unplaced(modules) == [
        "run._late: in RUN_ORDER, and no module",
        "custodian_runtime.annex is on no floor: add it to FLOORS",
    ]


def test_imports_point_one_way() -> None:
    found = [v for path, module in _sources() for v in violations(path, module)]
    assert found == []


def test_the_checker_catches_a_backward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from custodian_runtime.run import record\n"  # an earlier step importing a later one
        "from custodian_runtime.run.act import send\n"
        "import custodian_runtime.cli\n"  # the shell's top floor
        "from custodian_runtime.core import plan\n"  # fine: lower floor
        "from custodian_runtime.run.observe import Observation\n"  # fine: an earlier step
        "from custodian_hub import ReferenceHub\n"  # not a hub door
    )
    found = violations(bad, "custodian_runtime.run.decide")
    assert len(found) == 4, found
    assert any("run.decide comes before run.record" in v for v in found)
    assert any("run.decide comes before run.act" in v for v in found)
    run_floor, cli_floor = _floor("run")[0], _floor("cli")[0]
    assert any(f"run (floor {run_floor}) imports cli (floor {cli_floor})" in v for v in found)
    assert any("hub doors" in v for v in found)


def test_the_checker_catches_a_lower_floor_reaching_up(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from custodian_runtime.run._result import RunResult\nimport custodian_runtime.settings\n"
    )
    assert len(violations(bad, "custodian_runtime.notes.store")) == 2
    assert violations(bad, "custodian_runtime.audit.inspection") == []
    assert len(violations(bad, "custodian_runtime.person._execute")) == 1  # the run is higher
    hub = tmp_path / "hub.py"
    hub.write_text(
        "from custodian_runtime.core import contract\n"
        "from custodian_runtime.settings import Settings\n"
    )
    assert [v.split(": ", 1)[1] for v in violations(hub, "custodian_hub._app")] == [
        "the reference hub may import only the core, not custodian_runtime.settings",
        "the reference hub may import only the core, not custodian_runtime.settings.Settings",
    ]


def test_a_persons_side_imports_nothing_of_the_run() -> None:
    person = sorted((PACKAGE / "person").rglob("*.py"))
    found = [
        f"{path.name}:{line} {name}"
        for path in person
        for line, name in _imports(path)
        if _within(_inner(name) or "-", "run")
    ]
    assert person and found == []
    assert _floor_problem("person._execute", "run") is not None
    assert _floor_problem("run.act", "person") is None  # the run reads a person's standing


def test_the_hub_client_never_imports_the_reference_hub() -> None:
    client = sorted((PACKAGE / "statehub").rglob("*.py"))
    found = [
        f"{path.name}:{line} {name}"
        for path in client
        for line, name in _imports(path)
        if name.split(".")[0] == "custodian_hub"
    ]
    assert client and found == []
    assert not any(_within(door, "statehub") for door in HUB_DOORS)
    assert _problem("custodian_runtime.statehub.connect", "custodian_hub") is not None


# Inside the core, what decides imports nothing that only presents or tools: presentation/ and
# tooling/ sit above the rest of the core. The journal's public API re-exports the court record.
CORE_APART = ("core.presentation", "core.tooling")
CORE_APART_DOORS = ("core.fold.api",)


def _core_apart_imports(path: Path, module: str) -> list[str]:
    """What `path` (module `module`) of the deciding core imports of presentation or tooling."""
    source = _inner(module)
    if source is None or not _within(source, "core") or source == "core":
        return []
    if any(_within(source, e) for e in CORE_APART + CORE_APART_DOORS):
        return []
    return [
        f"{module}:{line}: {name}"
        for line, name in _imports(path)
        if (target := _inner(name)) is not None and any(_within(target, e) for e in CORE_APART)
    ]


def test_the_deciding_core_imports_no_presentation_or_tooling() -> None:
    found = [v for path, module in _sources() for v in _core_apart_imports(path, module)]
    assert found == [], "what decides must not need what presents; move the shared part down"


def test_the_core_apart_rule_catches_a_deciding_module_that_presents(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from custodian_runtime.core.presentation.display import summary_line\n"
        "import custodian_runtime.core.tooling.offline_planner\n"
        "from custodian_runtime.core.plan import extract\n"  # fine: the deciding core
    )
    found = _core_apart_imports(bad, "custodian_runtime.core.authority.authorize")
    assert [f.split(": ", 1)[1] for f in found] == [
        "custodian_runtime.core.presentation.display",
        "custodian_runtime.core.presentation.display.summary_line",
        "custodian_runtime.core.tooling.offline_planner",
    ]
    assert _core_apart_imports(bad, "custodian_runtime.core.presentation.note_outcomes") == []
    assert _core_apart_imports(bad, "custodian_runtime.core.fold.api") == []


# The model adapters see text in and text out. Of the core they may use only what makes text
# inert or redacted; a plan, the prompt's context and the rule planner's facts are the run's.
LLM_MAY_IMPORT_CORE = ("core.inert", "core.redact")


def _llm_core_imports(path: Path) -> list[str]:
    """What `path` imports of the core beyond LLM_MAY_IMPORT_CORE."""
    found = []
    for line, name in _imports(path):
        target = _inner(name)
        if target is None or not _within(target, "core"):
            continue
        if not any(_within(target, allowed) for allowed in LLM_MAY_IMPORT_CORE):
            found.append(f"{path.name}:{line} {name}")
    return found


def test_the_model_adapters_know_nothing_of_planning() -> None:
    adapters = sorted((PACKAGE / "llm").rglob("*.py"))
    found = [v for path in adapters for v in _llm_core_imports(path)]
    assert len(adapters) > 10 and found == [], "llm/ takes text in and gives text out"


def test_the_llm_rule_catches_a_planning_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from custodian_runtime.core.tooling.planning_facts import PlanningFacts\n"
        "from custodian_runtime.core.plan.extract import Plan\n"
        "import custodian_runtime.core.context.prompt\n"
        "from custodian_runtime.core.inert import for_terminal\n"  # fine: inert text
        "from custodian_runtime.errors import ModelError\n"  # fine: not the core
    )
    found = _llm_core_imports(bad)
    assert [f.split(" ")[1] for f in found] == [
        "custodian_runtime.core.tooling.planning_facts",
        "custodian_runtime.core.tooling.planning_facts.PlanningFacts",
        "custodian_runtime.core.plan.extract",
        "custodian_runtime.core.plan.extract.Plan",
        "custodian_runtime.core.context.prompt",
    ]
