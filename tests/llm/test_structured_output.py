"""Structured output: the answer's JSON schema from the plan's models, sent as each provider's
documented field, a bare JSON answer read as the plan, and how the model is asked (settings)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import respx

from custodian_hub import ReferenceHub
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.answer import (
    PROSE_CHARS,
    TEXT_CHARS,
    ObservedIds,
    answer_schema,
)
from custodian_runtime.core.plan.extract import extract_plan
from custodian_runtime.errors import ConfigError, PlanRejected
from custodian_runtime.llm._openai_shape import without_key
from custodian_runtime.llm.anthropic import AnthropicModel
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.gemini import GeminiModel
from custodian_runtime.llm.ollama import OllamaModel
from custodian_runtime.llm.openai import OpenAIModel
from custodian_runtime.llm.openai_compatible import OpenAICompatibleModel
from custodian_runtime.settings import load_settings
from support.authority import website
from support.fakes.clock import FakeSleep
from support.fakes.providers import FakeProvider, SchemaAnswer
from support.runs import CANON, run_cli

IDS = ObservedIds.of(website())
SCHEMA = answer_schema(IDS)
PROMPT = Prompt(system="You are the custodian.", user="Observe and plan.", answer_schema=SCHEMA)
ANSWER = {
    "prose": "t-prog moved on; recorded it.",
    "observations": ["ev-t-prog is a milestone on t-prog."],
    "progress_events": [
        {"workstream_id": "ws-web", "task_id": "t-prog", "event_type": "note",
         "rests_on": ["t-prog"],
         "summary": "ev-t-prog: work on t-prog moved on.", "reason": None}
    ],
    "tasks_to_update": [
        {"task_id": "t-prog", "status": "done", "evidence": ["ev-t-prog"], "reason": "milestone"}
    ],
    "tasks_to_flag": [],
    "proposals": [
        {"operation": "resolve_flag", "params": {"flag_id": "f-1"}, "rationale": "unblocked"}
    ],
}  # fmt: skip


def _objects(node: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


def test_the_schema_is_strict_and_names_only_observed_ids() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert list(SCHEMA["properties"])[:2] == ["prose", "observations"]
    for node in _objects(SCHEMA):
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    flag = SCHEMA["properties"]["tasks_to_flag"]["items"]["properties"]
    assert flag["task_id"]["enum"] == ["t-todo", "t-prog", "t-block", "t-done", "t-docs"]
    update = SCHEMA["properties"]["tasks_to_update"]["items"]["properties"]
    assert update["status"]["enum"] == ["done", "in_progress"]
    assert update["evidence"]["anyOf"][0]["items"]["enum"] == [
        "ev-t-todo",
        "ev-t-prog",
        "ev-t-done",
    ]
    jsonschema.validate(ANSWER, SCHEMA)
    invented = json.loads(json.dumps(ANSWER))
    invented["tasks_to_update"][0]["evidence"] = ["E-31"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(invented, SCHEMA)


def test_each_list_is_bounded_so_a_repeating_model_stops_early() -> None:
    # A small model held to the schema once wrote one observation until the output limit cut
    # the answer off; a bound on each list closes the list instead.
    assert SCHEMA["properties"]["observations"]["maxItems"] == 20
    caps = {"progress_events": 20, "tasks_to_update": 20, "tasks_to_flag": 10, "proposals": 10}
    for section, cap in caps.items():
        assert SCHEMA["properties"][section]["maxItems"] == cap, section
    tight = answer_schema(IDS, limits=Limits(max_flags=2, max_queued=3))
    assert tight["properties"]["tasks_to_flag"]["maxItems"] == 2
    assert tight["properties"]["proposals"]["maxItems"] == 3
    repeating = json.loads(json.dumps(ANSWER))
    repeating["observations"] = ["The launch date is March 2."] * 21
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(repeating, SCHEMA)


def test_what_an_event_rests_on_is_required_and_limited_to_observed_events_and_tasks() -> None:
    event = SCHEMA["properties"]["progress_events"]["items"]["properties"]
    assert event["rests_on"]["type"] == "array"  # required, never null
    assert event["rests_on"]["items"]["enum"] == [
        "ev-t-todo", "ev-t-prog", "ev-t-done", "t-todo", "t-prog", "t-block", "t-done", "t-docs",
    ]  # fmt: skip
    for rests in (["ws-web"], ["E-31"], None):
        invented = json.loads(json.dumps(ANSWER))
        invented["progress_events"][0]["rests_on"] = rests
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(invented, SCHEMA)


def test_too_many_ids_are_not_listed_and_an_unavailable_operation_is_not_offered() -> None:
    many = ObservedIds({"task_id": tuple(f"t-{i}" for i in range(400))})
    schema = answer_schema(many, unavailable=("write_canon",))
    flag = schema["properties"]["tasks_to_flag"]["items"]["properties"]
    assert "enum" not in flag["task_id"]
    offered = schema["properties"]["proposals"]["items"]["anyOf"]
    names = [o["properties"]["operation"]["enum"][0] for o in offered]
    assert "write_canon" not in names and "set_task_status" in names


def test_a_bare_answer_is_the_plan_when_it_was_asked_for() -> None:
    text = json.dumps(ANSWER)
    plan = extract_plan(text, bare=True)
    assert plan.prose == "t-prog moved on; recorded it."
    ops = [i.operation for i in plan.items]
    assert ops == ["add_progress_event", "update_task_status", "resolve_flag"]
    assert all(i.error is None for i in plan.items)
    assert "reason" not in plan.items[0].params and "task_id" in plan.items[0].params
    with pytest.raises(PlanRejected, match="no ```json block"):
        extract_plan(text)  # not asked for: a fence, as ever
    fenced = f"Prose.\n\n```json\n{json.dumps({'observations': []})}\n```\n"
    assert extract_plan(fenced, bare=True).prose == "Prose."  # a fenced answer still reads
    with pytest.raises(PlanRejected, match="'prose' field must be a string"):
        extract_plan(json.dumps({**ANSWER, "prose": ["x"]}), bare=True)


def _chat(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content,
                     "refusal": None}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }  # fmt: skip


CHAT_ADAPTERS = [
    ("https://api.openai.com/v1/chat/completions", OpenAIModel,
     {"OPENAI_API_KEY": "sk-test"}, None),
    ("http://127.0.0.1:8080/v1/chat/completions", OpenAICompatibleModel, {},
     "http://127.0.0.1:8080/v1"),
    ("http://localhost:11434/v1/chat/completions", OllamaModel, {}, None),
]  # fmt: skip
# OpenAI's strict subset refuses a string's maxLength; a local server's grammar holds it.
LOCAL = (OpenAICompatibleModel, OllamaModel)


@pytest.mark.parametrize(("url", "cls", "env", "base"), CHAT_ADAPTERS)
def test_chat_completions_send_response_format_json_schema(
    respx_mock: respx.MockRouter, url: str, cls: Any, env: dict[str, str], base: str | None
) -> None:
    route = respx_mock.post(url).mock(return_value=httpx.Response(200, json=_chat("{}")))
    config = ModelConfig(spec="x", env=env, base_url=base, temperature=0.2)
    completion = cls(config, sleep=FakeSleep()).complete(PROMPT)
    assert completion.structured and completion.text == "{}"
    sent = json.loads(route.calls.last.request.content)
    assert sent["temperature"] == 0.2
    schema = SCHEMA if cls in LOCAL else without_key(SCHEMA, "maxLength")
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "action_plan", "strict": True, "schema": schema},
    }
    assert ("maxLength" in json.dumps(sent)) == (cls in LOCAL)


def test_a_free_text_is_bounded_so_a_small_model_cannot_loop_in_it() -> None:
    props = SCHEMA["properties"]
    assert props["prose"]["maxLength"] == PROSE_CHARS
    assert props["observations"]["items"]["maxLength"] == TEXT_CHARS
    flag = props["tasks_to_flag"]["items"]["properties"]
    assert flag["note"]["maxLength"] == TEXT_CHARS
    assert "maxLength" not in flag["task_id"]  # an id is an enum of the observed ones
    # Under llama.cpp's limit on a grammar's repetitions (about 2000).
    found = re.findall(r'"maxLength": (\d+)', json.dumps(SCHEMA))
    assert found and max(int(n) for n in found) < 2000
    # A property named like the keyword stays when the keyword goes.
    named = {"properties": {"maxLength": {"type": "string", "maxLength": 3}}}
    assert without_key(named, "maxLength") == {"properties": {"maxLength": {"type": "string"}}}


def test_chat_completions_without_a_schema_or_temperature_send_neither(
    respx_mock: respx.MockRouter,
) -> None:
    url = "http://127.0.0.1:8080/v1/chat/completions"
    route = respx_mock.post(url).mock(return_value=httpx.Response(200, json=_chat("text")))
    config = ModelConfig(spec="x", base_url="http://127.0.0.1:8080/v1", temperature=None)
    prompt = replace(PROMPT, answer_schema=None)
    completion = OpenAICompatibleModel(config, sleep=FakeSleep()).complete(prompt)
    assert not completion.structured
    sent = json.loads(route.calls.last.request.content)
    assert "response_format" not in sent and "temperature" not in sent


def test_anthropic_asks_for_the_plan_tool_and_reads_its_input(respx_mock: respx.MockRouter) -> None:
    reply = {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "action_plan",
                     "input": ANSWER}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 50},
    }  # fmt: skip
    route = respx_mock.post("https://api.anthropic.com/v1/messages").mock(
        return_value=httpx.Response(200, json=reply)
    )
    config = ModelConfig(spec="anthropic", env={"ANTHROPIC_API_KEY": "sk-ant-test"})
    completion = AnthropicModel(config, sleep=FakeSleep()).complete(PROMPT)
    assert completion.structured and json.loads(completion.text) == ANSWER
    sent = json.loads(route.calls.last.request.content)
    assert sent["tools"] == [
        {"name": "action_plan", "description": "Record this run's action plan.",
         "input_schema": SCHEMA}
    ]  # fmt: skip
    assert sent["tool_choice"] == {"type": "tool", "name": "action_plan"}
    assert sent["temperature"] == 0.0
    assert extract_plan(completion.text, bare=True).prose == ANSWER["prose"]


def test_gemini_sends_response_mime_type_and_schema(respx_mock: respx.MockRouter) -> None:
    reply = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": json.dumps(ANSWER)}]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
        "modelVersion": "gemini-2.5-flash", "responseId": "r-1",
    }  # fmt: skip
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    route = respx_mock.post(url).mock(return_value=httpx.Response(200, json=reply))
    config = ModelConfig(spec="gemini", env={"GEMINI_API_KEY": "g-test"})
    completion = GeminiModel(config, sleep=FakeSleep()).complete(PROMPT)
    assert completion.structured
    generation = json.loads(route.calls.last.request.content)["generationConfig"]
    assert generation["responseMimeType"] == "application/json"
    schema = generation["responseSchema"]
    assert schema["type"] == "OBJECT" and schema["propertyOrdering"][0] == "prose"
    assert "additionalProperties" not in json.dumps(schema)
    flag = schema["properties"]["tasks_to_flag"]["items"]["properties"]
    assert flag["task_id"]["format"] == "enum" and "t-prog" in flag["task_id"]["enum"]
    assert flag["reason"] == {"type": "STRING", "nullable": True}


def _settings(tmp_path: Path, env: dict[str, str], **flags: Any) -> ModelConfig:
    base = {"llm": "openai-compatible", "domain": "website", "hub": "http://hub.invalid"}
    return load_settings({**base, **flags}, env, tmp_path).model


def test_how_the_model_is_asked_is_set_by_flag_over_variable(tmp_path: Path) -> None:
    default = _settings(tmp_path, {})
    assert (default.temperature, default.structured, default.max_output_tokens) == (0.0, True, 8192)
    env = {"CUSTODIAN_TEMPERATURE": "0.7", "CUSTODIAN_STRUCTURED_OUTPUT": "off",
           "CUSTODIAN_MAX_OUTPUT_TOKENS": "2000"}  # fmt: skip
    from_env = _settings(tmp_path, env)
    assert (from_env.temperature, from_env.structured, from_env.max_output_tokens) == (
        0.7, False, 2000)  # fmt: skip
    flagged = _settings(
        tmp_path, env, temperature="none", structured_output="on", max_output_tokens="900"
    )
    assert (flagged.temperature, flagged.structured, flagged.max_output_tokens) == (None, True, 900)


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"CUSTODIAN_TEMPERATURE": "hot"}, "a number from 0 to 2"),
        ({"CUSTODIAN_TEMPERATURE": "3"}, "a number from 0 to 2"),
        ({"CUSTODIAN_STRUCTURED_OUTPUT": "maybe"}, "use 'on'"),
        ({"CUSTODIAN_MAX_OUTPUT_TOKENS": "0"}, "at least 1"),
    ],
)
def test_a_bad_model_option_is_a_config_error(
    tmp_path: Path, env: dict[str, str], needle: str
) -> None:
    with pytest.raises(ConfigError, match=needle):
        _settings(tmp_path, env)


def _flag_the_first_blocked_task(schema: dict[str, Any]) -> dict[str, Any]:
    """What a constrained model might answer: the first listed task, flagged."""
    task = schema["properties"]["tasks_to_flag"]["items"]["properties"]["task_id"]["enum"][1]
    return {
        "prose": f"{task} needs a person.",
        "observations": [],
        "progress_events": [],
        "tasks_to_update": [],
        "tasks_to_flag": [{"task_id": task, "note": f"{task} is blocked; who unblocks it?",
                           "reason": None}],
        "proposals": [],
    }  # fmt: skip


def test_a_run_against_a_server_that_honours_the_schema_as_llama_cpp_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    answer = SchemaAnswer(_flag_the_first_blocked_task)
    memory = str(tmp_path / "memory")
    with FakeProvider("openai-compatible", answer=answer) as fake:
        argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm",
                "openai-compatible", "--memory", memory, "--canon", str(CANON),
                "--json"]  # fmt: skip
        done = run_cli(argv, tmp_path, monkeypatch, CUSTODIAN_LLM_BASE_URL=fake.url)
        (request,) = fake.requests
    assert done.code == 0, done.stderr
    (schema,) = answer.schemas
    tasks = schema["properties"]["tasks_to_flag"]["items"]["properties"]["task_id"]["enum"]
    assert "web-t-2" in tasks and "plat-t-1" not in tasks  # the observed domain's ids only
    assert request.body["temperature"] == 0.0
    assert "one JSON object and nothing else" in request.body["messages"][0]["content"]
    summary = done.json()
    assert [(i["operation"], i["target"]) for i in summary["executed"]] == [
        ("flag_for_human", tasks[1])
    ]
    records = [json.loads(line) for line in (tmp_path / "memory/journal/website.jsonl").open()]
    response = next(r for r in records if r["kind"] == "model_response")
    assert response["data"]["structured"] is True
    note = Path(summary["note"]).read_text("utf-8")
    assert f"{tasks[1]} needs a person." in note
    replayed = run_cli(["replay", summary["run_id"], "--memory", memory], tmp_path, monkeypatch)
    assert replayed.code == 0, replayed.stdout + replayed.stderr
