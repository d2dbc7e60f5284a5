"""What a model server's own error words mean, when they name a cause a person can fix.

Local servers fail in a few ways a generic "the endpoint rejected the request (400)" does not
explain: the prompt is longer than the model's window, no model is loaded (yet), the machine ran out
of memory, or the server/model cannot take tool definitions. Each gets its own kind, sentence and
next step; `describe_failure` asks here first. The words matched are the servers' own (OpenAI, vLLM,
llama.cpp and llama-cpp-python, Ollama, LM Studio).
"""

from __future__ import annotations

from dataclasses import dataclass

from nanobot_desktop.engine.llm.context_window import requested_from_error, window_from_error

_OVERFLOW_WORDS = ("context_length_exceeded", "maximum context length", "context length", "context window",
                   "exceeds the available context", "n_ctx", "input length exceeds", "too many tokens",
                   "prompt is too long")
_NOT_LOADED_WORDS = ("model not loaded", "no model loaded", "no models loaded", "loading model", "model is loading",
                     "failed to load model", "model is not loaded", "model not found, try pulling")
_MEMORY_WORDS = ("out of memory", "cuda error: out of memory", "failed to allocate", "insufficient memory",
                 "not enough memory", "cudamalloc failed", "oom-kill", "requires more system memory")
_TOOLS_WORDS = ("does not support tools", "tools are not supported", "tool calling is not supported",
                "tools param requires", "tool_choice is not supported", "function calling is not supported",
                "does not support function calling", "\"auto\" tool choice requires")


@dataclass(frozen=True)
class Diagnosis:
    kind: str  # "context_overflow", "model_not_loaded", "out_of_memory", "tools_unsupported"
    sentence: str  # the facts' name for the GUI's wording
    text: str
    window: int | None = None  # the window an overflow named
    requested: int | None = None  # the prompt size it named


def diagnose(status: int | None, said: str, code: str | None, model: str | None) -> Diagnosis | None:
    """The cause the server's words (`said`, its error `code`) name, or None for no known one."""
    words = f"{code or ''} {said}".lower()
    name = f"'{model}'" if model else "the model"
    quoted = f" (it said: “{said}”)" if said else ""
    if any(word in words for word in _OVERFLOW_WORDS) and status in (None, 400, 413, 422, 500):
        window, requested = window_from_error(said), requested_from_error(said)
        sizes = (f" ({requested:,} tokens asked for, {window:,} fit)" if requested and window
                 else f" of {window:,} tokens" if window else quoted)
        return Diagnosis("context_overflow", "context_overflow", (
            f"The conversation is longer than the context window of {name}{sizes}. Start a new chat (/new), or give "
            "the model a larger window on the server (llama.cpp: --n_ctx; Ollama: num_ctx; LM Studio: Context "
            "Length) and set it in Settings."), window, requested)
    if any(word in words for word in _TOOLS_WORDS):
        return Diagnosis("tools_unsupported", "tools_unsupported", (
            f"The server cannot give {name} tool definitions{quoted}. The agent goes on as plain chat without tools; "
            "for tools, pick a model made for tool calling or start the server with its tool-calling template "
            "(llama.cpp: --jinja)."))
    if any(word in words for word in _MEMORY_WORDS):
        return Diagnosis("out_of_memory", "out_of_memory", (
            f"The server ran out of memory running {name}{quoted}. Pick a smaller model or quantisation, lower the "
            "server's context size, or close other programs, then send again."))
    if any(word in words for word in _NOT_LOADED_WORDS) or (status == 503 and "loading" in words):
        return Diagnosis("model_not_loaded", "model_not_loaded", (
            f"The server has not loaded {name}{quoted}. Load it in the server (LM Studio: load the model; Ollama: "
            "ollama pull / ollama run it; llama.cpp: wait until it has finished loading), then send again."))
    return None
