"""The one LLM client layer: google-genai, any OpenAI-compatible endpoint, and a
recorded-response client for tests. Used by the loader (graph extraction) and by
PL/Python functions (answers, HyDE, judging) alike.

Configuration comes from the environment of the process that calls the model:
the loader's shell, or the PostgreSQL server's own environment for in-database
calls (so no API key is ever stored in a table a reader could select):

  SCIRAG_LLM_PROVIDER   google | openai | recorded | none (default: none = offline defaults)
  SCIRAG_LLM_MODEL      model name (google default gemini-2.5-flash)
  GOOGLE_API_KEY        for google
  SCIRAG_OPENAI_BASE_URL, SCIRAG_OPENAI_API_KEY   for openai-compatible servers (Ollama, vLLM, llama.cpp)
  SCIRAG_LLM_RECORDING  JSON file of recorded responses, for recorded
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Protocol


class LLMError(RuntimeError):
    """A model call failed or returned something unusable; the message says which provider and why."""


class LLMClient(Protocol):
    name: str

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        temperature: float = 0.0,
        json_mode: bool = False,
        max_tokens: int = 1024,
    ) -> str: ...


def prompt_key(prompt: str, system: str | None = None) -> str:
    """Recordings are keyed by a hash of what the model was shown."""
    return hashlib.sha256(((system or "") + "\x1e" + prompt).encode("utf-8")).hexdigest()


@dataclass
class GoogleGenAIClient:
    model: str = "gemini-2.5-flash"
    api_key: str | None = None
    name: str = "google-genai"

    def complete(self, prompt, *, system=None, temperature=0.0, json_mode=False, max_tokens=1024):
        try:
            from google import genai
            from google.genai import types
        except ImportError as exc:  # pragma: no cover - installed by requirements.txt
            raise LLMError("google-genai is not installed") from exc
        try:
            client = genai.Client(api_key=self.api_key or os.environ.get("GOOGLE_API_KEY"))
            cfg = types.GenerateContentConfig(
                system_instruction=system,
                temperature=temperature,
                max_output_tokens=max_tokens,
                response_mime_type="application/json" if json_mode else None,
            )
            resp = client.models.generate_content(model=self.model, contents=prompt, config=cfg)
        except Exception as exc:  # every provider failure becomes one error type
            raise LLMError(f"google-genai call to {self.model} failed: {exc}") from exc
        if not resp.text:
            raise LLMError(f"google-genai model {self.model} returned no text")
        return resp.text


@dataclass
class OpenAICompatibleClient:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    name: str = "openai-compatible"

    def complete(self, prompt, *, system=None, temperature=0.0, json_mode=False, max_tokens=1024):
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        body = {"model": self.model, "messages": messages, "temperature": temperature, "max_tokens": max_tokens}
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        req = urllib.request.Request(
            self.base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}),
            },
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                payload = json.loads(r.read())
            return payload["choices"][0]["message"]["content"]
        except (urllib.error.URLError, OSError, KeyError, IndexError, ValueError) as exc:
            raise LLMError(f"OpenAI-compatible call to {self.base_url} ({self.model}) failed: {exc}") from exc


@dataclass
class RecordedClient:
    """Replays recorded responses: {"by_prompt": {sha256: text}, "in_order": [text, ...]}.
    Every prompt it is shown is kept in ``seen`` so tests can assert what a model saw."""

    recording: dict
    name: str = "recorded"
    seen: list = field(default_factory=list)

    @classmethod
    def from_file(cls, path: str) -> "RecordedClient":
        with open(path, encoding="utf-8") as fh:
            return cls(json.load(fh))

    def complete(self, prompt, *, system=None, temperature=0.0, json_mode=False, max_tokens=1024):
        self.seen.append({"system": system, "prompt": prompt, "temperature": temperature, "json_mode": json_mode})
        by_prompt = self.recording.get("by_prompt", {})
        key = prompt_key(prompt, system)
        if key in by_prompt:
            return by_prompt[key]
        queue = self.recording.setdefault("in_order", [])
        if queue:
            return queue.pop(0)
        raise LLMError(f"no recorded response for prompt {key[:12]}")


def get_llm(env: dict | None = None) -> LLMClient | None:
    """The configured client, or None for the offline defaults."""
    env = os.environ if env is None else env
    provider = (env.get("SCIRAG_LLM_PROVIDER") or "none").lower()
    if provider in ("", "none", "offline"):
        return None
    if provider == "google":
        return GoogleGenAIClient(
            model=env.get("SCIRAG_LLM_MODEL") or "gemini-2.5-flash", api_key=env.get("GOOGLE_API_KEY")
        )
    if provider == "openai":
        base = env.get("SCIRAG_OPENAI_BASE_URL")
        if not base:
            raise LLMError("SCIRAG_LLM_PROVIDER=openai needs SCIRAG_OPENAI_BASE_URL (e.g. http://localhost:11434/v1)")
        return OpenAICompatibleClient(
            base_url=base, model=env.get("SCIRAG_LLM_MODEL") or "llama3.1", api_key=env.get("SCIRAG_OPENAI_API_KEY")
        )
    if provider == "recorded":
        path = env.get("SCIRAG_LLM_RECORDING")
        if not path:
            raise LLMError("SCIRAG_LLM_PROVIDER=recorded needs SCIRAG_LLM_RECORDING (a JSON file)")
        return RecordedClient.from_file(path)
    raise LLMError(f"SCIRAG_LLM_PROVIDER '{provider}' is not one of google, openai, recorded, none")


def parse_json_response(text: str) -> object:
    """Parses a model's JSON answer, tolerating a ```json fence; anything else raises LLMError."""
    s = text.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[1] if "\n" in s else ""
        s = s.rsplit("```", 1)[0]
    try:
        return json.loads(s)
    except json.JSONDecodeError as exc:
        raise LLMError(f"model output is not valid JSON ({exc.msg} at position {exc.pos})") from None
