"""renard as a Python service is written for production: a FastAPI app with one path
operation for "/", a RedirectResponse with 302 Found, ?seed= as an optional query parameter;
uvicorn serves it.

RENARD_COUNT (images) and RENARD_LOCATION (a URL template with {n}) configure it; run with
`uvicorn main:app`.
"""

import os
import random

from fastapi import FastAPI
from fastapi.responses import RedirectResponse

COUNT = int(os.environ["RENARD_COUNT"])
LOCATION = os.environ["RENARD_LOCATION"]
FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3

app = FastAPI(openapi_url=None)  # no /docs nor /openapi.json: the service has one route


def fnv1a64(octets: bytes) -> int:
    h = FNV_OFFSET
    for octet in octets:
        h = ((h ^ octet) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


@app.get("/")
async def avatar(seed: str | None = None) -> RedirectResponse:
    """A 302 to image k: uniform in 1..COUNT, or FNV-1a-64 of the seed's UTF-8 mod COUNT, plus 1."""
    k = random.randrange(COUNT) + 1 if seed is None else fnv1a64(seed.encode()) % COUNT + 1
    return RedirectResponse(LOCATION.replace("{n}", str(k)), status_code=302)
