"""The operations registry is the one home of an operation: every fact about it is derived."""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, fields
from pathlib import Path

import pytest
from pydantic import ValidationError

import custodian_hub
import custodian_runtime
from custodian_hub._endpoints import all_endpoints
from custodian_runtime.core import operations
from custodian_runtime.core.limits import DEFAULT, Limits
from custodian_runtime.core.operations import Lookup, OperationSpec
from custodian_runtime.core.ruling.reconcile import landed_on_hub
from custodian_runtime.core.ruling.spine import PendingWrite
from support.authority import website

PACKAGE = Path(custodian_runtime.__file__).parent
HUB = Path(custodian_hub.__file__).parent
OPERATOR_DOC = PACKAGE.parents[1] / "docs" / "operator.md"  # its "What a run may do"
# Besides its spec module, an operation's name may be spelled in at most this many files, and
# a sanctioned operation's plan section in at most this many (the system prompt reads it).
ELSEWHERE = {"operation": 3, "section": 2}
_TEXT_SUFFIXES = (".j2", ".md", ".html", ".css", ".txt")


@functools.cache
def _strings(path: Path) -> tuple[str, ...]:
    """The string literals of a module, docstrings left out (they document, they decide nothing)."""
    return tuple(_literals(path))


def _literals(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text("utf-8"))
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.value


def _files() -> Iterator[tuple[str, Path]]:
    """The runtime package's and the reference hub's files (package data aside), by name."""
    for root, label in ((PACKAGE, ""), (HUB, "custodian_hub/")):
        for path in sorted(root.rglob("*")):
            if path.is_file() and "_data" not in path.parts and "__pycache__" not in path.parts:
                yield label + str(path.relative_to(root)), path


def _spelled_in(name: str) -> list[str]:
    """The files of the runtime and the hub that spell `name` as a string (or in a template)."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    found = []
    for label, path in _files():
        if path.suffix == ".py":
            hit = any(word.search(text) for text in _strings(path))
        else:
            hit = path.suffix in _TEXT_SUFFIXES and bool(word.search(path.read_text("utf-8")))
        if hit:
            found.append(label)
    return found


def _named(spec: OperationSpec) -> list[tuple[str, str]]:
    """What a spec names that the code could spell: its operation, and its own plan section."""
    own = [("section", spec.section)] if spec.section != "proposals" else []
    return [("operation", spec.name), *own]


@pytest.mark.parametrize(
    ("kind", "name"),
    [named for spec in operations.all_specs() for named in _named(spec)],
    ids=str,
)
def test_an_operation_and_its_section_are_spelled_in_its_spec_and_few_other_files(
    kind: str, name: str
) -> None:
    (spec,) = [s for s in operations.all_specs() if (kind, name) in _named(s)]
    home = f"core/operations/{spec.name}.py"
    files = _spelled_in(name)
    assert home in files
    others = [f for f in files if f != home]
    assert len(others) <= ELSEWHERE[kind], f"{kind} {name} is in {others}: read it from its spec"


def test_the_hub_keys_no_table_by_an_endpoints_name_but_its_one_table() -> None:
    """The hub routes, answers and documents from one table: no other module spells a name."""
    endpoints = [e.name for e in all_endpoints()]
    keyed: dict[str, list[str]] = {name: [] for name in endpoints}
    for label, path in _files():
        if label.startswith("custodian_hub/") and path.suffix == ".py":
            for text in sorted(set(_strings(path)) & set(keyed)):
                keyed[text].append(label)
    table = ["custodian_hub/_endpoints.py"]
    # `"openapi": "3.1.0"` is the document's own field, which shares the endpoint's name.
    assert keyed.pop("openapi") == [*table, "custodian_hub/_openapi.py"]
    assert keyed == {name: table for name in endpoints if name != "openapi"}


def _table(heading: str) -> dict[str, list[str]]:
    """docs/operator.md's table whose header row starts with `heading`: operation -> cells."""
    lines = OPERATOR_DOC.read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    rows: dict[str, list[str]] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        rows[cells[0].strip("`")] = [cell.strip("`") for cell in cells[1:]]
    return rows


def test_the_operator_docs_tables_are_the_registry() -> None:
    limits = asdict(DEFAULT)
    sanctioned = _table("| operation | hub request | when it runs on its own |")
    assert sanctioned == {
        s.name: [s.request, s.when.format(**limits)]
        for s in operations.all_specs()
        if s.default == "sanctioned"
    }
    approvable = _table("| operation | hub request | params |")
    assert approvable == {
        s.name: [s.request, s.fields.replace("\n  ", " ").replace("`", "")]
        for s in operations.all_specs()
        if s.default == "approvable"
    }


def test_caps_and_budgets_name_policy_fields() -> None:
    names = {f.name for f in fields(Limits)}
    for spec in operations.all_specs():
        assert spec.cap in names, spec.name
        assert spec.budget is None or spec.budget in names, spec.name
        assert DEFAULT.cap(spec.name) == getattr(DEFAULT, spec.cap)
        if spec.default == "sanctioned":
            assert spec.budget is not None and spec.call is not None and spec.executes is not None
    assert DEFAULT.cap("not_an_operation") == DEFAULT.max_queued
    assert DEFAULT.budget("not_an_operation") is None
    # The prompt's caps are keyed by each spec's cap key, read through the registry.
    caps = {"max_queued", *(s.cap for s in operations.all_specs())}
    assert dict(DEFAULT.prompt_caps()) == {key: getattr(DEFAULT, key) for key in caps}


