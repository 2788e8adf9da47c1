"""``visualdl [flags]``: parse the serve command's flags, build the app, serve it with
waitress (the other subcommands are dispatched by :mod:`visualdl.cli`).

Nothing here knows about routes or data; ``create_app`` does. The server listens at once and
the data provider loads in the background, so a huge logdir never delays the first page.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Iterator, Sequence

from visualdl.format.version import __version__
from visualdl.server.listen import listen

__all__ = ["main", "build_parser", "check_logdirs", "check_models", "make_server", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8040
DEFAULT_RELOAD = 5.0
THREADS = 8
CONNECTION_LIMIT = 1000  # open connections (waitress's default, 100, was easy to exhaust)
CHANNEL_TIMEOUT = 60  # seconds an idle keep-alive connection is kept


def build_parser() -> argparse.ArgumentParser:
    """The server's flags (``visualdl inspect`` has its own parser)."""
    parser = argparse.ArgumentParser(
        prog="visualdl",
        description="Serve the visualdl dashboard for one or more logdirs. "
        "Also: 'visualdl inspect PATH ...' to check log files, 'visualdl convert SRC DST' to "
        "copy TensorBoard or VisualDL 2.x logs into visualdl's format, 'visualdl export "
        "--format parquet LOGDIR OUT' to write scalars and hparams as Parquet.",
    )
    parser.add_argument(
        "--logdir", nargs="+", action="extend", metavar="DIR",
        help="log directories to serve (or single log files: *vdlrecords* or "
        "TensorBoard's events.out.tfevents.*); URLs of object storage too: s3://bucket/prefix, "
        "gs://, az://, memory:// (any fsspec filesystem)",
    )
    parser.add_argument(
        "--storage-option", action="append", default=[], metavar="KEY=VALUE",
        help="an option for the fsspec filesystem of URL logdirs (repeatable), e.g. "
        "anon=true, endpoint_url=http://127.0.0.1:9000, client_kwargs.region_name=eu-west-1; "
        "values are JSON when they parse as JSON. Credentials and endpoints are also read "
        "from the usual environment (AWS_ENDPOINT_URL, AWS_PROFILE, ...)",
    )
    parser.add_argument(
        "--model", nargs="+", action="extend", metavar="PATH",
        help="ONNX models or Paddle programs (__model__, *.pdmodel, PIR *.json; told by "
             "content) to show in the graph view "
             "(--logdir is then optional)",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default %(default)s)")
    parser.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help="port (default %(default)s; 0 picks a free one)"
    )
    parser.add_argument(
        "--reload-interval",
        type=_positive_float,
        default=DEFAULT_RELOAD,
        metavar="SECONDS",
        help="seconds between background reloads (default %(default)s)",
    )
    parser.add_argument(
        "--path-prefix", type=_path_prefix, default="", metavar="PATH",
        help="serve the dashboard under this URL path, such as /visualdl, for a reverse proxy "
        "that forwards it unchanged (default: at the root)",
    )
    parser.add_argument(
        "--allow-embedding", action="store_true",
        help="let pages of other sites show the dashboard in an iframe, as a notebook does "
        "(default: refused, against clickjacking)",
    )
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument(
        "--cache-dir", metavar="DIR",
        help="where long scalar series (over 500,000 points) are kept on disk, memory-mapped, "
        "and reused by the next start (default: $VISUALDL_CACHE_DIR, else "
        "$XDG_CACHE_HOME/visualdl, else ~/.cache/visualdl); safe to delete at any time",
    )
    cache.add_argument(
        "--no-cache", action="store_true",
        help="keep nothing for the next start: long series go to a private folder under the "
        "cache directory, removed at exit, and every start reads the records again",
    )
    parser.add_argument(
        "--version", action="version", version=f"visualdl {__version__}"
    )
    return parser


# argparse names a type function in its message when it raises ValueError ("invalid _port
# value"); an ArgumentTypeError's text is shown as is, so every bad value gets one of these.
def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(
            f"port must be an integer between 0 and 65535, got {text!r}")
    return value


