"""OpenAI-compatible HTTP backend: llama-server, vLLM, ``python -m llama_cpp.server`` (sync httpx).

``base_url`` is the API root including ``/v1`` (e.g. ``http://127.0.0.1:8080/v1``). A JSON schema is sent as
``response_format = {"type": "json_object", "schema": ...}``, which llama_cpp.server and llama-server turn into a
grammar.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

from engine.config import ModelProfile, url_for_display
from engine.models.base import GenerationParams, Message, ModelError, chat_request

CONNECT_TIMEOUT_S = 5.0  # a server that is down must fail fast, whatever timeout_s says


def _key(name: str, field: str) -> str:
    return f"models.profiles.{name}.{field}"


class OpenAICompatModel:
    def __init__(self, name: str, profile: ModelProfile, *, label: str = "",
                 transport: httpx.BaseTransport | None = None) -> None:
        self.name = name
        self.label = label or profile.label or name
        self.profile = profile
        self.base_url = profile.base_url.strip().rstrip("/")
        self._model_name = profile.model_name.strip()
        headers = {"Accept": "application/json"}
        if profile.api_key:
            headers["Authorization"] = f"Bearer {profile.api_key}"
        timeout = httpx.Timeout(profile.timeout_s, connect=min(CONNECT_TIMEOUT_S, profile.timeout_s))
        self._client = httpx.Client(headers=headers, timeout=timeout, transport=transport, trust_env=False)

    # -- errors ------------------------------------------------------------------------------------------------
    def _connect_error(self, url: str, exc: Exception) -> ModelError:
        return ModelError(f"{_key(self.name, 'base_url')}: cannot reach {url_for_display(url)} "
                          f"({type(exc).__name__}: {exc or 'no answer'})")

    def _http_error(self, resp: httpx.Response, url: str) -> ModelError:
        try:
            body = resp.read().decode("utf-8", "replace")
        except httpx.HTTPError:
            body = ""
        hint = ""
        if resp.status_code in (401, 403):
            hint = f" (check {_key(self.name, 'api_key')})"
        elif resp.status_code == 404:
            hint = f" (check {_key(self.name, 'base_url')} and {_key(self.name, 'model_name')})"
        return ModelError(f"Model '{self.name}': {url_for_display(url)} answered HTTP "
                          f"{resp.status_code}{hint}: {body[:300]}")

    # -- loading -----------------------------------------------------------------------------------------------
    def load(self) -> OpenAICompatModel:
        """Check that the server answers (GET /models) and pick a model id when model_name is empty."""
        if not self.base_url:
            raise ModelError(f"{_key(self.name, 'base_url')}: is empty; set it to e.g. http://127.0.0.1:8080/v1")
        if not self.base_url.startswith(("http://", "https://")):
            raise ModelError(f"{_key(self.name, 'base_url')}: {url_for_display(self.base_url)!r} is not an "
                             "http(s) URL")
        url = f"{self.base_url}/models"
        try:
            resp = self._client.get(url, timeout=min(CONNECT_TIMEOUT_S * 2, self.profile.timeout_s))
        except httpx.TimeoutException as exc:
            raise self._connect_error(url, exc) from None
        except httpx.TransportError as exc:
            raise self._connect_error(url, exc) from None
        if resp.status_code in (401, 403):
            raise self._http_error(resp, url)
        if resp.status_code == 200 and not self._model_name:
            try:
                data = resp.json().get("data") or []
                if data and isinstance(data[0], dict):
                    self._model_name = str(data[0].get("id", ""))
            except (ValueError, AttributeError):
                pass
        return self

    def close(self) -> None:
        self._client.close()

    # -- generation --------------------------------------------------------------------------------------------
    def _body(self, messages: list[Message], params: GenerationParams, stream: bool) -> dict[str, Any]:
        return {"model": self._model_name or self.name,
                **chat_request(messages, params, self.profile.max_tokens, stream)}

    def _timeout_error(self, url: str) -> ModelError:
        return ModelError(f"Model '{self.name}': {url_for_display(url)} did not answer within "
                          f"{self.profile.timeout_s:g} s ({_key(self.name, 'timeout_s')})")

    def generate(self, messages: list[Message], params: GenerationParams) -> str:
        url = f"{self.base_url}/chat/completions"
        try:
            resp = self._client.post(url, json=self._body(messages, params, stream=False))
        except httpx.TimeoutException:
            raise self._timeout_error(url) from None
        except httpx.TransportError as exc:
            raise self._connect_error(url, exc) from None
        if resp.status_code != 200:
            raise self._http_error(resp, url)
        try:
            data = resp.json()
            return data["choices"][0]["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise ModelError(f"Model '{self.name}': {url_for_display(url)} sent an answer that is not a chat "
                             f"completion: {resp.text[:300]}") from None

    def stream(self, messages: list[Message], params: GenerationParams) -> Iterator[str]:
        url = f"{self.base_url}/chat/completions"
        body = self._body(messages, params, stream=True)
        try:
            with self._client.stream("POST", url, json=body, headers={"Accept": "text/event-stream"}) as resp:
                if resp.status_code != 200:
                    raise self._http_error(resp, url)
                yield from _parse_sse(resp.iter_lines(), self.name, url)
        except httpx.TimeoutException:
            raise self._timeout_error(url) from None
        except httpx.TransportError as exc:
            raise self._connect_error(url, exc) from None


def _parse_sse(lines: Iterator[str], name: str, url: str) -> Iterator[str]:
    """Yield content deltas from an OpenAI SSE stream (``data: {...}`` lines, ended by ``data: [DONE]``)."""
    data_lines: list[str] = []

    def events() -> Iterator[str]:
        for raw in lines:
            line = raw.rstrip("\r")
            if not line:
                if data_lines:
                    yield "\n".join(data_lines)
                    data_lines.clear()
            elif line.startswith("data:"):
                value = line[5:]
                data_lines.append(value[1:] if value.startswith(" ") else value)
            # other fields (event:, id:, retry:) and comments (": keep-alive") carry no content
        if data_lines:
            yield "\n".join(data_lines)

    for payload in events():
        if payload.strip() == "[DONE]":
            return
        try:
            event = json.loads(payload)
        except ValueError:
            raise ModelError(f"Model '{name}': {url_for_display(url)} sent a stream event that is not JSON: "
                             f"{payload[:200]}") from None
        if not isinstance(event, dict):
            continue
        if event.get("error"):
            raise ModelError(f"Model '{name}': {url_for_display(url)} reported an error: {event['error']}")
        for choice in event.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content")
            if piece:
                yield piece
