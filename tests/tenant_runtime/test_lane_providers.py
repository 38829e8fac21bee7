"""The text providers: the offline default is deterministic; the Anthropic adapter speaks the Messages API
(tested against a loopback server that speaks that wire format), busy answers are transient with their
Retry-After, refusals permanent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import SecretStr

from tenant_runtime.lanes.providers import (
    AnthropicProvider,
    OfflineProvider,
    ProviderBusy,
    ProviderRejected,
    TextRequest,
)
from tenant_runtime.lanes.settings import LaneSettings


class MessagesServer:
    """``POST /v1/messages`` as the Anthropic API answers it; ``replies`` queues (status, body, headers)."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.replies: list[tuple[int, dict[str, Any], dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                if self.path != "/v1/messages":
                    status, reply, headers = 404, {"type": "error", "error": {"type": "not_found_error"}}, {}
                elif server.replies:
                    status, reply, headers = server.replies.pop(0)
                else:
                    text = f"# {body['messages'][0]['content'].splitlines()[0]}\n\nWritten remotely."
                    reply = {
                        "id": "msg_1",
                        "type": "message",
                        "role": "assistant",
                        "model": body["model"],
                        "content": [{"type": "text", "text": text}],
                        "stop_reason": "end_turn",
                        "usage": {"input_tokens": 120, "output_tokens": 40},
                    }
                    status, headers = 200, {}
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.http.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def messages_server() -> Iterator[MessagesServer]:
    server = MessagesServer()
    try:
        yield server
    finally:
        server.stop()


REQUEST = TextRequest(system="Voice: plain.", prompt="Title: Hello\nNote: First.", max_tokens=256)


def test_the_offline_provider_writes_the_same_article_for_the_same_request() -> None:
    provider = OfflineProvider(micros_per_call=5)
    first, second = provider.generate(REQUEST), provider.generate(REQUEST)
    assert first == second and first.text.startswith("## Hello") and "First." in first.text
    assert first.cost_micros == 5 and provider.calls == 2
    assert provider.generate(TextRequest("Voice: other.", REQUEST.prompt)).text != first.text


def test_the_anthropic_adapter_speaks_the_messages_api(messages_server: MessagesServer) -> None:
    settings = LaneSettings(
        lanes_anthropic_url=messages_server.url,
        lanes_anthropic_key=SecretStr("sk-test"),
        lanes_anthropic_model="claude-test",
        lanes_input_micros_per_mtok=3_000_000,
        lanes_output_micros_per_mtok=15_000_000,
    )
    provider = AnthropicProvider(settings)
    try:
        result = provider.generate(REQUEST)
    finally:
        provider.close()

    headers, body = messages_server.requests[0]
    assert headers["x-api-key"] == "sk-test" and headers["anthropic-version"] == "2023-06-01"
    assert body == {
        "model": "claude-test",
        "max_tokens": 256,
        "system": "Voice: plain.",
        "messages": [{"role": "user", "content": REQUEST.prompt}],
    }
    assert result.text == "# Title: Hello\n\nWritten remotely."
    assert (result.input_tokens, result.output_tokens, result.model) == (120, 40, "claude-test")
    assert result.cost_micros == 120 * 3 + 40 * 15  # µ$ at 3 $/M in and 15 $/M out
    assert provider.estimate_micros(REQUEST) >= 256 * 15


@pytest.mark.parametrize("status", [429, 529, 503])
def test_busy_answers_are_transient_and_carry_retry_after(messages_server: MessagesServer, status: int) -> None:
    messages_server.replies.append(
        (status, {"type": "error", "error": {"type": "overloaded_error"}}, {"retry-after": "7"})
    )
    provider = AnthropicProvider(LaneSettings(lanes_anthropic_url=messages_server.url))
    with pytest.raises(ProviderBusy) as busy:
        provider.generate(REQUEST)
    provider.close()
    assert busy.value.details == {"status": status, "retry_after": 7.0}


def test_a_refusal_is_permanent(messages_server: MessagesServer) -> None:
    messages_server.replies.append((401, {"type": "error", "error": {"type": "authentication_error"}}, {}))
    provider = AnthropicProvider(LaneSettings(lanes_anthropic_url=messages_server.url))
    with pytest.raises(ProviderRejected) as refused:
        provider.generate(REQUEST)
    provider.close()
    assert refused.value.details == {"status": 401, "error": "authentication_error"}
