"""Many chat requests against one OpenAI-compatible endpoint, done well: a bounded number in flight, request
and token budgets per minute, Retry-After honoured, retries with exponential backoff and jitter, and a failure
record for each request that runs out of tries. The SDK's own retries are off so every wait is ours to count.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion

from lfh.errors import EndpointError
from lfh.llm.config import ModelConfig, api_key
from lfh.llm.request import RunStats, request_body

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


@dataclass
class Job:
    """One request: `key` is unique within its output (it becomes the Batch API custom_id too)."""

    key: str
    messages: list[dict[str, str]]
    n: int
    meta: dict[str, Any]


@dataclass
class Completion:
    job: Job
    texts: list[str | None]
    first_offset: int  # position of texts[0] among the job's n samples
    prompt_tokens: int | None
    completion_tokens: int | None
    # what the endpoint reported answering (the response's `model`, e.g. a dated snapshot) and its
    # `system_fingerprint`; None when the response did not say
    model: str | None = None
    system_fingerprint: str | None = None

    def samples(self) -> Iterator[tuple[int, str | None, dict[str, int | None]]]:
        """(sample index, text, token usage) of each text: the sample's index in job.meta["samples"], and the
        call's usage on its first text only (usage is per HTTP call: charged once), zeros on the others."""
        for position, text in enumerate(self.texts):
            first = position == 0
            yield self.job.meta["samples"][self.first_offset + position], text, {
                "prompt_tokens": self.prompt_tokens if first else 0,
                "completion_tokens": self.completion_tokens if first else 0}


@dataclass
class Failure:
    job: Job
    error: str
    status: int | None
    tries: int


class AuthenticationFailed(EndpointError):
    """The endpoint refused the key: every request would fail the same way, so the run stops."""


def scrub(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret else text


class RateLimiter:
    """Token buckets for requests and tokens per minute, and a shared pause for Retry-After."""

    def __init__(self, requests_per_minute: float | None, tokens_per_minute: float | None) -> None:
        self._limits = [(limit / 60.0, limit / 6.0) if limit else None
                        for limit in (requests_per_minute, tokens_per_minute)]
        self._levels = [limit[1] if limit else 0.0 for limit in self._limits]
        self._updated = time.monotonic()
        self._paused_until = 0.0
        self._lock = asyncio.Lock()

    def pause(self, seconds: float) -> None:
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    def _refill(self) -> None:
        now = time.monotonic()
        elapsed = now - self._updated
        self._updated = now
        for index, limit in enumerate(self._limits):
            if limit:
                rate, capacity = limit
                self._levels[index] = min(capacity, self._levels[index] + elapsed * rate)

    async def acquire(self, tokens: int) -> None:
        async with self._lock:  # one waiter at a time keeps the order fair
            while True:
                wait = self._paused_until - time.monotonic()
                if wait <= 0:
                    self._refill()
                    wait = 0.0
                    for index, (cost, limit) in enumerate(zip((1.0, float(tokens)), self._limits, strict=True)):
                        if limit:
                            rate, capacity = limit
                            need = min(cost, capacity)
                            if self._levels[index] < need:
                                wait = max(wait, (need - self._levels[index]) / rate)
                    if wait <= 0:
                        self._levels[0] -= 1.0 if self._limits[0] else 0.0
                        self._levels[1] -= float(tokens) if self._limits[1] else 0.0
                        return
                await asyncio.sleep(wait)

    def settle(self, estimated: int, actual: int) -> None:
        """Charge the difference between the estimate taken up front and the usage the response reported."""
        if self._limits[1]:
            self._levels[1] -= actual - estimated


def retry_after_seconds(headers: Any) -> float | None:
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / divisor)
        except ValueError:
            continue
    return None


def backoff_seconds(config: ModelConfig, attempt: int) -> float:
    ceiling = min(config.backoff_max_seconds, config.backoff_base_seconds * 2 ** (attempt - 1))
    return random.uniform(ceiling / 2, ceiling)  # noqa: S311 (jitter, not security)


def estimate_tokens(job: Job, config: ModelConfig) -> int:
    characters = sum(len(message["content"]) for message in job.messages)
    return characters // 4 + job.n * (config.max_tokens or 256)


def make_client(config: ModelConfig, key: str) -> openai.AsyncOpenAI:
    # One kept-alive connection per worker (the default pool keeps 20, so more workers would reconnect all the
    # time), and TCP_NODELAY: the request head and body go out as two writes, which Nagle would otherwise hold
    # back for the server's delayed ACK.
    transport = httpx2.AsyncHTTPTransport(
        limits=httpx2.Limits(max_connections=config.concurrency, max_keepalive_connections=config.concurrency),
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    )
    http_client = openai.DefaultAsyncHttpx2Client(transport=transport, timeout=config.timeout_seconds)
    return openai.AsyncOpenAI(api_key=key, base_url=config.base_url, max_retries=0, timeout=config.timeout_seconds,
                              http_client=http_client)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


