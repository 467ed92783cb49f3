"""Answers as markdown for `arena view`: CommonMark with tables and strikethrough, no raw HTML.

`markdown-it-py` with `html` off escapes every tag an answer writes (`<script>`
shows as text), and its link check drops `javascript:`, `vbscript:`, `file:`
and `data:` targets (such a link stays plain text). Images are not rendered
(the viewer loads nothing from elsewhere): `![alt](url)` becomes `!` and a
link to the image. The
page then copies the result into the document through an allow-list of
elements and attributes (static/app.js), so even this HTML is not trusted.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt

__all__ = ["render_markdown"]


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return (
        MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
        .enable(["table", "strikethrough"])
        .disable("image")
    )


def render_markdown(text: str) -> str:
    """An answer's text as HTML (see the module docstring)."""
    html: str = _parser().render(text)
    return html
