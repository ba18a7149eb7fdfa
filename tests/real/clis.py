"""The five real agent CLIs, pinned, installed once into a shared cache, and pointed at a stub.

Why pinned: every wire-format and flag detail the scripted model server relies on was probed
against exactly these versions (see research/real-clis.md); a newer release may change them
silently.

Why a cache outside the repo: the five packages weigh ~1.1 GB (plus copilot's 235 MB first-run
unpack), so a test session must reuse one install instead of paying minutes per run.

``cli_setup`` returns plain strings because they are exactly what a disputatio participant's
``env:`` / ``extra_args:`` / ``model:`` would hold in a YAML config.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from disputatio import adapters

# each CLI at the version its adapter was proven against, as the adapter registry declares it
PINNED: dict[str, str] = {a.name: f"{a.package}@{a.tested_version}"
                          for a in adapters.agents(tested=True)}
NAMES: tuple[str, ...] = tuple(PINNED)

# A fake key every CLI accepts syntactically; the stub never checks it.
STUB_KEY = "sk-stub-disputatio"
# The env var codex's and pi's custom provider read the key from.
STUB_KEY_VAR = "DISPUTATIO_STUB_API_KEY"

_MARKER = ".complete.json"
_NPM_TIMEOUT_S = 1800
_VERSION_TIMEOUT_S = 60
# npm error codes that mean "the registry is not reachable from here", not "the install is bad".
_OFFLINE_HINTS = (
    "ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH",
    "EHOSTUNREACH", "network request to", "request to http", "socket hang up", "ERR_SOCKET",
    "self signed certificate", "UNABLE_TO_GET_ISSUER_CERT",
)


class RealCliUnavailable(Exception):
    """The real CLIs cannot be had here (no npm, registry unreachable); tests should skip."""


def cache_root() -> Path:
    """Where installs live: ``$DISPUTATIO_REAL_CLI_CACHE``, else the user cache dir."""
    env = os.environ.get("DISPUTATIO_REAL_CLI_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "disputatio" / "real-clis"


def cache_dir() -> Path:
    """The install for exactly the pinned versions (a new pin gets a fresh dir)."""
    digest = hashlib.sha256(json.dumps(PINNED, sort_keys=True).encode()).hexdigest()[:12]
    return cache_root() / digest


def dirs_root() -> Path:
    """Where the real tier's per-test directories (CLI homes, repositories) live: beside the
    installs, never under the system temp dir. codex, once ``bwrap`` is on PATH, sandboxes its
    shell tool with it through helper aliases it creates in ``CODEX_HOME``, and refuses to
    create them under the system temp dir ("Refusing to create helper binaries under temporary
    dir"); its shell tool then fails with ``bwrap: execvp codex-linux-sandbox``."""
    return cache_root() / "test-dirs"


def shared_xdg_cache() -> Path:
    """copilot unpacks 235 MB into ``$XDG_CACHE_HOME/copilot`` on first run; share one copy."""
    return cache_dir() / "xdg-cache"


def _bins(prefix: Path) -> dict[str, Path]:
    return {name: prefix / "node_modules" / ".bin" / name for name in NAMES}


def _version_env(prefix: Path) -> dict[str, str]:
    """A minimal env for ``--version`` probes: no user config, copilot's unpack goes to cache."""
    home = prefix / "probe-home"
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "XDG_CACHE_HOME": str(prefix / "xdg-cache"),
        "COPILOT_HOME": str(home / "copilot"),
        "COPILOT_AUTO_UPDATE": "false",
        "COPILOT_OFFLINE": "true",
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GEMINI_CLI_HOME": str(home / "gemini"),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "CODEX_HOME": str(home / "codex"),
        "PI_CODING_AGENT_DIR": str(home / "pi"),
        "PI_OFFLINE": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def _version_of(bin_path: Path, prefix: Path) -> str | None:
    """The CLI's ``--version`` output, or None when it does not run."""
    if not bin_path.exists():
        return None
    try:
        proc = subprocess.run(
            [str(bin_path), "--version"], stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=_VERSION_TIMEOUT_S, env=_version_env(prefix), cwd=prefix,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return (proc.stdout or proc.stderr).strip() or None


def _verify(prefix: Path) -> dict[str, str] | None:
    """Every pinned CLI runs and reports the pinned version; None when any does not."""
    bins = _bins(prefix)
    with ThreadPoolExecutor(max_workers=len(bins)) as pool:  # gemini and pi take ~2 s each
        outs = pool.map(lambda p: _version_of(p, prefix), bins.values())
        found = dict(zip(bins, outs, strict=True))
    for name, out in found.items():
        if out is None or PINNED[name].rsplit("@", 1)[1] not in out:
            return None
    return {name: out for name, out in found.items() if out is not None}


def _fix_claude_placeholder(prefix: Path) -> None:
    """claude ships a placeholder ``bin/claude.exe``; its postinstall puts the native binary there.

    When npm skipped install scripts (``--ignore-scripts``, a policy, a future npm), run the
    package's ``install.cjs`` ourselves.
    """
    pkg = prefix / "node_modules" / "@anthropic-ai" / "claude-code"
    if _version_of(_bins(prefix)["claude"], prefix) is not None or not pkg.is_dir():
        return
    script = pkg / "install.cjs"
    if script.exists():
        subprocess.run(["node", str(script)], cwd=pkg, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=300, check=False)


def _npm_install(prefix: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise RealCliUnavailable("npm is not on PATH; cannot install the real agent CLIs")
    if shutil.which("node") is None:
        raise RealCliUnavailable("node is not on PATH; the real agent CLIs need it")
    (prefix / "package.json").write_text('{"name": "disputatio-real-clis", "private": true}\n')
    cmd = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), *PINNED.values()]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=_NPM_TIMEOUT_S, cwd=prefix)
    except subprocess.TimeoutExpired as exc:
        raise RealCliUnavailable(f"npm install timed out after {_NPM_TIMEOUT_S}s") from exc
    if proc.returncode != 0:
        text = proc.stderr or proc.stdout
        if any(hint in text for hint in _OFFLINE_HINTS):
            raise RealCliUnavailable(f"npm cannot reach its registry: {_npm_reason(text)}")
        tail = "\n".join(text.strip().splitlines()[-15:])
        raise RuntimeError(f"npm install of the real CLIs failed (exit {proc.returncode}):\n{tail}")


