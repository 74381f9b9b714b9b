"""The reference hub's one table of endpoints: what it routes, answers and documents."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from custodian_hub import Endpoint, in_process, load_seed, register_endpoint
from custodian_runtime.core import contract
from support.runs import small_dataset

COUNT = Endpoint(
    "count_tasks",
    "GET",
    "/tasks/{task_id}/count",
    "How many tasks share this one's workstream",
    None,
    read=lambda r: {
        "count": r.conn.execute(
            "SELECT COUNT(*) FROM tasks WHERE workstream_id ="
            " (SELECT workstream_id FROM tasks WHERE id = ?)",
            (r.params["task_id"],),
        ).fetchone()[0]
    },
)


def test_a_registered_endpoint_is_routed_answered_and_documented_while_its_context_lasts(
    tmp_path: Path,
) -> None:
    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    with in_process(db, token="t") as transport:
        headers = {"Authorization": "Bearer t"}
        hub = httpx.Client(base_url="http://embedded.invalid", transport=transport, headers=headers)
        with register_endpoint(COUNT):
            assert hub.get("/tasks/web-t-1/count").json() == {"count": 4}
            assert hub.get("/tasks/web-t-1/count", headers={"Authorization": ""}).status_code == 401
            assert hub.post("/tasks/web-t-1/count").status_code == 405
            document = hub.get("/openapi.json").json()
            (param,) = document["paths"]["/tasks/{task_id}/count"]["get"]["parameters"]
            assert param["schema"]["pattern"] == contract.ID_PATTERN
        assert hub.get("/tasks/web-t-1/count").status_code == 404
        assert "/tasks/{task_id}/count" not in hub.get("/openapi.json").json()["paths"]


def test_the_table_refuses_a_second_name_or_route_and_an_endpoint_that_cannot_answer() -> None:
    same_route = Endpoint("other", "GET", "/tasks/{task_id}", "x", None, read=len)
    with (
        pytest.raises(ValueError, match=r"GET /tasks/\{task_id\} \(get_task\) is already"),
        register_endpoint(same_route),
    ):
        pass  # pragma: no cover
    with (
        pytest.raises(ValueError, match="already an endpoint"),
        register_endpoint(Endpoint("health", "GET", "/other", "x", None, read=len)),
    ):
        pass  # pragma: no cover
    with pytest.raises(ValueError, match="a POST answers by `write` alone"):
        Endpoint("x", "POST", "/x", "x", None, read=len)
    with pytest.raises(ValueError, match="a write needs its `request` model"):
        Endpoint("x", "POST", "/x", "x", None, write=len)
    with pytest.raises(ValueError, match="a GET answers by `read` or `about` alone"):
        Endpoint("x", "GET", "/x", "x", None)
