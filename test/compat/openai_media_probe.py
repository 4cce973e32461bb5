"""Drives gengate's OpenAI images and speech doors with the official `openai` Python SDK and prints
what it saw as JSON.

Run by test/compat/openai-python-media.blackbox.test.ts, which asserts on the output. Environment:
GENGATE_BASE_URL ({public_url}/v1) and GENGATE_KEY (an API key of a funded account).
"""

import base64
import json
import os
import struct
import urllib.request

import openai
from openai import OpenAI

client = OpenAI(api_key=os.environ["GENGATE_KEY"], base_url=os.environ["GENGATE_BASE_URL"], max_retries=0, timeout=30)
out = {"sdk_version": openai.__version__}


def png_size(data):
    # PNG: 8-byte signature, then the IHDR chunk: length, "IHDR", width, height (big-endian).
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    return list(struct.unpack(">II", data[16:24]))


r = client.images.generate(model="sandbox/image", prompt="a red fox", size="128x64")
with urllib.request.urlopen(r.data[0].url) as resp:
    out["url_png_size"] = png_size(resp.read())
out["created"] = r.created

r = client.images.generate(model="sandbox/image", prompt="b64", size="64x96", response_format="b64_json", n=2)
pngs = [base64.b64decode(d.b64_json) for d in r.data]
out["b64_png_sizes"] = [png_size(p) for p in pngs]

# A file tuple (name, bytes, type), as the SDK's docs show for uploads.
e = client.images.edit(model="sandbox/image", prompt="add a hat", image=("fox.png", pngs[0], "image/png"), size="96x96")
with urllib.request.urlopen(e.data[0].url) as resp:
    out["edit_png_size"] = png_size(resp.read())

speech = client.audio.speech.create(model="sandbox/speech", input="Hello from Python", voice="alloy")
audio = speech.content
out["speech"] = {"content_type": speech.response.headers.get("content-type"), "head": audio[:4].decode("latin-1"), "size": len(audio)}

try:
    client.audio.speech.create(model="sandbox/speech", input="x", voice="alloy", response_format="mp3")
    out["mp3"] = None
except openai.BadRequestError as err:
    out["mp3"] = {"status": err.status_code, "code": err.code, "param": err.param, "message": err.body.get("message")}

print(json.dumps(out))