def _npm_reason(text: str) -> str:
    """The one or two telling lines of an npm failure (its code and the failed request)."""
    keep = [ln.removeprefix("npm error").strip() for ln in text.splitlines()
            if ln.startswith("npm error code") or "FetchError" in ln or "request to" in ln]
    return "; ".join(keep[:2]) or text.strip().splitlines()[-1]


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive inter-process lock, so concurrent sessions install only once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _complete(prefix: Path) -> bool:
    marker = prefix / _MARKER
    if not marker.exists():
        return False
    try:
        return json.loads(marker.read_text()).get("pinned") == PINNED
    except (OSError, ValueError):
        return False


def ensure_installed() -> dict[str, Path]:
    """Install the five pinned CLIs once and return ``{name: path to its bin}``.

    Reuses ``cache_dir()`` when it is marked complete (the marker is written only after every
    bin answered ``--version`` with the pinned version) and every bin is still there: a
    ``--version`` that is merely slow on a loaded machine must never throw away an install
    that other test sessions are running. Otherwise installs into a sibling temp dir under a
    file lock and renames it into place, so a crashed or concurrent run never leaves a
    half-install behind. Raises ``RealCliUnavailable`` when npm or its registry is not
    reachable.
    """
    final = cache_dir()
    if _usable(final):
        return _bins(final)
    with _locked(final.with_name(final.name + ".lock")):
        if _usable(final):  # another process finished it
            return _bins(final)
        staging = Path(tempfile.mkdtemp(prefix=final.name + ".staging-", dir=final.parent))
        staging.chmod(0o755)
        try:
            started = time.monotonic()
            _npm_install(staging)
            _fix_claude_placeholder(staging)
            # probes also unpack copilot's payload into the staging xdg-cache, which moves along
            versions = _verify(staging)
            if versions is None:
                broken = {n: _version_of(p, staging) for n, p in _bins(staging).items()}
                raise RuntimeError(f"installed CLIs do not report the pinned versions: {broken}")
            (staging / _MARKER).write_text(json.dumps({
                "pinned": PINNED, "versions": versions,
                "install_seconds": round(time.monotonic() - started, 1),
            }, indent=2))
            # a broken install may still be in use (copilot's cache, a probe's home): move it
            # aside in one rename, then remove it as far as it lets us
            old = final.with_name(f"{final.name}.old-{os.getpid()}") if final.exists() else None
            if old is not None:
                os.rename(final, old)
            os.rename(staging, final)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    if _verify(final) is None:
        raise RuntimeError(f"the real CLIs in {final} do not run after the move")
    return _bins(final)


