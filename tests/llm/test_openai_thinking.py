"""The OpenAI-compatible backend asks a Qwen3 server's template not to think aloud, and sends
nothing extra to other models (a hosted API may refuse a field it does not know)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from searchain.llm.base import GenerationParams
from searchain.llm.openai_backend import OpenAICompatibleLLM


@pytest.fixture
def stub_server():
    bodies = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            reply = json.dumps({"choices": [{"message": {"content": "Paris"}, "finish_reason": "stop"}],
                                "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", bodies
    server.shutdown()


@pytest.mark.parametrize("model, sent", [("Qwen3-8B-Q4_K_M.gguf", {"enable_thinking": False}),
                                         ("qwen2.5-7b-instruct", None)])
def test_thinking_is_switched_off_for_qwen3_only(stub_server, model, sent):
    url, bodies = stub_server
    llm = OpenAICompatibleLLM(url, model=model, grammar_field=None)
    c = llm.chat([{"role": "user", "content": "Capital of France?"}], GenerationParams(max_tokens=4))
    assert c.text == "Paris" and c.usage.prompt_tokens == 3
    assert bodies[-1].get("chat_template_kwargs") == sent
