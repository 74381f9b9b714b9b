"""Each kind of journal record is one model, read and built only in core/journal/kinds.py.

The rule: outside `core/journal/kinds.py` (the models) and `core/journal/records.py` (the record
and its hash), no runtime module reads an attribute named `data` except to call it (`x.data()`):
so `record.data["x"]`, `record.data.get("x")`, `data = record.data; data["x"]` and
`{**record.data}` all fail here, and a reader has to go through `decode` and attributes.
"""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

import pytest

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.journal import kinds

PACKAGE = Path(kinds.__file__).resolve().parents[2]
ALLOWED = {"core/journal/kinds.py", "core/journal/records.py"}
AT = datetime(2026, 1, 1, tzinfo=UTC)


def data_reads(source: str) -> list[int]:
    """Lines that read an attribute `data` other than by calling it."""
    tree = ast.parse(source)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "data"
        and isinstance(node.ctx, ast.Load)
        and id(node) not in called
    )


def test_no_module_but_the_records_module_reads_a_records_data() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in ALLOWED:
            continue
        found += [f"{relative}:{line}" for line in data_reads(path.read_text("utf-8"))]
    assert found == [], (
        "read a journal record through custodian_runtime.core.journal.kinds (decode, read_as, "
        f"of_kind) and its attributes, not by key: {found}"
    )


@pytest.mark.parametrize(
    "source",
    [
        "x = record.data['hub_id']",
        "x = rec.data.get('index')",
        "data = record.data\nx = data['index']",
        "x = {**record.data, 'summary': 1}",
        "x = dict(r.data)",
    ],
)
def test_the_rule_catches_each_way_of_reading_by_key(source: str) -> None:
    assert data_reads(source) == [1]


def literal_appends(source: str) -> list[int]:
    """Lines that journal a record by a literal kind and a dict: `x.append("receipt", {...})`."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "append"
        and len(node.args) == 2
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in core_journal.KINDS
    )


# The quick skip writes its three records without pydantic; tests/run/test_quick_skip.py pins their
# data to the typed entries' (`encode(RunStarted(...))`, ...) byte for byte.
UNTYPED_WRITERS = frozenset({"run/_quick.py"})


def test_writers_journal_typed_entries_not_dicts() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in UNTYPED_WRITERS:
            continue
        found += [f"{relative}:{line}" for line in literal_appends(path.read_text("utf-8"))]
    assert found == [], f"build the kind's model and pass it to journal.write(entry): {found}"
    assert literal_appends('journal.append("receipt", {"index": 0})') == [1]


def test_calling_a_data_method_is_not_a_read() -> None:
    assert data_reads("out = sink.data()\nerr = buffer.data().decode()") == []


def test_every_kind_has_one_model() -> None:
    assert set(kinds.MODELS) == set(core_journal.KINDS)
    assert all(kind == model.KIND for kind, model in kinds.MODELS.items())


def test_a_typed_entry_journals_the_same_bytes_as_the_dict_it_replaces() -> None:
    data = {"index": 0, "idempotency_key": "k-1"}
    kind, encoded = kinds.encode(kinds.Dispatched(index=0, idempotency_key="k-1"))
    assert (kind, encoded) == ("dispatched", data)
    typed = core_journal.make_record(None, "r1", "website", kind, AT, encoded)
    plain = core_journal.make_record(None, "r1", "website", "dispatched", AT, data)
    assert typed.line() == plain.line()


def test_encode_keeps_only_the_fields_a_writer_set_even_when_none() -> None:
    entry = kinds.Failed(index=1, error="refused", status=None, code=None)
    assert kinds.encode(entry) == (
        "failed",
        {"index": 1, "error": "refused", "status": None, "code": None},
    )


def test_an_older_record_without_newer_fields_reads_with_defaults() -> None:
    record = core_journal.make_record(None, "r1", "website", "note_written", AT, {"path": "n.md"})
    note = kinds.read_as(record, kinds.NoteWritten)
    assert (note.path, note.prose, note.status, note.problem) == ("n.md", True, None, None)


def test_data_that_does_not_fit_its_kind_names_the_record() -> None:
    record = core_journal.make_record(None, "r1", "website", "finished", AT, {"exit_code": "zero"})
    with pytest.raises(kinds.RecordDataError, match=r"website:1 \(finished\).*exit_code"):
        kinds.decode(record)


def test_reading_a_record_as_another_kind_is_refused() -> None:
    record = core_journal.make_record(None, "r1", "website", "queued", AT, {"index": 0})
    with pytest.raises(kinds.RecordDataError, match="website:1 is 'queued', not 'receipt'"):
        kinds.read_as(record, kinds.Receipt)


def test_a_write_step_names_the_item_of_the_run_it_reconciles() -> None:
    own = core_journal.make_record(None, "r2", "website", "receipt", AT, {"index": 3})
    later = core_journal.make_record(
        own, "r2", "website", "failed", AT, {"index": 3, "reconciles": "r1"}
    )
    assert kinds.item_of(own) == ("r2", 3)
    assert kinds.item_of(later) == ("r1", 3)
    assert kinds.earlier_run(later) == "r1"