def _usable(prefix: Path) -> bool:
    return _complete(prefix) and all(p.exists() for p in _bins(prefix).values())


def cli_setup(
    name: str, server_url: str, home: Path,
) -> tuple[dict[str, str], list[str], str | None]:
    """Env additions, extra argv and model that point CLI ``name`` at ``server_url``.

    Everything a CLI writes goes under ``home`` (created here, with the config files a CLI
    needs). The env also sets ``HOME`` so nothing leaks into the real user's dotfiles. The
    model is a value for the CLI's own model flag (``--model``/``-m``); ``None`` = its default.
    Retry knobs are turned down so a scripted 401/429/500 fails after one request in ~1-3 s;
    copilot is the exception (no known knob: a 401 takes ~3 s, a 429/500 15-60 s).
    """
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    url = server_url.rstrip("/")
    env: dict[str, str] = {"HOME": str(home)}
    args: list[str] = []
    model: str | None
    if name == "claude":
        cfg = home / "claude"
        cfg.mkdir(exist_ok=True)
        env.update({
            "CLAUDE_CONFIG_DIR": str(cfg),
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": STUB_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # without this a 401 or 500 is retried for more than 90 s
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "DISABLE_AUTOUPDATER": "1",
        })
        model = "sonnet"  # a local alias; the request then names claude-sonnet-5
    elif name == "codex":
        cfg = home / "codex"
        cfg.mkdir(exist_ok=True)
        env.update({"CODEX_HOME": str(cfg), STUB_KEY_VAR: STUB_KEY})
        provider = (
            f'{{name="stub",base_url="{url}/v1",env_key="{STUB_KEY_VAR}",'
            'wire_api="responses",request_max_retries=0,stream_max_retries=0}'
        )
        # a custom provider speaks plain HTTP POST; the built-in one tries websockets first
        args = ["-c", "model_provider=stub", "-c", f"model_providers.stub={provider}"]
        model = "gpt-5.5"  # a name codex has metadata for, so no "metadata not found" item
    elif name == "gemini":
        cfg = home / "gemini"
        (cfg / ".gemini").mkdir(parents=True, exist_ok=True)
        tmp = cfg / "tmp"
        tmp.mkdir(exist_ok=True)
        # GOOGLE_GEMINI_BASE_URL alone selects the "gateway" auth type, which is rejected
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            # fail fast: a 429/500 is otherwise retried with backoff for more than 90 s
            "general": {"maxAttempts": 1},
        }
        (cfg / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2))
        env.update({
            "GEMINI_CLI_HOME": str(cfg),
            "GOOGLE_GEMINI_BASE_URL": url,
            "GEMINI_API_KEY": STUB_KEY,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            # it dumps gemini-client-error-*.json (with the conversation) into $TMPDIR
            "TMPDIR": str(tmp),
        })
        model = "gemini-2.5-flash"  # an explicit model also skips the router request
    elif name == "copilot":
        cfg = home / "copilot"
        cfg.mkdir(exist_ok=True)
        xdg = shared_xdg_cache()
        xdg.mkdir(parents=True, exist_ok=True)
        env.update({
            "COPILOT_HOME": str(cfg),
            "XDG_CACHE_HOME": str(xdg),
            "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
            "COPILOT_PROVIDER_API_KEY": STUB_KEY,
            "COPILOT_MODEL": "gpt-5.4",
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
        })
        model = "gpt-5.4"
    elif name == "pi":
        cfg = home / "pi"
        cfg.mkdir(exist_ok=True)
        models = {"providers": {"stub": {
            "baseUrl": f"{url}/v1", "api": "openai-completions", "apiKey": STUB_KEY_VAR,
            "models": [{"id": "stub-chat", "reasoning": True}],
        }}}
        (cfg / "models.json").write_text(json.dumps(models, indent=2))
        # fail fast: no session-level auto-retry (2/4/8 s) and no SDK-level retries
        settings = {"retry": {"enabled": False, "provider": {"maxRetries": 0}}}
        (cfg / "settings.json").write_text(json.dumps(settings, indent=2))
        env.update({
            "PI_CODING_AGENT_DIR": str(cfg),
            "PI_CODING_AGENT_SESSION_DIR": str(cfg / "sessions"),
            "PI_OFFLINE": "1",
            STUB_KEY_VAR: STUB_KEY,
        })
        model = "stub/stub-chat"  # pi wants <provider>/<id>
    else:
        raise ValueError(f"unknown CLI {name!r}; known: {', '.join(NAMES)}")
    return env, args, model


