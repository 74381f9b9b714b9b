"""Session notes as HTML: markdown-it-py with raw HTML off, links and images made inert.

A note holds text from the model and the hub. Raw HTML is shown as text; a link becomes a span
that shows its text and its address, never an `<a href>`; an image becomes a line of text, so
nothing loads or navigates on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererProtocol
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

FRONT_MATTER = "---\n"


def _link_open(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return '<span class="inert-link">'


def _link_close(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    opener = next(t for t in reversed(tokens[:idx]) if t.type == "link_open")
    href = str(opener.attrs.get("href", ""))
    return f' <code class="href">&lt;{escape(href)}&gt;</code></span>'


def _image(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    src = str(token.attrs.get("src", ""))
    shown = f"[image: {escape(token.content)}] <code>&lt;{escape(src)}&gt;</code>"
    return f'<span class="inert-image">{shown}</span>'


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    return md


_MD = _parser()


def split_front_matter(text: str) -> tuple[str, str]:
    """(front matter, body) of a note; the front matter is empty when the note has none."""
    if not text.startswith(FRONT_MATTER):
        return "", text
    end = text.find("\n---\n", len(FRONT_MATTER) - 1)
    if end == -1:
        return "", text
    return text[len(FRONT_MATTER) : end + 1], text[end + len("\n---\n") :]


def render_markdown(text: str) -> str:
    """Markdown to HTML in which every character from the text is escaped and nothing is live."""
    html: str = _MD.render(text)
    return html
