"""The dashboard inside Jupyter: ``%load_ext visualdl``, then ``%visualdl --logdir runs``.

The magic takes the flags of the ``visualdl`` command and shows the dashboard in the cell's
output, in an iframe. ``display(...)`` does the same from code; ``start(...)``, ``list()``
and ``stop(port)`` manage the servers without showing anything.

Each server is the real command (``python -m visualdl ...``) in a process of its own, on a
free loopback port unless ``--port`` is given, so that it outlives a kernel restart and a
long read of the logs never blocks the kernel. A registry of the servers started (one JSON
file per server in ``$VISUALDL_NOTEBOOK_DIR``, by default a per-user folder in the temp
directory) lets a second ``%visualdl`` with the same arguments, from any kernel, reuse the
running server instead of starting another: an entry counts only while its process lives
and its port answers. Arguments are compared after parsing, with paths made absolute, so
``--logdir runs`` and ``--logdir ./runs/`` from the same folder are one server.

Where the iframe points is :func:`frame_url`'s choice, explained there; it is what makes
the dashboard show up on JupyterHub and in VS Code, where TensorBoard's notebook iframe
famously says "localhost refused to connect".
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import html
import importlib
import importlib.util
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

__all__ = [
    "DEFAULT_HEIGHT", "PROXY_URL_ENV", "REGISTRY_ENV", "ServerInfo", "display", "frame_url",
    "list", "load_ipython_extension", "start", "stop", "stop_all",
]

#: A URL template for the iframe (``https://hub.example.org/user/me/proxy/{port}/``).
PROXY_URL_ENV = "VISUALDL_PROXY_URL"
#: The folder of the registry of started servers (default: in the temp directory).
REGISTRY_ENV = "VISUALDL_NOTEBOOK_DIR"
#: The iframe's height in pixels.
DEFAULT_HEIGHT = 800
#: Seconds a new server has to print its address.
START_TIMEOUT = 60.0

_SERVING = re.compile(r"serving at http://(\S+?):(\d+)(/\S*)")
_LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0", "::", ""}
# Servers this process started: their Popen objects reap them when they stop (a dead child
# stays a zombie, which os.kill(pid, 0) would still find alive).
_children: dict[int, subprocess.Popen] = {}


@dataclass(frozen=True)
class ServerInfo:
    """A visualdl server started from a notebook, as its registry entry records it.

    ``url`` is its address from this machine; the iframe's address is :func:`frame_url`'s.
    ``reused`` says whether :func:`start` found it running rather than starting it.
    """

    port: int
    pid: int
    args: tuple[str, ...]
    host: str = "127.0.0.1"
    path_prefix: str = ""
    started: float = 0.0
    version: str = ""
    cwd: str = field(default="", repr=False)
    key: str = field(default="", repr=False)
    log: str = field(default="", repr=False)
    reused: bool = field(default=False, compare=False)

    @property
    def url(self) -> str:
        host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "localhost": "127.0.0.1",
                "::": "::1"}.get(self.host, self.host)
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}{self.path_prefix}/"

    def _entry(self) -> dict[str, Any]:
        entry = asdict(self)
        entry.pop("reused")
        entry["args"] = builtins.list(self.args)
        return entry

    @classmethod
    def _from_entry(cls, entry: dict[str, Any]) -> "ServerInfo":
        known = {f.name for f in fields(cls)} - {"reused", "args"}  # a newer one may add some
        return cls(**{k: v for k, v in entry.items() if k in known},
                   args=tuple(entry["args"]))


# --------------------------------------------------------------------------- public API


def start(args: str | Sequence[str | os.PathLike] | None = None, *,
          logdir: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
          port: int | None = None, timeout: float = START_TIMEOUT) -> ServerInfo:
    """Start a server for ``args`` (the ``visualdl`` command's flags, as one string or a
    list; bare folders, such as ``start("runs")``, are logdirs), or reuse the one already
    running for the same arguments.

    ``logdir`` and ``port`` are shortcuts for ``--logdir`` and ``--port``. Without a port
    the server takes a free one. Raises ValueError for bad arguments (argparse's message)
    and RuntimeError when the server exits at start (its own message, e.g. a missing
    logdir).
    """
    argv = _argv(args, logdir, port)
    namespace = _parse(argv)
    key = _key(namespace)
    with _registry_locked():
        for info in _entries():
            if info.key == key and _answers(info):
                return replace(info, reused=True)
        return _launch(argv, namespace, key, timeout)


def display(args: str | Sequence[str | os.PathLike] | None = None, *,
            logdir: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
            port: int | None = None, height: int = DEFAULT_HEIGHT) -> None:
    """Show the dashboard in the notebook: what ``%visualdl ARGS`` does, from code.

    With ``args`` or ``logdir``, a server is started (or reused, see :func:`start`) first.
    With only ``port``, the server already listening there is shown (one of :func:`list`,
    with its path prefix, or any visualdl server on that port). ``height`` is the iframe's
    height in pixels.
    """
    height = _height(height)
    if args is None and logdir is None:
        if port is None:
            raise ValueError("display() needs args (such as '--logdir runs'), logdir or port")
        known = [info for info in list() if info.port == _port_number(port)]
        prefix = known[0].path_prefix if known else ""
        _show(frame_url(_port_number(port), prefix), height)
        return
    info = start(args, logdir=logdir, port=port)
    print(_announcement(info))
    _show(frame_url(info.port, info.path_prefix, info.host), height)


def list() -> builtins.list[ServerInfo]:  # noqa: A001 - the notebook API's name, as TensorBoard's
    """The servers started from notebooks that are still running, oldest first.

    Entries whose process has ended are removed on the way.
    """
    return _entries()


def stop(port: int, timeout: float = 10.0) -> bool:
    """Stop the server started from a notebook on ``port``: SIGTERM (the command then shuts
    down cleanly), SIGKILL after ``timeout`` seconds. False when no such server is known.

    Only processes in the registry are ever signalled, by their process id.
    """
    port = _port_number(port)
    with _registry_locked():
        for info in _entries():
            if info.port == port:
                _terminate(info, timeout)
                return True
    return False


def stop_all(timeout: float = 10.0) -> int:
    """Stop every server of :func:`list`; returns how many there were."""
    with _registry_locked():
        infos = _entries()
        for info in infos:
            _terminate(info, timeout)
    return len(infos)


def frame_url(port: int, path_prefix: str = "", host: str = "127.0.0.1") -> str:
    """The address the notebook's iframe loads for a server on ``port``.

    The iframe is loaded by the *browser*, which may not run where the kernel runs, so the
    server's own address is often the wrong one. In order:

    1. ``$VISUALDL_PROXY_URL``, a template such as
       ``https://hub.example.org/user/me/proxy/{port}/``: whatever the setup, the user
       knows best (a remote JupyterHub, a VS Code tunnel, an SSH-forwarded proxy). A URL
       without ``{port}`` gets ``PORT/`` appended.
    2. jupyter-server-proxy's ``<base_url>proxy/PORT/``, on the Jupyter server's own origin,
       when the kernel runs under JupyterHub (``$JUPYTERHUB_SERVICE_PREFIX`` gives the base
       URL; the browser can reach nothing else there) or under a Jupyter server found to be
       the kernel's parent with jupyter-server-proxy installed (its base URL is read from
       Jupyter's runtime files). The proxy strips ``/proxy/PORT``, so the server answers at
       its root, or at its ``--path-prefix`` which is appended.
    3. Otherwise ``http://localhost:PORT/``: the browser runs on this machine (a local
       Jupyter, VS Code, which also forwards localhost ports of a remote machine). Not
       127.0.0.1, as VS Code recognizes and forwards "localhost" addresses. A server bound
       to a specific other address is shown at that address.
    """
    port = _port_number(port)
    tail = f"{path_prefix.strip('/')}/" if path_prefix.strip("/") else ""
    template = os.environ.get(PROXY_URL_ENV, "").strip()
    if template:
        if "{port}" in template:
            base = template.replace("{port}", str(port))
        else:
            base = f"{template.rstrip('/')}/{port}"
        return f"{base.rstrip('/')}/{tail}"
    base_url = _jupyter_proxy_base()
    if base_url is not None:
        return f"{base_url}proxy/{port}/{tail}"
    if host not in _LOOPBACK:
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/{tail}"
    return f"http://localhost:{port}/{tail}"


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext visualdl``: registers the ``%visualdl`` line magic."""
    ipython.register_magic_function(_magic, magic_kind="line", magic_name="visualdl")


