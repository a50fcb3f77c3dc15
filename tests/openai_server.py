"""A real OpenAI-compatible HTTP server on 127.0.0.1 for offline tests and benchmarks.

Speaks POST /v1/chat/completions, POST /v1/files, GET /v1/files/{id}[/content], POST /v1/batches,
GET /v1/batches (newest first, `limit`/`after` pages), GET /v1/batches/{id}. Faults are injected by probability
(seeded) or by a script consumed in order:
latency, 429 with Retry-After, 500, dropped connections, malformed or truncated JSON content, and label
answers naming people who are not in the story. Behaviour can change at run time through POST /_control, so a
test can drive a server that an `lfh` subprocess talks to.

Run standalone: python tests/openai_server.py --latency 0.05 (prints the base URL, serves until killed).
"""

from __future__ import annotations

import argparse
import contextlib
import email.parser
import email.policy
import itertools
import json
import random
import re
import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = ("ok", "429", "500", "drop", "malformed", "truncated", "stranger")
_NAMES = ["Maria", "John", "Sarah", "Ahmed", "Priya", "Jamal", "Emily", "Juan", "Mei", "Amari"]
_STOPWORDS = {"The", "A", "An", "In", "On", "At", "As", "With", "This", "That", "It", "He", "She", "They", "His",
              "Her", "Their", "When", "After", "One", "Every", "Write", "American", "Here", "Story", "Together"}
_PRONOUNS = ["he", "him", "his", "she", "her", "hers", "they", "them"]


@dataclass
class Behaviour:
    latency: float = 0.0
    rate_429: float = 0.0
    retry_after: str = "0.05"
    rate_500: float = 0.0
    rate_drop: float = 0.0
    rate_malformed: float = 0.0
    rate_truncated: float = 0.0
    rate_stranger: float = 0.0
    script: list[str] = field(default_factory=list)
    seed: int = 0
    record: bool = True
    expected_key: str | None = None
    batch_polls_before_done: int = 1
    # seconds between creating a batch and answering the create call (a kill in between leaves a batch the
    # client never heard of, as with a real provider under load)
    batch_create_delay: float = 0.0
    honour_n: bool = True
    # what a response says answered: `model` (None: the model id asked for, as most local servers do; e.g.
    # "gpt-4o-2024-08-06" as OpenAI reports a dated snapshot) and `system_fingerprint` (None: left out)
    reported_model: str | None = None
    system_fingerprint: str | None = None
    # every story answer is this text (a model at temperature 0 repeating itself); None: numbered stories
    story_text: str | None = None


