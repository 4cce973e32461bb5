"""Drives a gengate server with the official `openai` Python SDK and prints what it saw as JSON.

Run by test/compat/openai-python.blackbox.test.ts, which asserts on the output. Environment:
GENGATE_BASE_URL ({public_url}/v1) and GENGATE_KEY (an API key of a funded account).
"""

import json
import os
import sys

import openai
from openai import OpenAI

base_url = os.environ["GENGATE_BASE_URL"]
key = os.environ["GENGATE_KEY"]
client = OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=30)
out = {"sdk_version": openai.__version__}


def model_fields(m):
    return {"id": m.id, "object": m.object, "created": m.created, "owned_by": m.owned_by}


def error_fields(err):
    body = err.body if isinstance(err.body, dict) else {}
    return {
        "class": type(err).__name__,
        "status": err.status_code,
        "code": getattr(err, "code", None),
        "type": getattr(err, "type", None),
        "message": body.get("message"),
    }


listed = client.models.list()
out["models"] = [model_fields(m) for m in listed.data]
# The SDK sends the id percent-encoded as one path segment (sandbox%2Fchat).
out["retrieved"] = model_fields(client.models.retrieve("sandbox/chat"))

try:
    client.models.retrieve("acme/missing")
    out["retrieve_unknown"] = None
except openai.APIStatusError as err:
    out["retrieve_unknown"] = error_fields(err)

messages = [{"role": "user", "content": "Hello from Python"}]
c = client.chat.completions.create(model="sandbox/chat", messages=messages, max_tokens=12)
out["chat"] = {
    "id": c.id,
    "object": c.object,
    "model": c.model,
    "content": c.choices[0].message.content,
    "finish_reason": c.choices[0].finish_reason,
    "usage": c.usage.model_dump() if c.usage else None,
}

text, chunks, usage, finish = "", 0, None, None
stream = client.chat.completions.create(
    model="sandbox/chat",
    messages=messages,
    max_tokens=12,
    stream=True,
    stream_options={"include_usage": True},
)
for chunk in stream:
    chunks += 1
    if chunk.usage is not None:
        usage = chunk.usage.model_dump()
    for choice in chunk.choices:
        text += choice.delta.content or ""
        finish = choice.finish_reason or finish
out["stream"] = {"content": text, "chunks": chunks, "usage": usage, "finish_reason": finish}

try:
    client.chat.completions.create(model="acme/missing", messages=messages)
    out["chat_unknown_model"] = None
except openai.APIStatusError as err:
    out["chat_unknown_model"] = error_fields(err)

bad = OpenAI(api_key="gk_" + "x" * 40, base_url=base_url, max_retries=0, timeout=30)
try:
    bad.chat.completions.create(model="sandbox/chat", messages=messages)
    out["bad_key"] = None
except openai.APIStatusError as err:
    out["bad_key"] = error_fields(err)

json.dump(out, sys.stdout)
