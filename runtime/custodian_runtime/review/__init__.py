"""`custodian review`: a local web page to read runs and notes and decide approvals.

The server is the standard library's `ThreadingHTTPServer`; pages are jinja2 templates with
autoescape on; notes are Markdown rendered by markdown-it-py with raw HTML off and links inert.
Approve and reject call the same functions as `custodian approvals`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.review.server import review_command

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
