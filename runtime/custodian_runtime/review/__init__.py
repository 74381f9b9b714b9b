"""`custodian review`: a local web page to read runs and notes and decide approvals.

The server is the standard library's `ThreadingHTTPServer`; pages are jinja2 templates with
autoescape on; notes are Markdown rendered by markdown-it-py with raw HTML off and links inert.
Approve and reject call the same functions as `custodian approvals`.
"""

from custodian_runtime.review.server import review_command

__all__ = ["review_command"]
