"""An empty WSGI app (``204`` to everything): the floor of the webhook intake item."""

from __future__ import annotations


def app(environ, start_response):
    stream = environ.get("wsgi.input")
    length = int(environ.get("CONTENT_LENGTH") or 0)
    if stream is not None and length:
        stream.read(length)
    start_response("204 No Content", [])
    return [b""]
