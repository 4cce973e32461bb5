"""Drives POST /v1/responses with the official `openai` Python SDK and prints what it saw as JSON.

Run by test/responses/openai-python.blackbox.test.ts, which asserts on the output. Environment:
GENGATE_BASE_URL ({public_url}/v1) and GENGATE_KEY (an API key of a funded account).
"""

import json
import os

import openai
from openai import OpenAI

client = OpenAI(api_key=os.environ["GENGATE_KEY"], base_url=os.environ["GENGATE_BASE_URL"], max_retries=0, timeout=30)
out = {"sdk_version": openai.__version__}


def usage(u):
    return {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens, "total_tokens": u.total_tokens}


r = client.responses.create(model="sandbox/chat", instructions="Be brief.", input="Hello from Python", max_output_tokens=200)
out["create"] = {"id": r.id, "status": r.status, "model": r.model, "text": r.output_text, "usage": usage(r.usage)}

events = []
text = ""
completed = None
for ev in client.responses.create(model="sandbox/chat", input=[{"role": "user", "content": "Stream from Python"}], stream=True):
    events.append(ev.type)
    if ev.type == "response.output_text.delta":
        text += ev.delta
    if ev.type == "response.completed":
        completed = ev.response
out["stream"] = {"events": events, "text": text, "id": completed.id, "usage": usage(completed.usage)}

with client.responses.stream(model="sandbox/chat", input="Helper from Python") as stream:
    final = stream.get_final_response()
out["helper"] = {"status": final.status, "text": final.output_text, "id": final.id, "usage": usage(final.usage)}

# A reply cut by max_output_tokens ends with response.incomplete, as OpenAI's does (the helper's
# get_final_response() raises on it, against OpenAI too: it waits for response.completed).
last = None
for ev in client.responses.create(model="sandbox/chat", input="Cut", max_output_tokens=3, stream=True):
    last = ev
out["incomplete"] = {"type": last.type, "status": last.response.status, "reason": last.response.incomplete_details.reason, "id": last.response.id, "usage": usage(last.response.usage)}

try:
    client.responses.create(model="sandbox/chat", input="again", previous_response_id=r.id)
    out["previous"] = None
except openai.BadRequestError as err:
    out["previous"] = {"status": err.status_code, "code": err.code, "param": err.param, "message": err.message}

# An upstream that fails mid-stream: response.failed, then an `error` event the SDK raises on.
seen = []
try:
    for ev in client.responses.create(model="mock/midstream-error", input="hi", stream=True):
        seen.append(ev.type)
    out["midstream"] = {"raised": None, "events": seen}
except openai.APIError as err:
    out["midstream"] = {"raised": type(err).__name__, "message": err.message, "events": seen}

print(json.dumps(out))
