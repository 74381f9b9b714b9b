"""What people and the model read: the prompt and the session note, from jinja2 templates."""

from __future__ import annotations

from custodian_runtime.render.note import NoteAction, SessionNote, render_note
from custodian_runtime.render.prompt import RenderedPrompt, render_prompt

__all__ = ["NoteAction", "RenderedPrompt", "SessionNote", "render_note", "render_prompt"]
