"""The S3 server the tests start: moto, with its writes made one at a time.

moto checks a conditional write's precondition (If-Match, If-None-Match)
and then stores the object, with nothing holding other requests out
between the two steps. Two racers can then both pass the check and both
be told they won, which S3 itself never does: a conditional write there
either takes effect against the state it checked or fails. The lease and
the TXID files rely on exactly that guarantee, so the tests need a server
that gives it.

This launcher runs moto's own application and serves every request that
changes the bucket (PUT, POST, DELETE) under one lock. The request body is
read before the lock is taken and the response is collected before it is
released, so a slow or cut-off client never holds other writers out.
Reads stay concurrent.

Usage (the same as moto_server's): s3_test_server -H HOST -p PORT
"""

import argparse
import io
import os
import signal
import sys
import threading

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import run_simple
from werkzeug.wsgi import get_input_stream

WRITES = {"PUT", "POST", "DELETE"}


class OneWriteAtATime:
    """WSGI middleware: the wrapped application serves one write at a time."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        if environ.get("REQUEST_METHOD") not in WRITES:
            return self.app(environ, start_response)
        body = get_input_stream(environ).read()
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("wsgi.input_terminated", None)
        with self.lock:
            response = self.app(environ, start_response)
            try:
                chunks = list(response)
            finally:
                close = getattr(response, "close", None)
                if close is not None:
                    close()
        return chunks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=5000)
    args = parser.parse_args()
    os.environ.setdefault("MOTO_PORT", str(args.port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(
        args.host,
        args.port,
        OneWriteAtATime(app),
        threaded=True,
        request_handler=MotoRequestHandler,
    )


if __name__ == "__main__":
    main()
