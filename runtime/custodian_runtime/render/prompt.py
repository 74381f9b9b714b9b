"""Render the prompt: jinja2 templates filled from core/context/prompt.py's view, within budget.

The system prompt (role, constitution, domain guidance, rules, plan schema) does not depend on the
view, nor on anything that changes from run to run (the data markers' code is in the user
prompt): every run of a domain sends the same one, so a server's prefix cache can reuse it. The
user prompt is rendered twice: once with no items, to measure the fixed part, and once with the
items `build_view` chose for the room that is left.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, TextIO

import jinja2

from custodian_runtime.core import operations
from custodian_runtime.core.canon.sections import CanonSection
from custodian_runtime.core.context.choose import Fitted, fit, share
from custodian_runtime.core.context.neutralize import safe_domain
from custodian_runtime.core.context.prompt import (
    PromptInputs,
    PromptView,
    build_view,
    estimate_tokens,
)
from custodian_runtime.errors import ConfigError

SYSTEM_TEMPLATE = "system.md.j2"
USER_TEMPLATE = "prompt.md.j2"


@dataclass(frozen=True)
class RenderedPrompt:
    """The two prompt texts, their estimated size, and what was left out per category."""

    system: str
    user: str
    estimated_tokens: int
    omitted: Mapping[str, int]
    canon: tuple[CanonSection, ...] = ()  # the retrieved sections shown, in canon order


@cache
def environment() -> jinja2.Environment:
    """The template environment: package templates, strict about undefined names, no escaping."""
    return make_environment(jinja2.PackageLoader("custodian_runtime.render", "templates"))


def make_environment(loader: jinja2.BaseLoader) -> jinja2.Environment:
    """An environment configured as the prompt templates expect, over any loader."""
    return jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # the output is Markdown for a model, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_prompt(inputs: PromptInputs, env: jinja2.Environment | None = None) -> RenderedPrompt:
    """Render the system and user prompts for one run, keeping the estimate within the budget."""
    env = env or environment()
    system = _render(env, SYSTEM_TEMPLATE, _system_context(inputs))
    # With no room, every item is left out: the frame then holds the longest "left out" text.
    frame = render_user(build_view(inputs, inputs.token_budget), env)
    fixed = estimate_tokens(system) + estimate_tokens(frame)
    if fixed > inputs.token_budget:
        raise ConfigError(
            f"the fixed part of the prompt needs about {fixed} tokens (constitution, domain "
            f"guidance, pinned canon files, last note, overview), more than the token budget of "
            f"{inputs.token_budget}; raise CUSTODIAN_TOKEN_BUDGET or shorten the canon (a "
            "canon file that is not pinned is shown only in the sections that bear on a run)",
            setting="CUSTODIAN_TOKEN_BUDGET",
        )
    canon = _canon(inputs, fixed)
    if canon is not None and canon.shown:
        # The sections and their longer sentence, bounded above: an estimate of a whole is
        # never more than the sum of its parts' (core/context/tokens.py).
        fixed += canon.tokens + _CANON_FRAME
    view = build_view(inputs, fixed, canon)
    user = render_user(view, env)
    total = estimate_tokens(system) + estimate_tokens(user)
    while total > inputs.token_budget and view.tokens > 0:
        # The items were costed one by one; should the rendered whole come out above the budget
        # anyway, give the items that much less room and choose again.
        fixed += total - inputs.token_budget
        view = build_view(inputs, fixed, canon)
        user = render_user(view, env)
        total = estimate_tokens(system) + estimate_tokens(user)
    return RenderedPrompt(
        system=system,
        user=user,
        estimated_tokens=total,
        omitted=view.omitted,
        canon=canon.shown if canon else (),
    )


# Kept free of the canon's share when fitting it: the sentence that introduces the sections.
_CANON_FRAME = 80


def _canon(inputs: PromptInputs, fixed: int) -> Fitted | None:
    """The retrieved sections that fit in the canon's share, and in what the fixed part leaves."""
    if not inputs.canon_sections:
        return None
    room = min(
        share(inputs.token_budget, inputs.canon_share_percent),
        inputs.token_budget - fixed - _CANON_FRAME,
    )
    return fit(inputs.canon_ranked, max(room, 0), inputs.canon_sections)


def render_user(view: PromptView, env: jinja2.Environment | None = None) -> str:
    """The user prompt for an already built view."""
    return _render(env or environment(), USER_TEMPLATE, {"view": view})


def _system_context(inputs: PromptInputs) -> dict[str, Any]:
    return {
        "domain": safe_domain(inputs.domain),
        "constitution": inputs.constitution.strip(),
        "domain_guidance": (inputs.domain_guidance or "").strip() or None,
        "pinned": [(f.path, f.text.strip()) for f in inputs.canon_pinned],
        "caps": dict(inputs.caps),
        "sanctioned": _sanctioned(inputs),
        "proposals": _proposals(inputs),
        "unavailable": sorted(inputs.unavailable.items()),
        "answer_form": inputs.answer_form,
        "form": inputs.form,
    }


def _sanctioned(inputs: PromptInputs) -> list[tuple[str, str, str]]:
    """(section, rules, example entry) of each write the model may make on its own, from the
    registry, with the run's caps filled in."""
    sanctioned = [s for s in operations.all_specs() if s.default == "sanctioned"]
    for spec in sanctioned:
        if spec.cap not in inputs.caps:
            raise ConfigError(
                f"the prompt's caps lack {spec.cap}, the per-run cap of {spec.name}; "
                "build the caps with Limits.prompt_caps()",
                setting="caps",
            )
    return [
        (
            s.section,
            s.rules.format(cap=inputs.caps[s.cap], stale_after_days=inputs.stale_after_days),
            s.example,
        )
        for s in sanctioned
    ]


def _proposals(inputs: PromptInputs) -> list[tuple[str, str]]:
    """(name, params line) of each operation the model may propose for a person, from the
    registry; one this run cannot perform is left out (the prompt says why instead)."""
    domain = safe_domain(inputs.domain)
    return [
        (s.name, s.fields.replace("{domain}", domain))
        for s in operations.all_specs()
        if s.default == "approvable" and s.name not in inputs.unavailable
    ]


def _render(env: jinja2.Environment, name: str, context: Mapping[str, Any]) -> str:
    try:
        return env.get_template(name).render(**context)
    except jinja2.UndefinedError as exc:
        raise ConfigError(
            f"the prompt template {name} uses a name the renderer does not provide ({exc}); "
            "fix the template or pass the value",
            setting="templates",
        ) from exc


def show_prompt(rendered: RenderedPrompt, stream: TextIO) -> None:
    """Print the rendered prompt (for --show-prompt)."""
    stream.write("===== system prompt =====\n" + rendered.system.rstrip() + "\n")
    stream.write("===== user prompt =====\n" + rendered.user.rstrip() + "\n")
    stream.write(f"===== about {rendered.estimated_tokens} tokens =====\n")
    stream.flush()
