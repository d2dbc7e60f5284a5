"""The SDK's HTTP client for plain-http endpoints: TLS trust is built on first TLS use, and then works.

A loopback HTTPS server with a certificate made for the test (the `openssl` command) stands in for an
https URL the client meets (a redirect, a proxy); the plain-http side is the fake OpenAI server.
"""

from __future__ import annotations

import http.server
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from nanobot_desktop.engine.llm.http_client import DeferredTrust, sdk_http_client
from nanobot_desktop.engine.llm.provider import OpenAICompatProvider
from tests.fake_openai import FakeOpenAIServer


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello over tls"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(https URL, the CA file that trusts it): a self-signed certificate for 127.0.0.1."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed (it makes the test's certificate)")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/", cert
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


async def test_trust_is_built_at_the_first_tls_connection_and_verifies_it(tls_server, fake_openai) -> None:
    import openai

    url, ca_file = tls_server
    built: list[ssl.SSLContext] = []

    def build() -> ssl.SSLContext:
        built.append(ssl.create_default_context(cafile=str(ca_file)))
        return built[-1]

    trust = DeferredTrust(build)
    async with openai.DefaultAsyncHttpxClient(verify=trust) as client:
        plain = await client.get(fake_openai.base_url + "/models")
        assert plain.status_code == 200 and not trust.built  # plain http never needed it
        answer = await client.get(url)
        again = await client.get(url)
    assert (answer.text, again.text) == ("hello over tls", "hello over tls")
    assert len(built) == 1  # built once, then reused


async def test_a_deferred_trust_still_refuses_a_certificate_it_does_not_trust(tls_server) -> None:
    import openai

    url, _ca_file = tls_server
    trust = DeferredTrust(ssl.create_default_context)  # the system's CAs: the test's certificate is not among them
    async with openai.DefaultAsyncHttpxClient(verify=trust) as client:
        with pytest.raises(Exception) as failure:
            await client.get(url)
    assert "CERTIFICATE_VERIFY_FAILED" in repr(failure.value) + repr(failure.value.__context__)
    assert trust.built


def test_only_plain_http_endpoints_get_the_deferred_client() -> None:
    import openai

    assert sdk_http_client(openai, "https://api.openai.com/v1") is None  # the SDK's own default client
    client = sdk_http_client(openai, "http://127.0.0.1:11434/v1")
    assert isinstance(client, openai.DefaultAsyncHttpxClient)


async def test_a_turn_against_a_plain_http_endpoint_works_through_it(fake_openai: FakeOpenAIServer) -> None:
    provider = OpenAICompatProvider("sk-test", fake_openai.base_url, "fake-model")
    fake_openai.add_text("Hello over plain http")
    try:
        assert (await provider.chat([{"role": "user", "content": "hi"}])).content == "Hello over plain http"
    finally:
        await provider.close()