class FakeOpenAI:
    """The server and its state; start() binds an ephemeral port on 127.0.0.1."""

    def __init__(self, behaviour: Behaviour | None = None, port: int = 0) -> None:
        self.behaviour = behaviour or Behaviour()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.random = random.Random(self.behaviour.seed)
        self.counter = itertools.count(1)
        self.chat_calls = 0
        self.faults_served: dict[str, int] = dict.fromkeys(FAULTS, 0)
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_polls: dict[str, int] = {}
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _make_handler(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def update(self, **changes: Any) -> None:
        with self.lock:
            for name, value in changes.items():
                if not hasattr(self.behaviour, name):
                    raise ValueError(f"unknown behaviour {name}")
                setattr(self.behaviour, name, value)
            if "seed" in changes:
                self.random = random.Random(changes["seed"])

    def next_fault(self) -> str:
        with self.lock:
            self.chat_calls += 1
            behaviour = self.behaviour
            if behaviour.script:
                fault = behaviour.script.pop(0)
            else:
                draw = self.random.random()
                fault = "ok"
                for name, rate in (("429", behaviour.rate_429), ("500", behaviour.rate_500),
                                   ("drop", behaviour.rate_drop), ("malformed", behaviour.rate_malformed),
                                   ("truncated", behaviour.rate_truncated), ("stranger", behaviour.rate_stranger)):
                    if draw < rate:
                        fault = name
                        break
                    draw -= rate
            self.faults_served[fault] += 1
            return fault

    def record(self, entry: dict[str, Any]) -> None:
        if self.behaviour.record:
            with self.lock:
                self.requests.append(entry)

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {"chat_calls": self.chat_calls, "faults": dict(self.faults_served),
                    "behaviour": asdict(self.behaviour)}


# ---------------------------------------------------------------- content


def _label_keys(request: str) -> list[str]:
    block = request.split("Return a JSON response using the following type definition:\n", 1)[-1]
    return re.findall(r'^\s*"(.+?)": ', block.split("\n}\n", 1)[0], flags=re.MULTILINE)


def _story_of(request: str) -> str:
    tail = request.split("\n}\n", 1)[-1]
    return tail[1:-1] if tail.startswith("'") and tail.endswith("'") else tail


def label_answer(request: str, fault: str) -> str:
    keys = _label_keys(request)
    story = _story_of(request)
    words = re.findall(r"[A-Za-z]+", story)
    names = [word for word in dict.fromkeys(words) if word[0].isupper() and word not in _STOPWORDS]
    pronouns = [word for word in _PRONOUNS if re.search(rf"\b{word}\b", story, flags=re.IGNORECASE)]
    name_keys = [key for key in keys if key.endswith(" name")]
    reference_keys = [key for key in keys if key.endswith(" references")]
    answer: dict[str, Any] = {}
    for index, key in enumerate(name_keys):
        answer[key] = names[index] if index < len(names) else "Unspecified"
    for index, key in enumerate(reference_keys):
        answer[key] = pronouns if index == 0 else []
    if fault == "stranger" and name_keys:
        answer[name_keys[0]] = "Zebulon Quixote"
        if reference_keys:
            answer[reference_keys[0]] = [*answer[reference_keys[0]], "wizard"]
    return json.dumps(answer, indent=2)


def story_answer(prompt: str, number: int) -> str:
    name = _NAMES[number % len(_NAMES)]
    pronoun = "she" if number % 2 else "he"
    return f"{name}, story {number}, answered the call: {prompt} Every day {pronoun} smiled."


def chat_content(messages: list[dict[str, Any]], fault: str, number: int, story_text: str | None = None) -> str:
    prompt = str(messages[-1].get("content", "")) if messages else ""
    if prompt.startswith("In the following story in single quotes"):
        content = label_answer(prompt, fault)
    else:
        content = story_text if story_text is not None else story_answer(prompt, number)
    if fault == "malformed":
        return "Sure! Output: {name: " + content[:20].replace('"', "") + ", references: [she"
    if fault == "truncated":
        return content[: max(1, len(content) // 2)]
    return content


def chat_completion(server: FakeOpenAI, body: dict[str, Any], fault: str) -> dict[str, Any]:
    messages = body.get("messages") or []
    n = int(body.get("n") or 1) if server.behaviour.honour_n else 1
    prompt_tokens = sum(len(str(message.get("content", ""))) for message in messages) // 4 + 1
    choices, completion_tokens = [], 0
    for index in range(n):
        number = next(server.counter)
        content = chat_content(messages, fault, number, server.behaviour.story_text)
        completion_tokens += len(content) // 4 + 1
        choices.append({"index": index, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content}})
    answer = {"id": f"chatcmpl-{next(server.counter)}", "object": "chat.completion", "created": int(time.time()),
              "model": server.behaviour.reported_model or body.get("model", "fake"), "choices": choices,
              "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens}}
    if server.behaviour.system_fingerprint is not None:
        answer["system_fingerprint"] = server.behaviour.system_fingerprint
    return answer


# ---------------------------------------------------------------- files and batches


def _file_object(file_id: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {"id": file_id, "object": "file", "bytes": len(entry["content"]), "created_at": entry["created_at"],
            "filename": entry["filename"], "purpose": entry["purpose"], "status": "processed"}


def _run_batch(server: FakeOpenAI, batch: dict[str, Any]) -> None:
    source = server.files[batch["input_file_id"]]["content"].decode("utf-8")
    outputs, errors = [], []
    for line in source.splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        fault = server.next_fault()
        if fault in ("429", "500", "drop"):
            errors.append({"id": f"batch_req_{next(server.counter)}", "custom_id": item["custom_id"],
                           "response": {"status_code": 500, "body": {"error": {"message": "server error"}}},
                           "error": {"code": "server_error", "message": "injected failure"}})
            continue
        outputs.append({"id": f"batch_req_{next(server.counter)}", "custom_id": item["custom_id"],
                        "response": {"status_code": 200, "request_id": f"req_{next(server.counter)}",
                                     "body": chat_completion(server, item["body"], fault)}, "error": None})
    now = int(time.time())
    for kind, rows in (("output_file_id", outputs), ("error_file_id", errors)):
        if rows:
            file_id = f"file-{next(server.counter)}"
            server.files[file_id] = {"content": "".join(json.dumps(row) + "\n" for row in rows).encode(),
                                     "filename": f"{batch['id']}_{kind}.jsonl", "purpose": "batch_output",
                                     "created_at": now}
            batch[kind] = file_id
    batch["status"] = "completed"
    batch["completed_at"] = now
    batch["request_counts"] = {"total": len(outputs) + len(errors), "completed": len(outputs),
                               "failed": len(errors)}


# ---------------------------------------------------------------- HTTP


def _make_handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else headers and body wait on delayed ACKs: 40 ms a response

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None,
                  raw: bytes | None = None) -> None:
            data = raw if raw is not None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if raw is None else "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
            self._send(status, {"error": {"message": message, "type": "fake", "code": str(status)}}, headers)

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _authorised(self) -> bool:
            expected = server.behaviour.expected_key
            if expected is not None and self.headers.get("Authorization") != f"Bearer {expected}":
                self._error(401, "Incorrect API key provided.")
                return False
            return True

        def do_POST(self) -> None:  # noqa: N802
            raw = self._body()
            path = self.path.split("?", 1)[0]
            if path == "/_control":
                server.update(**json.loads(raw or b"{}"))
                self._send(200, server.stats())
                return
            if not self._authorised():
                return
            if path == "/v1/chat/completions":
                self._chat(json.loads(raw))
            elif path == "/v1/files":
                self._upload(raw)
            elif path == "/v1/batches":
                self._create_batch(json.loads(raw))
            else:
                self._error(404, f"no route {path}")

        def do_GET(self) -> None:  # noqa: N802
            self._body()
            path = self.path.split("?", 1)[0]
            if path == "/_stats":
                self._send(200, server.stats())
                return
            if not self._authorised():
                return
            parts = path.strip("/").split("/")
            if parts[:2] == ["v1", "files"] and len(parts) >= 3 and parts[2] in server.files:
                entry = server.files[parts[2]]
                if len(parts) == 4 and parts[3] == "content":
                    self._send(200, None, raw=entry["content"])
                else:
                    self._send(200, _file_object(parts[2], entry))
            elif parts == ["v1", "batches"]:
                self._list_batches()
            elif parts[:2] == ["v1", "batches"] and len(parts) == 3 and parts[2] in server.batches:
                batch = server.batches[parts[2]]
                with server.lock:
                    server.batch_polls[batch["id"]] = server.batch_polls.get(batch["id"], 0) + 1
                    polls = server.batch_polls[batch["id"]]
                if batch["status"] != "completed" and polls > server.behaviour.batch_polls_before_done:
                    _run_batch(server, batch)
                elif batch["status"] == "validating":
                    batch["status"] = "in_progress"
                self._send(200, batch)
            else:
                self._error(404, f"no route {path}")

        def _chat(self, body: dict[str, Any]) -> None:
            server.record({"path": "/v1/chat/completions", "json": body, "at": time.monotonic(),
                           "authorization": self.headers.get("Authorization")})
            fault = server.next_fault()
            if server.behaviour.latency:
                time.sleep(server.behaviour.latency)
            if fault == "429":
                self._error(429, "Rate limit reached for requests", {"Retry-After": server.behaviour.retry_after})
            elif fault == "500":
                self._error(500, "The server had an error while processing your request.")
            elif fault == "drop":
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
            else:
                self._send(200, chat_completion(server, body, fault))

        def _upload(self, raw: bytes) -> None:
            header = f"Content-Type: {self.headers.get('Content-Type')}\r\n\r\n".encode()
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(header + raw)
            fields: dict[str, Any] = {}
            filename = "upload.jsonl"
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                if part.get_filename():
                    filename = part.get_filename()
                fields[name] = part.get_payload(decode=True)
            file_id = f"file-{next(server.counter)}"
            server.files[file_id] = {"content": fields.get("file", b""), "filename": filename,
                                     "purpose": (fields.get("purpose") or b"batch").decode(),
                                     "created_at": int(time.time())}
            server.record({"path": "/v1/files", "file_id": file_id})
            self._send(200, _file_object(file_id, server.files[file_id]))

        def _list_batches(self) -> None:
            query = dict(item.split("=", 1) for item in self.path.partition("?")[2].split("&") if "=" in item)
            newest_first = list(reversed(server.batches.values()))
            if query.get("after") in server.batches:
                ids = [batch["id"] for batch in newest_first]
                newest_first = newest_first[ids.index(query["after"]) + 1:]
            limit = int(query.get("limit", 20))
            page = newest_first[:limit]
            self._send(200, {"object": "list", "data": page, "has_more": len(newest_first) > limit,
                             "first_id": page[0]["id"] if page else None,
                             "last_id": page[-1]["id"] if page else None})

        def _create_batch(self, body: dict[str, Any]) -> None:
            if body.get("input_file_id") not in server.files:
                self._error(400, "unknown input_file_id")
                return
            batch_id = f"batch_{next(server.counter)}"
            batch = {"id": batch_id, "object": "batch", "endpoint": body.get("endpoint", "/v1/chat/completions"),
                     "input_file_id": body["input_file_id"], "completion_window": body.get("completion_window", "24h"),
                     "status": "validating", "created_at": int(time.time()), "output_file_id": None,
                     "error_file_id": None, "request_counts": {"total": 0, "completed": 0, "failed": 0},
                     "metadata": body.get("metadata")}
            with server.lock:
                server.batches[batch_id] = batch
            server.record({"path": "/v1/batches", "batch_id": batch_id})
            if server.behaviour.batch_create_delay:
                time.sleep(server.behaviour.batch_create_delay)
            self._send(200, batch)

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--no-record", action="store_true", help="keep no request log (long benchmarks)")
    arguments = parser.parse_args()
    server = FakeOpenAI(Behaviour(latency=arguments.latency, record=not arguments.no_record), port=arguments.port)
    print(server.base_url, flush=True)
    server.httpd.serve_forever()


if __name__ == "__main__":
    main()


def write_models_file(path: Any, base_url: str, key_env: str = "LFH_TEST_KEY", **overrides: Any) -> Any:
    """A models file with a story model `gen` and a labeler `lab` on this server, quick to retry."""
    common = {"base_url": base_url, "api_key_env": key_env, "backoff_base_seconds": 0.01,
              "backoff_max_seconds": 0.05, "max_tries": 6, "timeout_seconds": 5.0,
              "price_prompt_per_million": 1.0, "price_completion_per_million": 2.0}
    tables = {"gen": {"model": "fake-gen", "samples_per_call": 2, "concurrency": 4, **common},
              "lab": {"model": "fake-lab", "concurrency": 8, **common}}
    for name, changes in overrides.items():
        tables[name].update(changes)
    lines = []
    for name, table in tables.items():
        lines.append(f"[models.{name}]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