@pytest.mark.parametrize(
    "spec", [s for s in operations.all_specs() if s.default == "sanctioned"], ids=lambda s: s.name
)
def test_a_sanctioned_sections_example_has_its_params_fields_and_can_never_validate(
    spec: OperationSpec,
) -> None:
    entry = json.loads(spec.example)
    assert isinstance(entry.pop("reason"), str)
    assert set(entry) <= set(spec.params.model_fields)  # it cannot drift from params
    assert set(spec.params.model_fields) - set(entry) <= {"evidence", "task_id"}
    # A model that copies the example writes placeholders, never ids that could pass as real.
    with pytest.raises(ValidationError):
        spec.params.model_validate(entry)
    ids = [v for k, v in entry.items() if k.endswith("_id") or k == "evidence"]
    assert ids and all("<" in json.dumps(v) for v in ids)
    assert "{cap}" in spec.rules and spec.rules.format(cap=7, stale_after_days=3)


def test_a_person_reads_one_sentence_with_titles_and_the_change() -> None:
    lookup = Lookup(
        "website",
        titles={"web-t-05": "Set up redirects", "web-ws-1": "Relaunch", "web-flag-1": "Stuck?"},
        statuses={"web-t-05": "todo"},
    )
    cancel = {"task_id": "web-t-05", "status": "cancelled"}
    assert operations.describe("set_task_status", cancel, lookup) == (
        "Cancel task web-t-05 ‘Set up redirects’ (todo → cancelled) in website"
    )
    create = {"workstream_id": "web-ws-1", "title": "Add a sitemap"}
    assert operations.describe("create_task", create, lookup) == (
        "Create task ‘Add a sitemap’ in workstream web-ws-1 ‘Relaunch’ in website"
    )
    assert operations.describe("resolve_flag", {"flag_id": "web-flag-1"}, lookup) == (
        "Resolve flag web-flag-1 ‘Stuck?’ in website"
    )
    unseen = operations.describe("set_task_status", {"task_id": "t-9", "status": "done"}, Lookup())
    assert unseen == "Complete task t-9 (→ done)"
    canon = {"path": "domains/website.md", "content": "# Website\n\nTwo lines.\n"}
    assert operations.describe("write_canon", canon, lookup) == (
        "Write the canon file domains/website.md (3 lines)"
    )
    assert "does not know" in operations.describe("archive_everything", {}, lookup)
    for spec in operations.all_specs():  # every built-in operation has its sentences
        assert spec.describe is not None and spec.done is not None, spec.name


def test_a_person_reads_one_sentence_after_with_the_same_titles() -> None:
    lookup = Lookup(
        "website",
        titles={"web-t-05": "Set up redirects", "web-ws-1": "Relaunch", "dec-1": "Vendor?"},
        statuses={"web-t-05": "todo"},
    )
    cancel = {"task_id": "web-t-05", "status": "cancelled"}
    assert operations.done("set_task_status", cancel, lookup) == (
        "cancelled task web-t-05 ‘Set up redirects’ (todo → cancelled) in website"
    )
    create = {"workstream_id": "web-ws-1", "title": "Add a sitemap"}
    assert operations.done("create_task", create, lookup) == (
        "created task ‘Add a sitemap’ under workstream web-ws-1 ‘Relaunch’ in website"
    )
    resolve = {"decision_id": "dec-1", "resolution": "B"}
    assert operations.done("resolve_decision", resolve, lookup) == (
        "resolved decision dec-1 ‘Vendor?’ in website: “B”"
    )
    # An operation Custodian does not know, or params a person edited: still one sentence.
    assert operations.done("archive_everything", {"all": True}, lookup) == (
        "carried out archive_everything (all=True) in website"
    )
    assert operations.done("create_task", {"title": "x"}, Lookup()) == (
        "carried out create_task (title=x)"
    )


def test_register_adds_an_operation_for_its_context_only() -> None:
    base = operations.spec("resolve_flag")
    extra = OperationSpec(
        name="ring_bell",
        section="proposals",
        params=base.params,
        default="approvable",
        fields="{flag_id}",
        request="POST /bells",
        landed=lambda params, landing: None,
        describe=lambda params, lookup: "Ring the bell",
    )
    with operations.register(extra):
        assert operations.find("ring_bell") is extra
        assert "ring_bell" in operations.names("approvable")
        with pytest.raises(ValueError, match="already registered"), operations.register(extra):
            pass  # pragma: no cover
    assert operations.find("ring_bell") is None
    with pytest.raises(KeyError, match="known: add_progress_event, create_task"):
        operations.spec("ring_bell")


def test_a_sanctioned_spec_without_a_hub_call_is_refused() -> None:
    base = operations.spec("resolve_flag")
    with pytest.raises(ValueError, match=r"needs a hub call .* give it call, executes, rules"):
        OperationSpec(
            name="x",
            section="x",
            params=base.params,
            default="sanctioned",
            request="",
            landed=base.landed,
            describe=base.describe,
            example="{}",
        )
    with pytest.raises(ValueError, match="approvable operation needs its `fields` line"):
        OperationSpec(
            name="x",
            section="proposals",
            params=base.params,
            default="approvable",
            request="",
            landed=base.landed,
            describe=base.describe,
        )


def test_reconcile_never_guesses_about_an_operation_it_does_not_know() -> None:
    unknown = PendingWrite("r-1", 0, "archive_everything", {}, "k", "f" * 64, 1, dispatched=True)
    with pytest.raises(KeyError, match="not an operation Custodian knows"):
        landed_on_hub(unknown, website(), ())
