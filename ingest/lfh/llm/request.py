"""What a chat request sends and what a run of them counted: plain data, so the commands that only describe runs
(simulate, the run manifests) do not load the OpenAI SDK that lfh.llm.client drives."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from lfh.llm.config import ModelConfig


def request_body(config: ModelConfig, messages: list[dict[str, str]], n: int, json_mode: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": config.model, "messages": messages}
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if config.top_p is not None:
        body["top_p"] = config.top_p
    if config.max_tokens is not None:
        body["max_tokens"] = config.max_tokens
    if config.seed is not None:
        body["seed"] = config.seed
    if n != 1:
        body["n"] = n
    if json_mode:
        body["response_format"] = {"type": "json_object"}
    return body


@dataclass
class RunStats:
    model: str
    jobs_total: int | None = None
    samples_done: int = 0
    jobs_done: int = 0
    jobs_failed: int = 0
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.monotonic)
    # per response (HTTP call or batch result): the model string and system_fingerprint the endpoint reported
    reported_models: Counter[str] = field(default_factory=Counter)
    system_fingerprints: Counter[str] = field(default_factory=Counter)

    def count_response(self, model: str | None, fingerprint: str | None) -> None:
        if model:
            self.reported_models[model] += 1
        if fingerprint:
            self.system_fingerprints[fingerprint] += 1

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started
