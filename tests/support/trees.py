"""Made-up trees of files, written in a test's tmp_path for the checks of the code's shape."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path


def write_tree(root: Path, files: Mapping[str, str] | Iterable[str]) -> Path:
    """Each file of `files` under `root` (a path and its text; a path alone is an empty file),
    with the folders it needs; `root`."""
    texts = files if isinstance(files, Mapping) else dict.fromkeys(files, "")
    for name, text in texts.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root
