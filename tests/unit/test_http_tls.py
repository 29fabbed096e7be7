"""The pooled HTTP client's TLS: verified against the CA bundle, loaded only for https.

A real https server on 127.0.0.1 with a self-signed certificate: refused with the default
bundle, accepted once SSL_CERT_FILE names its certificate (the TLS context is the one
httpx builds from the environment), and a plain-http request never loads the bundle.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import http.server
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

x509 = pytest.importorskip("cryptography.x509")


def _self_signed(folder: Path) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    import ipaddress

    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "13")
        self.end_headers()
        self.wfile.write(b"data: hello\n\n")

    def log_message(self, *args: object) -> None:
        pass


def _serve(context: ssl.SSLContext | None) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{'https' if context else 'http'}://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def cert(tmp_path: Path) -> tuple[Path, Path]:
    return _self_signed(tmp_path)


@pytest.fixture
def https_url(cert: tuple[Path, Path]) -> Iterator[str]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*cert)
    yield from _serve(context)


@pytest.fixture
def http_url() -> Iterator[str]:
    yield from _serve(None)


_PROBE = """
import asyncio, sys
import wolli.ai.http as h
async def main():
    try:
        response = await h.get_client().get(sys.argv[1])
        print(response.status_code, response.text)
    except Exception as exc:
        print(type(exc).__name__, exc)
asyncio.run(main())
print("bundle loaded" if h._tls is not None else "no bundle")
"""


def _probe(url: str, **env: str) -> list[str]:
    import os

    environ = {k: v for k, v in os.environ.items() if not k.startswith("SSL_CERT")} | env
    out = subprocess.run([sys.executable, "-c", _PROBE, url], capture_output=True, text=True, env=environ,
                         timeout=60, check=True)
    return out.stdout.splitlines()


def test_an_unknown_certificate_is_refused(https_url):
    answer, bundle = _probe(https_url)
    assert answer.startswith("ConnectError") and "CERTIFICATE_VERIFY_FAILED" in answer
    assert bundle == "bundle loaded"


def test_a_certificate_trusted_through_ssl_cert_file_is_accepted(https_url, cert):
    assert _probe(https_url, SSL_CERT_FILE=str(cert[0])) == ["200 hello", "bundle loaded"]


def test_a_plain_http_server_never_loads_the_ca_bundle(http_url):
    assert _probe(http_url) == ["200 hello", "no bundle"]


def test_both_schemes_on_one_client(http_url, https_url, cert, monkeypatch):
    import wolli.ai.http as h

    async def both() -> list[int]:
        client = h.get_client()  # one client per event loop: this fresh loop gets its own
        return [(await client.get(url)).status_code for url in (http_url, https_url)]

    monkeypatch.setenv("SSL_CERT_FILE", str(cert[0]))
    monkeypatch.setattr(h, "_tls", None)  # this process's context may predate SSL_CERT_FILE
    assert asyncio.run(both()) == [200, 200]


# The model requests themselves (open_stream, over wolli.ai.http1): the same trust.
_STREAM_PROBE = """
import asyncio, sys
import wolli.ai.http as h
from wolli.ai.types import StreamOptions
async def main():
    try:
        async with h.open_stream(sys.argv[1], {}, {}, StreamOptions(max_retries=0)) as response:
            print(response.status_code, [event.data async for event in h.sse_events(response)])
    except Exception as exc:
        print(type(exc).__name__, exc)
asyncio.run(main())
print("bundle loaded" if h._tls is not None else "no bundle")
"""


def _stream_probe(url: str, **env: str) -> list[str]:
    import os

    environ = {k: v for k, v in os.environ.items() if not k.startswith("SSL_CERT") and "proxy" not in k.lower()}
    out = subprocess.run([sys.executable, "-c", _STREAM_PROBE, url], capture_output=True, text=True,
                         env=environ | env, timeout=60, check=True)
    return out.stdout.splitlines()


def test_a_model_request_refuses_an_unknown_certificate(https_url):
    answer, bundle = _stream_probe(https_url)
    assert answer.startswith("ProviderConnectionError") and "CERTIFICATE_VERIFY_FAILED" in answer
    assert "ConnectError" in answer and bundle == "bundle loaded"


def test_a_model_request_trusts_ssl_cert_file_and_plain_http_loads_no_bundle(https_url, http_url, cert):
    assert _stream_probe(https_url, SSL_CERT_FILE=str(cert[0])) == ["200 ['hello']", "bundle loaded"]
    assert _stream_probe(http_url) == ["200 ['hello']", "no bundle"]
