"""What people and the model read: the prompt and the session note, from jinja2 templates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.render.note import NoteAction, SessionNote, render_note
    from custodian_runtime.render.prompt import RenderedPrompt, render_prompt

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