# --------------------------------------------------------------------------- the magic


def _magic(line: str) -> None:
    """%visualdl --logdir DIR [flags of the visualdl command]: show the dashboard inline,
    starting a server or reusing the one running for the same flags."""
    try:
        argv = shlex.split(line)
    except ValueError as err:
        print(f"visualdl: error: {err}", file=sys.stderr)
        return
    if argv[:1] == ["inspect"]:  # the command's other verb: its report, printed
        done = subprocess.run([sys.executable, "-m", "visualdl", *argv], capture_output=True,
                              text=True, stdin=subprocess.DEVNULL)
        print(done.stdout, end="")
        print(done.stderr, end="", file=sys.stderr)
        return
    try:
        info = start(argv)
    except _Exit as done:  # --help, --version
        print(done.text, end="")
        return
    except (ValueError, RuntimeError, TimeoutError) as err:
        print(f"visualdl: error: {err}", file=sys.stderr)
        return
    print(_announcement(info))
    _show(frame_url(info.port, info.path_prefix, info.host), DEFAULT_HEIGHT)


def _announcement(info: ServerInfo) -> str:
    if info.reused:
        ago = _duration(time.time() - info.started)
        return (f"Reusing visualdl on port {info.port} (pid {info.pid}), started {ago} ago; "
                f"visualdl.notebook.stop({info.port}) stops it.")
    return (f"Started visualdl on port {info.port} (pid {info.pid}); "
            f"visualdl.notebook.stop({info.port}) stops it.")


