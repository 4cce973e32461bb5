"""Drives a gengate server with the official `anthropic` Python SDK and prints what it saw as JSON.

Run by test/compat/anthropic-python.blackbox.test.ts, which asserts on the output. Environment:
GENGATE_URL (the server's origin: the SDK appends /v1/messages), GENGATE_KEY (a funded key) and
GENGATE_BROKE_KEY (a key of an account that cannot pay).
"""

import json
import os
import uuid

import anthropic
from anthropic import Anthropic

base_url = os.environ["GENGATE_URL"]
key = os.environ["GENGATE_KEY"]
client = Anthropic(api_key=key, base_url=base_url, max_retries=0, timeout=30)
out = {"sdk_version": anthropic.__version__}
messages = [{"role": "user", "content": "Hello from Python"}]


def message_fields(m):
    return {
        "id": m.id,
        "type": m.type,
        "role": m.role,
        "model": m.model,
        "text": "".join(b.text for b in m.content if b.type == "text"),
        "stop_reason": m.stop_reason,
        "usage": {"input_tokens": m.usage.input_tokens, "output_tokens": m.usage.output_tokens},
    }


def error_fields(err):
    body = err.body if isinstance(err.body, dict) else {}
    inner = body.get("error") if isinstance(body.get("error"), dict) else {}
    return {
        "class": type(err).__name__,
        "status": err.status_code,
        "type": inner.get("type"),
        "code": inner.get("code"),
        "message": inner.get("message"),
        "should_retry": err.response.headers.get("x-should-retry"),
    }


def refused(call):
    try:
        call()
        return None
    except anthropic.APIStatusError as err:
        return error_fields(err)


out["count"] = client.messages.count_tokens(model="sandbox/chat", system="Be brief.", messages=messages).input_tokens
out["create"] = message_fields(
    client.messages.create(model="sandbox/chat", max_tokens=12, system="Be brief.", messages=messages)
)

with client.messages.stream(model="sandbox/chat", max_tokens=7, messages=messages) as stream:
    text = "".join(stream.text_stream)
    final = stream.get_final_message()
out["stream"] = {"text": text, "final": message_fields(final)}

events, streamed, usage, msg_id = [], "", None, None
for event in client.messages.create(model="sandbox/chat", max_tokens=5, messages=messages, stream=True):
    events.append(event.type)
    if event.type == "message_start":
        msg_id = event.message.id
    elif event.type == "content_block_delta" and event.delta.type == "text_delta":
        streamed += event.delta.text
    elif event.type == "message_delta":
        usage = {"input_tokens": event.usage.input_tokens, "output_tokens": event.usage.output_tokens}
out["raw_stream"] = {"id": msg_id, "events": events, "text": streamed, "usage": usage}

idem = {"Idempotency-Key": f"py-{uuid.uuid4()}"}
first = client.messages.create(model="sandbox/chat", max_tokens=4, messages=messages, extra_headers=idem)
again = client.messages.create(model="sandbox/chat", max_tokens=4, messages=messages, extra_headers=idem)
out["idempotent"] = {"first": message_fields(first), "again": message_fields(again)}
# The SDK would retry a 409 twice; x-should-retry: false stops it.
retrying = Anthropic(api_key=key, base_url=base_url, max_retries=2, timeout=30)
out["conflict"] = refused(
    lambda: retrying.messages.create(model="sandbox/chat", max_tokens=5, messages=messages, extra_headers=idem)
)

image = [{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}]}]
out["image_block"] = refused(lambda: client.messages.create(model="sandbox/chat", max_tokens=5, messages=image))
out["media_model"] = refused(lambda: client.messages.create(model="sandbox/image", max_tokens=5, messages=messages))
bad = Anthropic(api_key="gk_wrong", base_url=base_url, max_retries=0, timeout=30)
out["bad_key"] = refused(lambda: bad.messages.create(model="sandbox/chat", max_tokens=5, messages=messages))
broke = Anthropic(api_key=os.environ["GENGATE_BROKE_KEY"], base_url=base_url, max_retries=2, timeout=30)
out["broke"] = refused(lambda: broke.messages.create(model="sandbox/chat", max_tokens=100, messages=messages))

print(json.dumps(out))
