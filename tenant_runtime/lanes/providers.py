"""Text generation behind one small protocol: an offline deterministic default and the Anthropic Messages API.

    TextProvider.generate(request) -> TextResult      (estimate_micros(request) before, for the budget)

``OfflineProvider`` writes the same article for the same request, with no
network (``make up`` and the tests). ``AnthropicProvider`` speaks the Messages
API over httpx: a 429, 529 or 503 is ``ProviderBusy`` (transient, carrying the
server's Retry-After so the step policy waits it out), any other 4xx is
``ProviderRejected`` (permanent: a retry would only be refused again).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Protocol

import httpx

from tenant_runtime.errors import Permanent, Unavailable
from tenant_runtime.lanes.settings import LaneSettings
from tenant_runtime.webhooks import parse_retry_after

ANTHROPIC_VERSION = "2023-06-01"
BUSY_STATUSES = frozenset({429, 503, 529})


@dataclass(frozen=True)
class TextRequest:
    system: str
    prompt: str
    max_tokens: int = 2048


@dataclass(frozen=True)
class TextResult:
    text: str
    input_tokens: int
    output_tokens: int
    cost_micros: int
    model: str


class TextProvider(Protocol):
    name: str

    def estimate_micros(self, request: TextRequest) -> int:
        """The most this call can cost: what the budget checks before calling."""
        ...

    def generate(self, request: TextRequest) -> TextResult: ...


class ProviderBusy(Unavailable):
    code = "provider_busy"


class ProviderRejected(Permanent):
    code = "provider_rejected"


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


class OfflineProvider:
    """Deterministic, free of network: an article assembled from the brief, the pack and the sources."""

    name = "offline"

    def __init__(self, micros_per_call: int = 0) -> None:
        self.micros_per_call = micros_per_call
        self.calls = 0

    def estimate_micros(self, request: TextRequest) -> int:
        return self.micros_per_call

    def generate(self, request: TextRequest) -> TextResult:
        self.calls += 1
        seed = hashlib.sha256((request.system + "\n" + request.prompt).encode()).hexdigest()[:8]
        lines = [line.strip() for line in request.prompt.splitlines() if line.strip()]
        title = next((line[len("Title:") :].strip() for line in lines if line.startswith("Title:")), "Untitled")
        notes = [line[len("Note:") :].strip() for line in lines if line.startswith("Note:")]
        sources = [line[len("Source:") :].strip() for line in lines if line.startswith("Source:")]
        body = [f"## {title}", ""]
        body.append(notes[0] if notes else f"This article covers {title.lower()}.")
        body.append("")
        for note in notes[1:]:
            body.append(f"- {note}")
        if sources:
            body += ["", "### Sources", ""]
            body += [f"- {source}" for source in sources]
        body += ["", f"<!-- offline draft {seed} -->"]
        text = "\n".join(body) + "\n"
        return TextResult(
            text=text,
            input_tokens=_tokens(request.system + request.prompt),
            output_tokens=_tokens(text),
            cost_micros=self.micros_per_call,
            model="offline-1",
        )


class AnthropicProvider:
    """The Anthropic Messages API (``POST {url}/v1/messages``) over httpx."""

    name = "anthropic"

    def __init__(self, settings: LaneSettings, transport: httpx.BaseTransport | None = None) -> None:
        self.settings = settings
        self.client = httpx.Client(
            base_url=settings.lanes_anthropic_url,
            timeout=settings.lanes_anthropic_timeout_seconds,
            transport=transport,
        )

    def _price(self, input_tokens: int, output_tokens: int) -> int:
        s = self.settings
        return math.ceil(
            (input_tokens * s.lanes_input_micros_per_mtok + output_tokens * s.lanes_output_micros_per_mtok) / 1_000_000
        )

    def estimate_micros(self, request: TextRequest) -> int:
        return self._price(_tokens(request.system + request.prompt), request.max_tokens)

    def generate(self, request: TextRequest) -> TextResult:
        s = self.settings
        body = {
            "model": s.lanes_anthropic_model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.prompt}],
        }
        headers = {
            "x-api-key": s.lanes_anthropic_key.get_secret_value(),
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
        }
        try:
            response = self.client.post("/v1/messages", json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise ProviderBusy(f"The provider could not be reached: {type(exc).__name__}.") from None
        if response.status_code in BUSY_STATUSES or response.status_code >= 500:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            details: dict[str, object] = {"status": response.status_code}
            if retry_after is not None:
                details["retry_after"] = retry_after
            raise ProviderBusy(f"The provider is busy ({response.status_code}).", details=details)
        if response.status_code >= 400:
            raise ProviderRejected(
                f"The provider refused the request ({response.status_code}).",
                details={"status": response.status_code, "error": _error_type(response)},
            )
        try:
            data = response.json()
            text = "".join(part["text"] for part in data["content"] if part.get("type") == "text")
            usage = data.get("usage", {})
            input_tokens, output_tokens = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        except (ValueError, KeyError, TypeError):
            raise ProviderBusy("The provider's answer was not a Messages response.") from None
        return TextResult(
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_micros=self._price(input_tokens, output_tokens),
            model=str(data.get("model", s.lanes_anthropic_model)),
        )

    def close(self) -> None:
        self.client.close()


def _error_type(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error", {}).get("type", ""))
    except ValueError:
        return ""


def build_provider(settings: LaneSettings) -> TextProvider:
    if settings.lanes_provider == "anthropic":
        return AnthropicProvider(settings)
    return OfflineProvider(settings.lanes_offline_micros_per_call)


__all__ = [
    "AnthropicProvider",
    "OfflineProvider",
    "ProviderBusy",
    "ProviderRejected",
    "TextProvider",
    "TextRequest",
    "TextResult",
    "build_provider",
]