def _show(url: str, height: int) -> None:
    """The iframe (text/html), and the address as text for consoles and logs."""
    src = html.escape(url, quote=True)
    frame_id = f"visualdl-frame-{uuid.uuid4().hex[:12]}"
    markup = (
        f'<iframe id="{frame_id}" class="visualdl-frame" src="{src}" width="100%" '
        f'height="{height}" style="border: 0" title="visualdl dashboard" '
        f'allow="clipboard-write; fullscreen"></iframe>\n'
        f'<div><a href="{src}" target="_blank" rel="noopener">Open the visualdl dashboard '
        f'in a new tab</a></div>'
    )
    bundle = {"text/html": markup, "text/plain": f"visualdl dashboard: {url}"}
    try:
        from IPython import get_ipython
        from IPython.display import display as ipython_display
    except ImportError:
        get_ipython = None
    if get_ipython is None or get_ipython() is None:  # a plain script: the address it is
        print(bundle["text/plain"])
        return
    ipython_display(bundle, raw=True)


# --------------------------------------------------------------------------- arguments


class _Exit(Exception):
    """argparse finished on its own (--help, --version): ``text`` is what it printed."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _argv(args: str | Sequence[str | os.PathLike] | None,
          logdir: str | os.PathLike | Sequence[str | os.PathLike] | None,
          port: int | None) -> builtins.list[str]:
    if args is None:
        argv: builtins.list[str] = []
    elif isinstance(args, str):
        argv = shlex.split(args)
    elif isinstance(args, os.PathLike):
        argv = [os.fspath(args)]
    else:
        argv = [os.fspath(a) for a in args]
    if argv and not any(a.startswith("-") for a in argv):  # display("runs"): folders only
        argv = ["--logdir", *argv]
    if logdir is not None:
        dirs = [logdir] if isinstance(logdir, (str, os.PathLike)) else builtins.list(logdir)
        argv += ["--logdir", *(os.fspath(d) for d in dirs)]
    if port is not None:
        argv += ["--port", str(_port_number(port))]
    return argv


def _parser() -> argparse.ArgumentParser:
    from visualdl.server.cli import build_parser

    parser = build_parser()
    parser.prog = "%visualdl"
    parser.set_defaults(port=None)  # none given: a free port, not the command's 8040
    return parser


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    """The command's own parsing and checks; ValueError with argparse's message."""
    from visualdl.server.cli import check_logdirs

    parser = _parser()
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            namespace = parser.parse_args(builtins.list(argv))
            if not namespace.logdir and not namespace.model:
                parser.error("--logdir is required (or give --model)")
            check_logdirs(parser, namespace.logdir or [])
    except SystemExit as exit_:
        if not exit_.code:
            raise _Exit(out.getvalue()) from None
        message = err.getvalue().strip().splitlines()
        raise ValueError(message[-1].replace("%visualdl: error: ", "") if message
                         else "bad arguments") from None
    return namespace


def _key(namespace: argparse.Namespace) -> str:
    """What makes two servers the same: every parsed flag, paths made absolute."""
    values = dict(vars(namespace))
    values.pop("allow_embedding", None)  # always on for a notebook's servers
    if values.get("port") == 0:  # "--port 0" is what no --port means here
        values["port"] = None
    for name in ("logdir", "model"):
        values[name] = [_absolute(p) for p in values.get(name) or []]
    return json.dumps(values, sort_keys=True, default=str)


def _absolute(path: str) -> str:
    if "://" in path:  # a URL (s3://, memory://): nothing to resolve
        return path
    return os.path.normpath(os.path.abspath(os.path.expanduser(path)))


def _port_number(port: Any) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port <= 65535:
        raise ValueError(f"port must be an integer between 1 and 65535, got {port!r}")
    return port


def _height(height: Any) -> int:
    if isinstance(height, bool) or not isinstance(height, int) or height <= 0:
        raise ValueError(f"height must be a positive number of pixels, got {height!r}")
    return height


# --------------------------------------------------------------------------- processes


def _launch(argv: Sequence[str], namespace: argparse.Namespace, key: str,
            timeout: float) -> ServerInfo:
    """Run the command with ``argv`` and wait until it prints where it serves."""
    folder = _registry_dir()
    log = folder / f"server-{time.time_ns()}.log"
    command = [sys.executable, "-m", "visualdl", *argv, "--allow-embedding"]
    if namespace.port is None:
        command += ["--port", "0"]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with open(log, "wb") as out:
        # A session of its own: the kernel's interrupt (Ctrl-C on the process group) and
        # its restart leave the server running, to be reused.
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, cwd=os.getcwd(), env=env,
                                   start_new_session=os.name == "posix")
    _children[process.pid] = process
    deadline = time.monotonic() + timeout
    while True:
        text = log.read_text(errors="replace")
        match = _SERVING.search(text)
        if match:
            break
        if process.poll() is not None:
            _children.pop(process.pid, None)
            log.unlink(missing_ok=True)
            raise RuntimeError(_error_text(text)
                               or f"visualdl exited with code {process.returncode}")
        if time.monotonic() > deadline:
            process.kill()
            process.wait()
            _children.pop(process.pid, None)
            log.unlink(missing_ok=True)
            raise TimeoutError(f"visualdl did not start within {timeout} s:\n{text}")
        time.sleep(0.05)
    info = ServerInfo(
        port=int(match.group(2)), pid=process.pid, args=tuple(argv), host=namespace.host,
        path_prefix=namespace.path_prefix, started=time.time(), version=_version(),
        cwd=os.getcwd(), key=key, log=str(log),
    )
    entry = folder / f"{process.pid}.json"
    partial = entry.with_suffix(".tmp")
    partial.write_text(json.dumps(info._entry(), indent=1))
    os.replace(partial, entry)
    return info


def _error_text(output: str) -> str:
    """The command's error message from its output (argparse's usage lines left out)."""
    lines = output.strip().splitlines()
    for i, line in enumerate(lines):
        if ": error: " in line:
            return "\n".join([line.split(": error: ", 1)[1], *lines[i + 1:]])
    return "\n".join(lines)


def _terminate(info: ServerInfo, timeout: float) -> None:
    if _pid_alive(info.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(info.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _pid_alive(info.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _pid_alive(info.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(info.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
            deadline = time.monotonic() + 5
            while _pid_alive(info.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
    _forget(info)


def _pid_alive(pid: int) -> bool:
    child = _children.get(pid)
    if child is not None and child.poll() is not None:
        _children.pop(pid, None)
        return False
    # A child that cannot be reaped yet may still be dying: a killed multi-threaded process
    # shows as a zombie while its other threads exit, so /proc is asked below as well.
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process took the number
        return False
    except OSError:
        return False
    with contextlib.suppress(OSError, IndexError):  # Linux: a zombie is not alive
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def _answers(info: ServerInfo, timeout: float = 3.0) -> bool:
    """Whether a visualdl server answers at ``info``'s address (not merely its pid lives)."""
    try:
        with urllib.request.urlopen(f"{info.url}api/info", timeout=timeout) as response:
            return response.status == 200 and "version" in json.load(response)
    except (OSError, ValueError, urllib.error.URLError):
        return False


