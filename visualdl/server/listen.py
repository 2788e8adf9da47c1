"""The server's listening sockets, opened before the web stack is imported.

``visualdl`` binds its port first and builds the app afterwards: a browser that connects
while the server starts waits in the socket's backlog instead of being refused, and a port
already in use is reported before any loading. waitress then serves on these sockets.

They are set up as waitress sets up its own (address reuse on POSIX, IPv6 sockets v6-only,
one socket per address a host name resolves to). A literal address, such as the default
127.0.0.1, is bound as is: only names go through ``getaddrinfo``, whose IDNA codec alone
costs a few milliseconds of start-up.
"""

from __future__ import annotations

import os
import socket

__all__ = ["listen", "BACKLOG"]

#: waitress's default backlog.
BACKLOG = 1024


def listen(host: str, port: int, backlog: int = BACKLOG) -> list[socket.socket]:
    """Bound, listening TCP sockets for ``host:port``; OSError when that fails.

    ``host`` "" or "*" means every interface; port 0 picks a free port.
    """
    sockets: list[socket.socket] = []
    try:
        for family, sockaddr in _addresses(host, port):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sockets.append(sock)
            if os.name != "nt":  # on Windows SO_REUSEADDR would let others steal the port
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(sockaddr)
            sock.listen(backlog)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def _addresses(host: str, port: int) -> list[tuple[int, tuple]]:
    """(family, sockaddr) pairs to bind, without duplicates."""
    literal = host.strip("[]")
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, literal)
        except (OSError, ValueError):
            continue
        return [(family, (literal, port))]
    infos = socket.getaddrinfo(
        None if host in ("", "*") else host, port, socket.AF_UNSPEC, socket.SOCK_STREAM,
        socket.IPPROTO_TCP, socket.AI_PASSIVE,
    )
    out: list[tuple[int, tuple]] = []
    for family, _type, _proto, _name, sockaddr in infos:
        if family in (socket.AF_INET, socket.AF_INET6) and (family, sockaddr) not in out:
            out.append((family, sockaddr))
    if not out:
        raise OSError(f"{host!r} has no IPv4 or IPv6 address")
    return out
