"""__APP_NAME__: a FastAPI service scaffolded by Slipway (template: python-api).

Run locally:  uvicorn main:app --host 0.0.0.0 --port ${PORT:-__PORT__}
Interactive API docs are served at /docs.
"""

from __future__ import annotations

import os
from itertools import count
from threading import Lock

from fastapi import FastAPI, HTTPException, Response, status
from pydantic import BaseModel, Field

APP_NAME = "__APP_NAME__"
DISPLAY_NAME = "__DISPLAY_NAME__"
DESCRIPTION = "__DESCRIPTION__"
PORT = int(os.environ.get("PORT", "__PORT__"))

app = FastAPI(title=DISPLAY_NAME, description=DESCRIPTION, version="0.1.0")


# --- Example resource: items, kept in memory -------------------------------------------
# Replace this with your own models and a real database; the shapes show the usual
# create / read / update / delete pattern with request validation by pydantic.


class ItemIn(BaseModel):
    """What a client sends to create or replace an item."""

    name: str = Field(min_length=1, max_length=100)
    description: str | None = Field(default=None, max_length=1000)
    price: float = Field(ge=0)
    quantity: int = Field(default=0, ge=0)


class Item(ItemIn):
    """An item as stored and returned by the API."""

    id: int


_items: dict[int, Item] = {}
_ids = count(1)
_lock = Lock()


@app.get("/health", tags=["ops"])
def health() -> dict[str, str]:
    """Readiness probe used by the platform (devfile attribute healthPath)."""
    return {"status": "ok", "app": APP_NAME}


@app.get("/", tags=["ops"])
def root() -> dict[str, str]:
    return {"app": APP_NAME, "name": DISPLAY_NAME, "docs": "/docs", "health": "/health"}


@app.get("/items", response_model=list[Item], tags=["items"])
def list_items(limit: int = 100, offset: int = 0) -> list[Item]:
    with _lock:
        items = sorted(_items.values(), key=lambda item: item.id)
    return items[offset : offset + limit]


@app.post("/items", response_model=Item, status_code=status.HTTP_201_CREATED, tags=["items"])
def create_item(payload: ItemIn) -> Item:
    with _lock:
        item = Item(id=next(_ids), **payload.model_dump())
        _items[item.id] = item
    return item


@app.get("/items/{item_id}", response_model=Item, tags=["items"])
def get_item(item_id: int) -> Item:
    with _lock:
        item = _items.get(item_id)
    if item is None:
        raise HTTPException(status_code=404, detail=f"item {item_id} not found")
    return item


@app.put("/items/{item_id}", response_model=Item, tags=["items"])
def replace_item(item_id: int, payload: ItemIn) -> Item:
    with _lock:
        if item_id not in _items:
            raise HTTPException(status_code=404, detail=f"item {item_id} not found")
        item = Item(id=item_id, **payload.model_dump())
        _items[item_id] = item
    return item


@app.delete("/items/{item_id}", status_code=status.HTTP_204_NO_CONTENT, tags=["items"])
def delete_item(item_id: int) -> Response:
    with _lock:
        if _items.pop(item_id, None) is None:
            raise HTTPException(status_code=404, detail=f"item {item_id} not found")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


try:  # added by the durable-workflow overlay (slipway scaffold --durable)
    from durable_workflow import durable_app
except ImportError as exc:
    if exc.name != "durable_workflow":  # the overlay is present but restate-sdk is missing
        raise
else:
    app.mount("/restate", durable_app)


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="0.0.0.0", port=PORT)
