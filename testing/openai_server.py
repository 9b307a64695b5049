"""A local HTTP server that speaks the OpenAI chat completions API with scripted replies, for tests
that drive git-retcon through llm's own OpenAI client: the path users of Ollama, LM Studio,
vLLM and llama.cpp's server take (an `extra-openai-models.yaml` naming http://127.0.0.1:PORT/v1).

The script has testing/scripted_model.py's shape, keyed by the step the request's first user
message names ("1/extract", "2/fix/1", "plan", ...), the turn by the number of assistant
messages so far. A turn may hold:

- "calls": native tool calls (`tool_calls` in the reply), arguments expanded as the scripted
  model expands them ("$ids:PREFIX" from the ids the prompt and the answers so far show);
- "written": calls written into the reply's text, in "form" (scripted_model.written's shapes);
- "text": the reply's text; "json": a JSON value sent as the text (a plan's structured answer);
- "usage": {"prompt_tokens", "completion_tokens", "cached_tokens"} reported for the reply
  (default: the request's characters / 4, nothing cached);
- "status": an HTTP error status (500, 429) answered "times" times (default: every time)
  before the turn plays.

A request with "stream": true is answered as server-sent events, a tool call's arguments cut
in pieces, usage in a last chunk. Every request is kept in `requests` (the JSON body).
"""
from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from git_retcon import diff
from testing.scripted_model import _expand, step_keys, written


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):   # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class Scripted:
    """The script and what was asked of it."""

    def __init__(self, script: dict[str, list[dict[str, Any]]]):
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.failed: Counter[str] = Counter()
        self.lock = threading.Lock()

    def turn(self, body: dict[str, Any]) -> tuple[str, dict[str, Any], list[tuple[str, str]], str]:
        messages = body.get("messages") or []
        users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
        prompt = users[0] if users else ""
        answers = [_text(m.get("content")) for m in messages if m.get("role") == "tool"] + users[1:]
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        keys = step_keys(prompt)
        turns = next((self.script[k] for k in keys if k in self.script), [])
        play = turns[turn] if turn < len(turns) else {"text": "I have nothing more to do."}
        seen = [(h.id, h.path) for text in [prompt, *answers] for h in diff.read_hunks(text) + diff.read_index(text)]
        return f"{keys[0]}#{turn}", play, seen, prompt


def _completion(body: dict[str, Any], play: dict[str, Any], seen: list[tuple[str, str]],
                prompt: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """The reply's text, tool calls (OpenAI's shape) and usage."""
    text = play.get("text", "")
    if "json" in play:
        text = json.dumps(_expand(play["json"], seen, prompt))
    wrote = [{"name": c["name"], "arguments": _expand(c.get("arguments", {}), seen, prompt)}
             for c in play.get("written", [])]
    if wrote:
        text = (text + "\n\n" if text else "") + written(wrote, play.get("form", "fenced"))
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": c["name"], "arguments": json.dumps(_expand(c.get("arguments", {}), seen, prompt))}}
             for i, c in enumerate(play.get("calls", []))]
    chars = len(json.dumps(body.get("messages"))) + len(json.dumps(body.get("tools") or []))
    given = play.get("usage", {})
    usage: dict[str, Any] = {"prompt_tokens": given.get("prompt_tokens", max(chars // 4, 1)),
                             "completion_tokens": given.get("completion_tokens", max(len(text) // 4, 1))}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    if given.get("cached_tokens"):
        usage["prompt_tokens_details"] = {"cached_tokens": given["cached_tokens"]}
    return text, calls, usage


def _chunks(model: str, text: str, calls: list[dict[str, Any]], usage: dict[str, Any],
            with_usage: bool) -> Iterator[dict[str, Any]]:
    """The reply as a stream: the text in pieces, each call's name then its arguments in pieces."""
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    yield chunk({"role": "assistant", "content": ""})
    for i in range(0, len(text), 7):
        yield chunk({"content": text[i:i + 7]})
    for n, c in enumerate(calls):
        yield chunk({"tool_calls": [{"index": n, "id": c["id"], "type": "function",
                                     "function": {"name": c["function"]["name"], "arguments": ""}}]})
        args = c["function"]["arguments"]
        for i in range(0, len(args), 5):
            yield chunk({"tool_calls": [{"index": n, "function": {"arguments": args[i:i + 5]}}]})
    yield chunk({}, "tool_calls" if calls else "stop")
    if with_usage:
        yield {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": model,
               "choices": [], "usage": usage}


class _Handler(BaseHTTPRequestHandler):
    scripted: Scripted

    def log_message(self, format: str, *args: Any) -> None:   # quiet
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:   # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        s = self.scripted
        with s.lock:
            s.requests.append(body)
            key, play, seen, prompt = s.turn(body)
            status = play.get("status")
            if status and (play.get("times") is None or s.failed[key] < play["times"]):
                s.failed[key] += 1
                failing = True
            else:
                failing = False
        if not self.path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        if failing:
            self._send(int(status), {"error": {"message": "the server had an error while processing your request",
                                               "type": "server_error", "code": None}})
            return
        text, calls, usage = _completion(body, play, seen, prompt)
        model = body.get("model", "local")
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            for event in _chunks(model, text, calls, usage, with_usage):
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            return
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = calls
        self._send(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
                         "choices": [{"index": 0, "message": message,
                                      "finish_reason": "tool_calls" if calls else "stop"}],
                         "usage": usage})


@contextmanager
def serving(script: dict[str, list[dict[str, Any]]]) -> Iterator[tuple[str, Scripted]]:
    """The server on a free loopback port: yields its base URL (…/v1) and the Scripted state."""
    scripted = Scripted(script)
    handler = type("Handler", (_Handler,), {"scripted": scripted})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", scripted
    finally:
        httpd.shutdown()
        httpd.server_close()


def configure(llm_dir: Path, api_base: str, model_id: str = "local-coder", *, tools: bool = True,
              schema: bool = False, stream: bool = True) -> str:
    """An llm user directory's extra-openai-models.yaml naming the server, as a user writes it."""
    llm_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"- model_id: {model_id}", "  model_name: local-coder-1.5b", f'  api_base: "{api_base}"']
    if tools:
        lines.append("  supports_tools: true")
    if schema:
        lines.append("  supports_schema: true")
    if not stream:
        lines.append("  can_stream: false")
    (llm_dir / "extra-openai-models.yaml").write_text("\n".join(lines) + "\n")
    return model_id
