"""A canon file read as the prompt uses it: its front matter, its role, and its `##` sections.

The constitution (`constitution.md`) binds every run and the domain's guidance
(`domains/<domain>.md`) binds that domain's: both are always shown whole. Every other Markdown
file of the canon is library: shown whole when its front matter pins it, else split into sections
at its `##` headings, from which a run retrieves those that bear on what it observes. Front
matter may scope a file to domains by glob. Everything here is pure: the shell reads the files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from custodian_runtime.core.digest import canonical_json, sha256_hex
from custodian_runtime.errors import ConfigError

__all__ = [
    "CONSTITUTION",
    "CanonFile",
    "CanonSection",
    "SectionKey",
    "canon_key",
    "entry",
    "guidance_path",
    "in_scope",
    "is_library",
    "parse_file",
    "pinned_for",
    "split",
    "title",
]

CONSTITUTION = "constitution.md"
SETTING = "CUSTODIAN_CANON_DIR"
_FRONT = "---"
_KEYS = ("pin", "domains")
_TRUE, _FALSE = ("true", "yes"), ("false", "no")
_COMMENT = re.compile(r"(^|\s)#.*$")  # as in YAML: `#` at the start or after white space
_GLOB = re.compile(r"[A-Za-z0-9_.*?\[\]!-]{1,100}")
_HEADING = re.compile(r"^## +(?P<text>\S.*?)\s*#*\s*$")
SectionKey = tuple[str, int]  # (file, place in the file)
_TITLE = re.compile(r"^# +(?P<text>\S.*?)\s*#*\s*$")


@dataclass(frozen=True)
class CanonFile:
    """One Markdown file of the canon: its path under the canon directory and its text without
    front matter; `domains` holds the globs it is scoped to (None: every domain)."""

    path: str
    text: str
    pin: bool = False
    domains: tuple[str, ...] | None = None

    def applies_to(self, domain: str) -> bool:
        """Whether a run of `domain` may be shown this file."""
        return self.domains is None or any(fnmatchcase(domain, g) for g in self.domains)


@dataclass(frozen=True)
class CanonSection:
    """One section of a library file: the text from its `##` heading to the next (the text
    before the first is a section too, headed by the file's title); `sha256` names its text."""

    file: str
    heading: str
    text: str
    sha256: str
    order: int  # its place in its file, from 0

    @property
    def key(self) -> SectionKey:
        """How the index names the section: its file and its place there."""
        return (self.file, self.order)


def guidance_path(domain: str) -> str:
    """Where the domain's own guidance lives in the canon."""
    return f"domains/{domain}.md"


def is_library(path: str) -> bool:
    """Whether the file at `path` is library, not the constitution or a domain's guidance."""
    return path != CONSTITUTION and re.fullmatch(r"domains/[^/]+\.md", path) is None


def parse_file(path: str, raw: str) -> CanonFile:
    """The file with its front matter read (ConfigError naming the line when it is wrong)."""
    if not raw.startswith(_FRONT + "\n"):
        return CanonFile(path, raw)
    lines = raw.split("\n")
    try:
        end = lines.index(_FRONT, 1)
    except ValueError:
        raise _error(path, 1, "the front matter opened by `---` is never closed by `---`") from None
    pin, domains = _front(path, lines[1:end])
    return CanonFile(path, "\n".join(lines[end + 1 :]).lstrip("\n"), pin, domains)


def _front(path: str, lines: list[str]) -> tuple[bool, tuple[str, ...] | None]:
    values: dict[str, str] = {}
    block: list[str] = []  # `domains:` followed by `- glob` lines
    current = ""  # the key the lines below belong to
    for number, line in enumerate(lines, start=2):
        stripped = _COMMENT.sub("", line).strip()
        if not stripped:
            continue
        if line[:1].isspace() or stripped.startswith("- "):  # the value of the key above
            if current == "domains" and not values["domains"] and stripped.startswith("- "):
                block.append(stripped[2:])
            elif current in _KEYS:
                raise _error(path, number, f"{stripped!r} does not continue `{current}:`")
            continue
        name, colon, value = stripped.partition(":")
        current = name.strip()
        if not colon or _misspelled(current) or current in values:
            raise _error(path, number, f"{stripped!r} is not one of `pin: true`, `domains: [...]`")
        if current in _KEYS:
            values[current] = value.strip()
    domains = values.get("domains")
    return _pin(path, values.get("pin", "false")), _domains(path, block or domains)


def _misspelled(key: str) -> bool:
    """A key that is not ours but reads like one (`pinned`, `domain`): refused, not passed over.
    Any other key (`title`, `status`, `date`: another tool's front matter) is left as it is."""
    return key not in _KEYS and any(
        key.lower().startswith(k[:3]) or k.startswith(key.lower()) for k in _KEYS
    )


def _pin(path: str, value: str | list[str]) -> bool:
    if isinstance(value, str) and value.lower() in _TRUE + _FALSE:
        return value.lower() in _TRUE
    raise _error(path, None, f"`pin: {value}` is neither true nor false")


def _domains(path: str, value: str | list[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        inner = value[1:-1] if value.startswith("[") and value.endswith("]") else value
        value = [part for part in inner.split(",") if part.strip()]
    globs = tuple(part.strip().strip("\"'") for part in value)
    bad = [g for g in globs if not _GLOB.fullmatch(g)]
    if bad or not globs:
        raise _error(
            path,
            None,
            f"`domains` needs names or globs such as `[platform, web-*]`, not {bad or value!r}",
        )
    return globs


def _error(path: str, line: int | None, what: str) -> ConfigError:
    where = f"canon file {path}" + (f", line {line}" if line else "")
    return ConfigError(
        f"{where}: {what}; Custodian reads `pin: true` and `domains: [glob, ...]` from the "
        "front matter",
        setting=SETTING,
    )


def split(file: CanonFile) -> tuple[CanonSection, ...]:
    """The file's sections at its `##` headings (outside fenced code), empty ones left out."""
    chunks: list[tuple[str, list[str]]] = [(title(file), [])]
    fenced = False
    for line in file.text.split("\n"):
        if line[:3] in ("```", "~~~"):
            fenced = not fenced
        opening = _HEADING.match(line) if line[:3] == "## " and not fenced else None
        if opening is not None:
            chunks.append((opening["text"], []))
        chunks[-1][1].append(line)
    found: list[CanonSection] = []
    for heading, lines in chunks:
        text = "\n".join(lines).strip()
        if text and text != f"# {heading}":
            found.append(CanonSection(file.path, heading, text, sha256_hex(text), len(found)))
    return tuple(found)


def title(file: CanonFile) -> str:
    """The file's `#` title, if it opens with one, else its path."""
    for line in file.text.split("\n"):
        match = _TITLE.match(line)
        if match is not None:
            return match["text"]
        if line.strip():
            break
    return file.path


def pinned_for(files: Iterable[CanonFile], domain: str) -> tuple[CanonFile, ...]:
    """The library files pinned for `domain`, by path."""
    return tuple(sorted((f for f in files if _library(f, domain) and f.pin), key=lambda f: f.path))


def in_scope(file: CanonFile, domain: str) -> bool:
    """Whether a run of `domain` may retrieve the file's sections: library, in its scope, and
    not pinned (a pinned file is shown whole)."""
    return is_library(file.path) and file.applies_to(domain) and not file.pin


def _library(file: CanonFile, domain: str) -> bool:
    return is_library(file.path) and file.applies_to(domain)


def canon_key(files: Sequence[tuple[str, str]]) -> str:
    """One digest of (path, content digest) pairs: equal canons, equal keys, whatever the order."""
    return sha256_hex(canonical_json(sorted([list(pair) for pair in files])))


def entry(section: CanonSection) -> str:
    """A retrieved section as the prompt shows it, its file named first."""
    return f"From `{section.file}`:\n\n{section.text}\n"
