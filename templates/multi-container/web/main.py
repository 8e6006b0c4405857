"""__APP_NAME__ / web: the public front end of a Slipway multi-container app.

Serves the page in static/ and forwards /api/* to the internal `api` service. The platform sets
API_URL because this service dependsOn `api`; locally it defaults to http://127.0.0.1:8001.
Run locally:  uvicorn main:app --host 0.0.0.0 --port ${PORT:-__PORT__}
"""

import os
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from fastapi import FastAPI, Request, Response
from fastapi.responses import FileResponse, JSONResponse

API_URL = os.environ.get("API_URL", "http://127.0.0.1:8001").rstrip("/")
PORT = int(os.environ.get("PORT", "__PORT__"))
STATIC = Path(__file__).parent / "static"
# Request headers passed on to the api (hop-by-hop and host headers are not).
FORWARD_HEADERS = ("accept", "content-type", "authorization")


@asynccontextmanager
async def lifespan(app: FastAPI):
    # One pooled client for all requests to the api service.
    async with httpx.AsyncClient(base_url=API_URL, timeout=10) as client:
        app.state.api = client
        yield


app = FastAPI(title="__DISPLAY_NAME__", lifespan=lifespan, docs_url=None, redoc_url=None)


@app.get("/health")
def health() -> dict[str, str]:
    """Readiness of this service alone; /api/health tells whether the api answers too."""
    return {"status": "ok", "service": "web"}


@app.get("/", include_in_schema=False)
def index() -> FileResponse:
    return FileResponse(STATIC / "index.html")


@app.api_route("/api/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
async def proxy(path: str, request: Request) -> Response:
    """Forward /api/<path> to <API_URL>/<path>, so the browser only ever talks to `web`."""
    client: httpx.AsyncClient = request.app.state.api
    headers = {k: v for k, v in request.headers.items() if k in FORWARD_HEADERS}
    try:
        upstream = await client.request(
            request.method, f"/{path}", params=request.query_params, content=await request.body(), headers=headers
        )
    except httpx.HTTPError as exc:
        return JSONResponse({"detail": f"api service unreachable at {API_URL}: {exc}"}, status_code=502)
    return Response(
        content=upstream.content,
        status_code=upstream.status_code,
        media_type=upstream.headers.get("content-type"),
    )


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="0.0.0.0", port=PORT)