# --------------------------------------------------------------------------- the registry


def _registry_dir() -> Path:
    configured = os.environ.get(REGISTRY_ENV)
    if configured:
        folder = Path(configured).expanduser()
    else:
        user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
        folder = Path(tempfile.gettempdir()) / f"visualdl-notebook-{user}"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def _registry_locked() -> Iterator[None]:
    """One start at a time per registry, across kernels: two ``%visualdl`` with the same
    flags at once must not start two servers."""
    try:
        import fcntl
    except ImportError:  # Windows: no cross-process lock; a rare duplicate server is harmless
        yield
        return
    with open(_registry_dir() / "lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _entries() -> builtins.list[ServerInfo]:
    """Registry entries whose process lives; the others are removed."""
    infos = []
    for path in sorted(_registry_dir().glob("*.json")):
        try:
            info = ServerInfo._from_entry(json.loads(path.read_text()))
        except (OSError, ValueError, TypeError, KeyError):
            path.unlink(missing_ok=True)  # torn or foreign: of no use to anyone
            continue
        if _pid_alive(info.pid):
            infos.append(info)
        else:
            _forget(info)
    return sorted(infos, key=lambda info: info.started)


def _forget(info: ServerInfo) -> None:
    (_registry_dir() / f"{info.pid}.json").unlink(missing_ok=True)
    if info.log:
        Path(info.log).unlink(missing_ok=True)
    child = _children.pop(info.pid, None)
    if child is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=0.1)


