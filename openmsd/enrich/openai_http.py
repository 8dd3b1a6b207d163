"""Any OpenAI-compatible chat endpoint as a backend: vLLM, llama.cpp's server, Ollama, a
hosted API, or :mod:`openmsd.enrich.server` around the local model.

The endpoint is checked when the backend is made (``GET {url}/models``): an unreachable one
fails at once with its URL. Each passage is one ``POST {url}/chat/completions`` with the
task's instruction and the passage as the user message. A timeout, a 429 or a 5xx is retried
after ``backoff``, ``2·backoff``, ``4·backoff``... seconds, ``retries`` times; then the paper
is recorded as failed with the last error. An endpoint that stops answering altogether (no
connection on every try) stops the run. The key is read from an environment variable
(``OPENAI_API_KEY`` by default) and sent as a bearer token when set.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import httpx

from openmsd.enrich.generator import Generated, GeneratorError
from openmsd.enrich.prompts import INSTRUCTIONS, chat_message

RETRY_STATUS = {408, 429, 500, 502, 503, 504}


class OpenAICompatible:
    """Chat completions from ``url`` (ending in ``/v1``) with ``model`` (default: the first
    model the endpoint lists)."""

    tasks = frozenset(INSTRUCTIONS)
    languages = None

    def __init__(self, url: str, model: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, retries: int = 3, backoff: float = 1.0,
                 concurrency: int = 4):
        self.url = url.rstrip("/")
        key = os.environ.get(api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.client = httpx.Client(base_url=self.url, headers=headers,
                                   timeout=httpx.Timeout(timeout, connect=10.0))
        self.retries, self.backoff, self.concurrency = retries, backoff, concurrency
        try:
            response = self.client.get("/models", timeout=10.0)
        except httpx.HTTPError as error:
            raise GeneratorError(f"cannot reach the endpoint {self.url}/models: "
                                 f"{error!r}") from error
        if response.status_code in (401, 403):
            raise GeneratorError(f"{self.url}/models: HTTP {response.status_code}; set the "
                                 f"key in ${api_key_env}")
        listed = []
        if response.is_success:
            listed = [m.get("id") for m in response.json().get("data", []) if m.get("id")]
        if model is None and not listed:
            raise GeneratorError(f"{self.url}/models lists no model "
                                 f"(HTTP {response.status_code}); name one with "
                                 "--endpoint-model")
        self.model = model or listed[0]
        self.name = f"http:{self.model}"

    def _one(self, task: str, passage: str, max_new_tokens: int,
             temperature: float) -> Generated:
        body = {"model": self.model, "max_tokens": max_new_tokens, "temperature": temperature,
                "messages": [{"role": "user", "content": chat_message(task, passage)}]}
        last = "no answer"
        unreachable = 0
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = self.client.post("/chat/completions", json=body)
            except httpx.TimeoutException as error:
                last = f"timeout: {error!r}"
                continue
            except httpx.TransportError as error:
                unreachable += 1
                last = f"{self.url} unreachable: {error!r}"
                continue
            if response.status_code in RETRY_STATUS:
                last = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if not response.is_success:
                return Generated(None, 0, f"HTTP {response.status_code}: {response.text[:200]}")
            try:
                answer = response.json()
                text = (answer["choices"][0]["message"]["content"] or "").strip()
            except (ValueError, KeyError, IndexError, TypeError) as error:
                return Generated(None, 0, f"malformed answer from {self.url}: {error!r}")
            tokens = int((answer.get("usage") or {}).get("completion_tokens") or 0)
            return Generated(text or None, tokens, None if text else "empty output")
        if unreachable == self.retries + 1:
            raise GeneratorError(last)
        return Generated(None, 0, f"{last} (after {self.retries} retries)")

    def generate(self, task: str, passages: Sequence[str], languages: Sequence[str | None],
                 max_new_tokens: int, temperature: float = 0.0) -> list[Generated]:
        """One chat completion per passage, ``concurrency`` at a time."""
        with ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(lambda p: self._one(task, p, max_new_tokens, temperature),
                                 passages))
