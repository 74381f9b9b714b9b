"""What the wheel ships besides code: the default canon, the eval scenarios and the demo answers.

In the repository, `_data/` holds links to `canon/`, `demo/` and `evals/`, which stay the one
copy; building the wheel copies the files they point at into the package.
"""

from __future__ import annotations

import re
import shlex
import shutil
from functools import cache
from pathlib import Path

from custodian_runtime.errors import ConfigError

DATA = Path(__file__).resolve().parent / "_data"
PACKAGED = "packaged"
UNKNOWN_REVISION = "unknown"
REVISION_RE = re.compile(r"^[0-9a-f]{7,40}$")


@cache
def revision() -> str:
    """The git commit the wheel was built from (`_data/REVISION`), else "unknown".

    Written at build time (the Dockerfile's `--build-arg REVISION`); git is never run here, so a
    pod without git or a checkout answers the same every time.
    """
    try:
        text = (DATA / "REVISION").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return UNKNOWN_REVISION
    return text if REVISION_RE.match(text) else UNKNOWN_REVISION


def default_canon() -> Path:
    """The canon shipped in the package: read it, never write it (`custodian init` copies it)."""
    return DATA / "canon"


def default_scenarios(cwd: Path) -> Path:
    """./evals/scenarios when it exists (a checkout), else the scenarios shipped in the package."""
    return local_or_packaged(cwd, "evals/scenarios", DATA / "evals" / "scenarios")[0]


def demo_answers() -> tuple[Path, ...]:
    """The recorded model answers of the demo (`--llm file:PATH`), one per demo domain."""
    return tuple(sorted((DATA / "demo").glob("*-answer.md")))


def local_or_packaged(cwd: Path, local: str, packaged: Path) -> tuple[Path, str]:
    """`cwd/local` if it exists (a checkout, an `init` copy), else the packaged one; and which."""
    here = cwd / local
    # Even a file or a broken link there is used, and checked: the packaged copy never stands
    # in for a local one that is broken.
    if here.exists() or here.is_symlink():
        return here.resolve(), "default"
    return packaged, PACKAGED


def init_canon(target: Path) -> tuple[Path, ...]:
    """Copy the packaged canon into `target` (new or empty); return the files written."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        what = "a file" if not target.is_dir() else "a directory that is not empty"
        raise ConfigError(
            f"{target} is {what}; init never overwrites: name a new or empty directory",
            setting="DIR",
        )
    source = default_canon()
    try:
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=_not_canon)
    except OSError as exc:
        raise ConfigError(
            f"cannot copy the canon to {target} ({exc}): name a directory you can write",
            setting="DIR",
        ) from None
    return tuple(sorted(p for p in target.rglob("*") if p.is_file()))


def init_text(target: Path, written: tuple[Path, ...]) -> str:
    """What `custodian init` prints: the files, how to use the copy, and a demo run with it."""
    files = ", ".join(str(p.relative_to(target)) for p in written)
    canon = shlex.quote(str(target))
    lines = [
        f"copied the default canon to {target}: {files}",
        f"edit it, then pass --canon {canon} or set CUSTODIAN_CANON_DIR "
        "(./canon is read by default when it exists)",
    ]
    for answer in demo_answers():
        domain = answer.name.removesuffix("-answer.md")
        lines.append(
            f"demo: custodian run --domain {domain} --hub embedded --canon {canon} "
            f"--llm {shlex.quote(f'file:{answer}')}"
        )
    return "\n".join(lines)


def _not_canon(directory: str, names: list[str]) -> list[str]:
    """Only Markdown files and folders are canon; editor and cache files are left behind."""
    keep = [n for n in names if n.endswith(".md") or Path(directory, n).is_dir()]
    return [n for n in names if n.startswith(".") or n not in keep]