# --------------------------------------------------------------------------- environment


def _jupyter_proxy_base() -> str | None:
    """The base URL for jupyter-server-proxy's ``proxy/PORT/``, or None to go direct."""
    hub_prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX")
    if hub_prefix:
        return _slashed(hub_prefix)
    if not _server_proxy_installed():
        return None
    return _parent_jupyter_base_url()


def _server_proxy_installed() -> bool:
    return importlib.util.find_spec("jupyter_server_proxy") is not None


def _parent_jupyter_base_url() -> str | None:
    """The base URL of the Jupyter server that started this kernel (``$JPY_PARENT_PID``),
    from the runtime files Jupyter writes for each server it runs."""
    parent = os.environ.get("JPY_PARENT_PID")
    if not parent:
        return None
    for module in ("jupyter_server.serverapp", "notebook.notebookapp"):
        try:
            listing = importlib.import_module(module).list_running_servers
            servers = builtins.list(listing())
        except Exception:  # noqa: BLE001 - not installed, or unreadable runtime files
            continue
        for server in servers:
            if str(server.get("pid")) == parent:
                return _slashed(server.get("base_url") or "/")
    return None


def _slashed(path: str) -> str:
    return "/" + path.strip("/") + "/" if path.strip("/") else "/"


def _version() -> str:
    from visualdl.format.version import __version__

    return __version__


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{seconds // 86400} d"