async def _attempt_once(client: openai.AsyncOpenAI, body: dict[str, Any]) -> Any:
    # The client's own post(): same auth, errors and response model as chat.completions.create, without the
    # per-call walk of the request through its TypedDict annotations (a third of the client's CPU per request).
    return await client.post("/chat/completions", body=body, cast_to=ChatCompletion)


async def complete_job(client: openai.AsyncOpenAI, config: ModelConfig, limiter: RateLimiter, job: Job,
                       json_mode: bool, stats: RunStats, secret: str,
                       on_completion: Callable[[Completion], None]) -> Failure | None:
    """Ask until the job's n samples are in or the tries run out. Returns the failure, if any."""
    received = 0
    tries = 0
    while received < job.n:
        wanted = min(job.n - received, config.samples_per_call)
        body = request_body(config, job.messages, wanted, json_mode)
        estimate = estimate_tokens(Job(job.key, job.messages, wanted, job.meta), config)
        tries += 1
        await limiter.acquire(estimate)
        stats.requests += 1
        wait: float | None = None
        try:
            response = await _attempt_once(client, body)
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status in (401, 403):
                raise AuthenticationFailed(
                    f"model {config.name}: the endpoint refused the key from ${config.api_key_env} (HTTP {status})"
                ) from None
            error = f"HTTP {status}: {scrub(str(exc.message), secret)[:500]}"
            if status not in RETRYABLE_STATUS:
                return Failure(job, error, status, tries)
            wait = retry_after_seconds(exc.response.headers)
            if wait is not None:
                limiter.pause(wait)
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            status, error = None, f"{type(exc).__name__}: {scrub(str(exc), secret)[:300]}"
        except (openai.APIResponseValidationError, ValueError) as exc:
            status, error = None, f"unreadable response: {scrub(str(exc), secret)[:300]}"
        else:
            usage = getattr(response, "usage", None)
            prompt_tokens = getattr(usage, "prompt_tokens", None)
            completion_tokens = getattr(usage, "completion_tokens", None)
            limiter.settle(estimate, (prompt_tokens or 0) + (completion_tokens or 0))
            choices = sorted(response.choices or [], key=lambda choice: choice.index or 0)[:wanted]
            if choices:
                reported, fingerprint = _text_or_none(response.model), _text_or_none(response.system_fingerprint)
                stats.count_response(reported, fingerprint)
                on_completion(Completion(job, [choice.message.content for choice in choices], received,
                                         prompt_tokens, completion_tokens, reported, fingerprint))
                received += len(choices)
                stats.prompt_tokens += prompt_tokens or 0
                stats.completion_tokens += completion_tokens or 0
                stats.cost += config.cost(prompt_tokens or 0, completion_tokens or 0)
                continue
            status, error = None, "response had no choices"
        if tries >= config.max_tries:
            return Failure(job, f"gave up after {tries} tries; last error: {error}", status, tries)
        stats.retries += 1
        # when the server said how long, a little jitter keeps the waiting workers from returning in one burst
        delay = backoff_seconds(config, tries) if wait is None else wait + random.uniform(0, 0.1 * wait + 0.01)  # noqa: S311
        await asyncio.sleep(delay)
    return None


async def run_jobs(config: ModelConfig, jobs: Iterable[Job], on_completion: Callable[[Completion], None],
                   on_failure: Callable[[Failure], None], stats: RunStats, json_mode: bool = False,
                   on_tick: Callable[[], None] | None = None) -> RunStats:
    """Run every job with `config.concurrency` workers pulling from one iterator (memory stays flat however
    many jobs there are). Raises AuthenticationFailed when the endpoint refuses the key."""
    key = api_key(config)
    limiter = RateLimiter(config.requests_per_minute, config.tokens_per_minute)
    iterator = iter(jobs)
    stop = asyncio.Event()

    async def worker(client: openai.AsyncOpenAI) -> None:
        while not stop.is_set():
            try:
                job = next(iterator)
            except StopIteration:
                return
            failure = await complete_job(client, config, limiter, job, json_mode, stats, key, on_completion)
            if failure is None:
                stats.jobs_done += 1
            else:
                stats.jobs_failed += 1
                on_failure(failure)
            if on_tick:
                on_tick()

    async with make_client(config, key) as client:
        workers = [asyncio.create_task(worker(client)) for _ in range(config.concurrency)]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            stop.set()
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
    return stats