def _path_prefix(text: str) -> str:
    from visualdl.server.prefix import normalize_prefix

    try:
        return normalize_prefix(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:  # also false for nan
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def check_logdirs(parser: argparse.ArgumentParser, logdirs: Sequence[str]) -> None:
    """A regular file given as a logdir must be a record file: anything else (a script, a
    CSV, a model) would be served as an empty dashboard, without a word."""
    from visualdl.reader.discovery import is_named_log

    for logdir in logdirs:
        path = Path(logdir).expanduser()
        if path.is_file() and not is_named_log(str(path)):
            parser.error(f"argument --logdir: {logdir} is a file, not a log directory "
                         "(give the folder that holds the runs, or a log file: ours, with "
                         "'vdlrecords' in its name, TensorBoard's events.out.tfevents.*, "
                         "or a PyTorch trace)")


def check_models(parser: argparse.ArgumentParser, models: Sequence[str]) -> None:
    """A ``--model`` that is not a file is refused before the port is taken: the user hears
    of the typo, not of a port another server holds. The path is taken as the app's model
    store takes it (no ``~`` expanded), so what passes here opens there."""
    for model in models:
        if Path(model).is_dir():
            parser.error(f"argument --model: {model} is a folder, not a model file (give "
                         "the .onnx file, or the Paddle program: __model__, *.pdmodel or "
                         "*.json)")
        if not Path(model).is_file():
            parser.error(f"argument --model: model file does not exist: {model}")


def _start(argv: list[str]) -> int | tuple:
    """Parse the flags, start loading, build the app: ``(app, sockets, args)``, or the exit
    code when something is wrong."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.logdir and not args.model:
        parser.error("--logdir is required (or give --model)")
    check_logdirs(parser, args.logdir or [])
    check_models(parser, args.model or [])
    from visualdl.storage import parse_storage_options

    try:
        storage_options = parse_storage_options(args.storage_option)
    except ValueError as err:
        parser.error(f"argument --storage-option: {err}")
    if args.cache_dir is not None or args.no_cache:
        from visualdl.storage import cache_folder

        if args.cache_dir is not None:
            cache_dir = Path(args.cache_dir).expanduser()
            if cache_dir.exists() and not cache_dir.is_dir():
                parser.error(f"argument --cache-dir: {args.cache_dir} is a file, not a folder")
        cache_folder.configure(cache_dir=args.cache_dir, persist=not args.no_cache)
    # The data provider (reader, numpy, protobuf; no Flask) is built first and starts
    # reading the logdir before the web stack is imported, so its file reads overlap
    # Flask's import; the port is bound in between (see listen.py).
    from visualdl.server.reader_provider import open_provider

    try:
        data = open_provider(args.logdir or [], args.reload_interval, storage_options)
    except (FileNotFoundError, ValueError, ImportError) as err:
        print(f"visualdl: error: {err}", file=sys.stderr)
        return 2
    try:
        sockets = listen(args.host, args.port)
    except OSError as err:
        print(f"visualdl: error: cannot listen on {args.host}:{args.port}: {err}",
              file=sys.stderr)
        return 1
    _quick_handoffs_until_loaded(data)
    data.start()
    from visualdl.server.app import create_app

    try:
        app = create_app(models=args.model or [], data=data, path_prefix=args.path_prefix,
                         allow_embedding=args.allow_embedding)
    except (FileNotFoundError, ValueError) as err:  # e.g. a missing --model file
        _usual_handoffs()
        data.stop(timeout=2.0)
        for sock in sockets:
            sock.close()
        print(f"visualdl: error: {err}", file=sys.stderr)
        return 2
    # The app is built: this thread now mostly waits in the server's poll. Quick hand-overs
    # would from here on only make the load yield to every request (a chart polling for its
    # tag would slow the first load down).
    _usual_handoffs()
    return app, sockets, args


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the dashboard (``visualdl [flags]``; the subcommands are dispatched by
    :mod:`visualdl.cli`); returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with _collector_paused():  # from the start: numpy and the reader import here too
        started = _start(argv)
        if not isinstance(started, int):
            gc.freeze()  # see _collector_paused
    if isinstance(started, int):
        return started
    app, sockets, args = started
    return serve(app, sockets, args.host, args.path_prefix)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while the server starts (:func:`main` freezes what
    start-up made, ``gc.freeze``, before it resumes).

    Start-up imports Flask, numpy and protobuf: some hundred thousand objects that live as
    long as the process, which the collector would walk again and again for nothing, in the
    time to the first chart. Nothing started here makes garbage cycles to speak of.
    Resuming without freezing them would only defer that walk: they are all still in the
    youngest generation, so the first allocation after ``gc.enable()`` would collect them
    all at once (on this thread, while the first load runs).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# Seconds a thread may hold the GIL while another waits for it, during the first load.
START_SWITCH_INTERVAL = 0.0002


def _quick_handoffs_until_loaded(data) -> None:  # noqa: ANN001 - a DataProvider
    """Hand the GIL over quickly (``sys.setswitchinterval``) until the first load is done.

    The first load (numpy over the record files, on the provider's thread) runs while this
    thread imports Flask and builds the app (pure Python: it holds the GIL). Numpy releases
    the GIL for each operation, but taking it back waits for the importing thread's time
    slice to end: 5 ms by default, far longer than one such operation, so the two would in
    effect take turns instead of sharing two cores. The usual interval comes back once the
    app is built (a server answering requests has no use for quicker hand-overs), once the
    data are loaded if that comes first, or when the server stops first
    (:func:`_usual_handoffs`)."""
    previous = sys.getswitchinterval()
    if previous <= START_SWITCH_INTERVAL * 1.01:
        return
    sys.setswitchinterval(START_SWITCH_INTERVAL)
    _previous_interval.append((previous, sys.getswitchinterval()))  # as Python stores it

    def restore() -> None:
        data.wait_loaded(timeout=600)
        _usual_handoffs()

    threading.Thread(target=restore, name="visualdl-switch-interval", daemon=True).start()


_previous_interval: list[tuple[float, float]] = []


def _usual_handoffs() -> None:
    """Undo :func:`_quick_handoffs_until_loaded` (once; later calls do nothing), unless
    something else has set another interval since."""
    try:
        previous, quick = _previous_interval.pop()
    except IndexError:
        return
    if sys.getswitchinterval() == quick:
        sys.setswitchinterval(previous)


def make_server(app, sockets: list[socket.socket]):  # noqa: ANN001, ANN201 - Flask app, waitress server
    """The waitress server for ``app`` on ``sockets`` (from :func:`listen`): the one place
    that configures it.

    Slow or idle clients cannot lock others out: poll() instead of select() (no 1024-fd
    ceiling), room for ``CONNECTION_LIMIT`` connections, idle keep-alive connections closed
    after ``CHANNEL_TIMEOUT`` seconds, and :mod:`visualdl.server.connections` closes a
    request still sending its headers after 10 s, or its body too slowly, and answers 413 at
    once to a ``Content-Length`` over the route's limit.
    """
    import logging

    from waitress.server import create_server

    from visualdl.server.connections import body_limits, harden

    # waitress warns "Task queue depth is N" whenever a request waits for a thread; a
    # dashboard's burst of parallel requests does that routinely, so keep it quiet.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    default, by_path = body_limits(app)
    server_map: dict = {}
    server = create_server(
        app, map=server_map, sockets=sockets, threads=THREADS, ident="visualdl",
        connection_limit=_connection_limit(), channel_timeout=CHANNEL_TIMEOUT, cleanup_interval=5,
        asyncore_use_poll=True,
        # waitress's own cap (it checks chunked bodies too); per-route limits are below it
        max_request_body_size=max([default, *by_path.values()]) + 1,
    )
    harden(server_map, app)
    return server


def _connection_limit() -> int:
    """CONNECTION_LIMIT, or less where the process may not open that many files (some are
    left for the record files being read)."""
    try:
        import resource
    except ImportError:  # not POSIX
        return CONNECTION_LIMIT
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return CONNECTION_LIMIT
    return max(100, min(CONNECTION_LIMIT, soft - 100))


def serve(app, sockets: list[socket.socket], host: str,  # noqa: ANN001 - a Flask app
          path_prefix: str = "") -> int:
    """Serve ``app`` on ``sockets`` with waitress until Ctrl-C or SIGTERM; returns the exit
    code. ``host`` is the address as given and ``path_prefix`` the app's, for the URL printed."""
    server = make_server(app, sockets)
    url = _url(host, server, path_prefix)
    print(f"visualdl {__version__}: serving at {url}  (Ctrl-C to quit)")
    sys.stdout.flush()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    # A shell starts a background job (``visualdl ... &``) with SIGINT ignored, and Python
    # then keeps it ignored: ``kill -INT`` would do nothing. Stop on it as on SIGTERM.
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int in (signal.SIG_IGN, signal.SIG_DFL):
        signal.signal(signal.SIGINT, _raise_interrupt)
    try:
        server.run()  # returns after Ctrl-C / SIGTERM (waitress closes its sockets itself)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        if previous_int in (signal.SIG_IGN, signal.SIG_DFL):
            signal.signal(signal.SIGINT, previous_int)
        server.close()
        _usual_handoffs()
        gc.unfreeze()  # (for a process that goes on: tests, a notebook's kernel)
        from visualdl.api.common import provider

        provider(app).stop(timeout=2.0)
    print("visualdl: stopped")
    return 0


def _raise_interrupt(signum, frame) -> None:  # noqa: ANN001
    raise KeyboardInterrupt


def _url(host: str, server, path_prefix: str = "") -> str:  # noqa: ANN001
    port = getattr(server, "effective_port", None)
    if port is None:  # several sockets (e.g. "localhost" -> ::1 and 127.0.0.1)
        port = server.effective_listen[0][1]
    shown = host
    if host in ("0.0.0.0", "::", ""):
        shown = socket.gethostname()
    elif ":" in host:
        shown = f"[{host}]"
    return f"http://{shown}:{port}{path_prefix}/"


if __name__ == "__main__":
    sys.exit(main())