def participant_entry(name: str, bin_path: Path, server_url: str, home: Path,
                      display: str | None = None) -> dict:
    """One disputatio participant entry (as YAML data) for CLI ``name`` from ``cli_setup``."""
    env, args, model = cli_setup(name, server_url, home)
    entry: dict = {"adapter": name, "name": display or name, "bin": str(bin_path),
                   "env": {**env, "TERM": "dumb"}}
    if model:
        entry["model"] = model
    if args:
        entry["extra_args"] = args
    return entry


def write_lineup(path: Path, bins: dict[str, Path], server_url: str, homes: Path,
                 names: tuple[str, ...] = NAMES, judge: str = "claude",
                 **top: object) -> Path:
    """A disputatio config with every CLI in ``names`` pointed at ``server_url``.

    Each participant gets its own home under ``homes``. The judge is CLI ``judge`` set up
    exactly like that participant (same home), so ``--doctor`` checks it once.
    """
    import yaml  # the real tier runs inside disputatio's venv, which has pyyaml

    participants = [participant_entry(n, bins[n], server_url, homes / n) for n in names]
    judge_entry = participant_entry(judge, bins[judge], server_url, homes / judge,
                                    display="judge")
    data = {**top, "participants": participants, "judge": judge_entry}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal process environment for running disputatio itself: no user config, no keys."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "TERM": "dumb",
            "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            # copilot's ``--version`` probe (run without the participant's env) unpacks 235 MB
            # into $XDG_CACHE_HOME on first use: point it at the shared, already unpacked copy
            "XDG_CACHE_HOME": str(shared_xdg_cache()), **extra}


def lingering(marker: str) -> list[tuple[int, str]]:
    """Live processes whose environment or command line mentions ``marker`` (pid, cmdline)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes()
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z":
            continue
        if marker.encode() in environ or marker.encode() in cmdline:
            found.append((int(proc.name), cmdline.replace(b"\0", b" ").decode(errors="replace")))
    return found
