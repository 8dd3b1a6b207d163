"""A small OpenAI-compatible endpoint around a local backend, so that anything speaking the
OpenAI API (and openmsd's own ``http`` backend) can use the local Gemma-3-270M or Apertium.

It serves openmsd's tasks only: a chat message must start with one of the instructions of
:mod:`openmsd.enrich.prompts` followed by a blank line and the passage (what
:func:`openmsd.enrich.prompts.chat_message` writes). Run it with::

    python -m openmsd.enrich.server --backend gemma --port 8081
    openmsd enrich CORPUS --method llm --backend http://127.0.0.1:8081/v1
"""

from __future__ import annotations

import argparse
import threading
import time
import uuid
from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

from openmsd.enrich.backends import load_backend
from openmsd.enrich.generator import Generator
from openmsd.enrich.prompts import INSTRUCTIONS


class Message(BaseModel):
    role: str
    content: str


class ChatRequest(BaseModel):
    model: str | None = None
    messages: list[Message]
    max_tokens: int = 128
    temperature: float = 0.0
    language: str | None = None
    """Not in the OpenAI API: the passage's language, for backends that need it (Apertium)."""


def _task(content: str) -> tuple[str, str]:
    for task, instruction in INSTRUCTIONS.items():
        if content.startswith(instruction):
            return task, content[len(instruction):].strip()
    raise HTTPException(400, "the message must start with one of openmsd's instructions: "
                             + " | ".join(INSTRUCTIONS.values()))


def create_app(generator: Generator, language: str | None = None) -> FastAPI:
    """The app: ``GET /v1/models``, ``POST /v1/chat/completions``. Requests are answered one
    at a time (the backend is not thread-safe); ``language``: the passages' default language."""
    app = FastAPI(title=f"openmsd enrich server ({generator.name})")
    lock = threading.Lock()

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": generator.name, "object": "model",
                                            "owned_by": "openmsd"}]}

    @app.post("/v1/chat/completions")
    def chat(request: ChatRequest) -> dict[str, Any]:
        users = [m.content for m in request.messages if m.role == "user"]
        if not users:
            raise HTTPException(400, "no user message")
        task, passage = _task(users[-1])
        if task not in generator.tasks:
            raise HTTPException(400, f"{generator.name} cannot do {task}")
        if request.max_tokens < 1:
            raise HTTPException(400, "max_tokens must be at least 1")
        with lock:
            answer = generator.generate(task, [passage], [request.language or language],
                                        request.max_tokens, request.temperature)[0]
        if answer.text is None and answer.error and answer.error != "empty output":
            raise HTTPException(422, answer.error)
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion",
                "created": int(time.time()), "model": generator.name,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": answer.text or ""}}],
                "usage": {"completion_tokens": answer.tokens}}

    return app


def main() -> None:
    """``python -m openmsd.enrich.server --backend gemma|apertium [--host H --port P]``."""
    import uvicorn  # optional: the serve extra

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="gemma", choices=["gemma", "apertium"])
    parser.add_argument("--language", default=None,
                        help="the passages' language when a request does not say (apertium)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    args = parser.parse_args()
    uvicorn.run(create_app(load_backend(args.backend), args.language), host=args.host,
                port=args.port)


if __name__ == "__main__":
    main()
