"""What the tracker backends' tests do alike on Roundup and on Redmine."""

from __future__ import annotations

import httpx

from custodian_runtime.core.contract import NewTask, NewWorkstream
from custodian_runtime.statehub import StateHubClient

# The head of a child process's script: a transport that SIGKILLs its own process the moment the
# answer to a write arrives, so the write is kept on the tracker and its receipt never recorded.
KILLED_ON_THE_ANSWER = """
import os, signal, sys
import httpx
from custodian_runtime.clock import utc_now
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub.connect import open_hub

class KilledOnTheAnswer(httpx.BaseTransport):
    def __init__(self):
        self.inner = httpx.HTTPTransport()
    def handle_request(self, request):
        response = self.inner.handle_request(request)
        if request.method in ("POST", "PUT"):
            response.read()
            os.kill(os.getpid(), signal.SIGKILL)
        return response
"""


class AnswerLostOnce(httpx.BaseTransport):
    """Sends every request on; the answer to the first write is lost on the way back."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.writes = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method in ("POST", "PUT"):
            self.writes += 1
            if self.writes == 1:
                response.close()
                raise httpx.RemoteProtocolError("Server disconnected", request=request)
        return response


def seed_domain(client: StateHubClient, name: str) -> tuple[str, str]:
    """A workstream of domain `name` with one task, written through `client`: their ids."""
    ws = client.create_workstream(
        NewWorkstream(domain=name, title="Site"), idempotency_key=f"{name}-w"
    )
    task = client.create_task(
        NewTask(workstream_id=ws.resource.id, title="Ship it"), idempotency_key=f"{name}-t"
    )
    return ws.resource.id, task.resource.id
