"""The run mark on Custodian's writes reads back to what the model proposed."""

from __future__ import annotations

from custodian_runtime.core.view import same_text, with_run_mark, without_run_mark


def test_a_marked_text_reads_back() -> None:
    marked = with_run_mark("Deployed and verified.", "r20261130T080000Z-abc123")
    assert marked.endswith(" [custodian run r20261130T080000Z-abc123]")
    assert without_run_mark(marked) == "Deployed and verified."
    assert same_text(marked, "Deployed and verified.")
    assert not same_text(marked, "Deployed.")


def test_a_long_text_is_cut_to_fit_and_still_matches() -> None:
    long = "x" * 2000
    marked = with_run_mark(long, "r1")
    assert len(marked) == 2000
    assert same_text(marked, long)
    assert not same_text(marked, "y" * 2000)


def test_text_a_person_wrote_is_not_ours() -> None:
    assert without_run_mark("fixed it [custodian run ]") == "fixed it [custodian run ]"
    assert not same_text("short note", "short note, longer")
