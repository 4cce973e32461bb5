"""Drives gengate's OpenAI videos door with the official `openai` Python SDK; prints what it saw as JSON.

Run by test/compat/openai-python-videos.blackbox.test.ts, which asserts on the output. Environment:
GENGATE_BASE_URL ({public_url}/v1), GENGATE_KEY (a funded key), GENGATE_PNG (an image to send as
input_reference), GENGATE_OUT (where to write the downloaded video). The SDK's videos.create sends
multipart/form-data (resources/videos.py: extract_files + Content-Type multipart/form-data), and
extra_body fields go into the same form (nested dicts as name[key]).
"""

import json
import os
import time
import warnings

import openai
from openai import OpenAI

warnings.simplefilter("ignore", DeprecationWarning)  # "The Sora API is scheduled to shut down"
client = OpenAI(api_key=os.environ["GENGATE_KEY"], base_url=os.environ["GENGATE_BASE_URL"], max_retries=0, timeout=30)
out = {"sdk_version": openai.__version__}


def error_fields(err):
    return {"class": type(err).__name__, "status": err.status_code, "code": getattr(err, "code", None)}


# create_and_poll: create, then retrieve until completed or failed.
video = client.videos.create_and_poll(
    model="sandbox/video", prompt="from python", seconds="2", size="1280x720", poll_interval_ms=100
)
out["polled"] = video.model_dump()
content = client.videos.download_content(video.id)
with open(os.environ["GENGATE_OUT"], "wb") as f:
    f.write(content.read())

# input_reference as a file: (name, bytes, type), as the SDK's FileTypes allow.
with open(os.environ["GENGATE_PNG"], "rb") as f:
    png = f.read()
ref = client.videos.create(
    model="sandbox/video", prompt="from a picture", seconds="1", input_reference=("fox.png", png, "image/png")
)
out["with_reference"] = ref.model_dump()
client.videos.poll(ref.id, poll_interval_ms=100)

# A slow video (sandbox controls through extra_body) keeps the one worker busy: the next one waits queued.
slow = client.videos.create(model="sandbox/video", prompt="slow", seconds="1", extra_body={"sandbox": {"delay_ms": 1500}})
while client.videos.retrieve(slow.id).status != "in_progress":
    time.sleep(0.02)
queued = client.videos.create(model="sandbox/video", prompt="waits", seconds="4")
out["queued"] = queued.model_dump()
out["deleted"] = client.videos.delete(queued.id).model_dump()
out["after_delete"] = client.videos.retrieve(queued.id).model_dump()
client.videos.poll(slow.id, poll_interval_ms=100)

out["listed"] = [v.id for v in client.videos.list(limit=2)]  # auto-paginates: every video

try:
    client.videos.create(model="sandbox/video", prompt="x", size="1792x1024")
    out["bad_size"] = None
except openai.APIStatusError as err:
    out["bad_size"] = error_fields(err)
try:
    client.videos.retrieve("01a21d7d-0000-7000-8000-000000000000")
    out["unknown"] = None
except openai.APIStatusError as err:
    out["unknown"] = error_fields(err)

print(json.dumps(out))
