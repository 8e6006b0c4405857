"""__APP_NAME__ / api: the internal REST service of a Slipway multi-container app.

It owns the job queue: `web` creates and lists jobs, `worker` claims and completes them.
Internal only (devfile exposure: internal), port 8001 unless PORT says otherwise.
Run locally:  uvicorn main:app --host 0.0.0.0 --port ${PORT:-8001}
"""

import os
from datetime import datetime, timedelta, timezone
from itertools import count
from threading import Lock
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Response, status
from pydantic import BaseModel, Field

PORT = int(os.environ.get("PORT", "8001"))
# A job claimed by a worker that has not reported back within this time is handed out again.
CLAIM_TIMEOUT = timedelta(seconds=float(os.environ.get("CLAIM_TIMEOUT_SECONDS", "60")))

app = FastAPI(title="__DISPLAY_NAME__ API", version="0.1.0")

Operation = Literal["stats", "uppercase", "reverse"]
State = Literal["pending", "running", "done", "failed"]


class JobIn(BaseModel):
    text: str = Field(min_length=1, max_length=100_000)
    operation: Operation = "stats"


class JobResult(BaseModel):
    result: Any = None
    error: str | None = None


class Job(JobIn):
    id: int
    state: State = "pending"
    created_at: datetime
    claimed_at: datetime | None = None
    finished_at: datetime | None = None
    attempts: int = 0
    result: Any = None
    error: str | None = None


_jobs: dict[int, Job] = {}
_ids = count(1)
_lock = Lock()


def _now() -> datetime:
    return datetime.now(timezone.utc)


@app.get("/health", tags=["ops"])
def health() -> dict[str, str]:
    return {"status": "ok", "service": "api"}


@app.get("/stats", tags=["jobs"])
def stats() -> dict[str, int]:
    with _lock:
        counts = {state: 0 for state in ("pending", "running", "done", "failed")}
        for job in _jobs.values():
            counts[job.state] += 1
    return counts


@app.get("/jobs", response_model=list[Job], tags=["jobs"])
def list_jobs(limit: int = 50) -> list[Job]:
    with _lock:
        jobs = sorted(_jobs.values(), key=lambda job: job.id, reverse=True)
    return jobs[:limit]


@app.post("/jobs", response_model=Job, status_code=status.HTTP_201_CREATED, tags=["jobs"])
def create_job(payload: JobIn) -> Job:
    with _lock:
        job = Job(id=next(_ids), created_at=_now(), **payload.model_dump())
        _jobs[job.id] = job
    return job


@app.get("/jobs/{job_id}", response_model=Job, tags=["jobs"])
def get_job(job_id: int) -> Job:
    with _lock:
        job = _jobs.get(job_id)
    if job is None:
        raise HTTPException(status_code=404, detail=f"job {job_id} not found")
    return job


@app.delete("/jobs/{job_id}", status_code=status.HTTP_204_NO_CONTENT, tags=["jobs"])
def delete_job(job_id: int) -> Response:
    with _lock:
        if _jobs.pop(job_id, None) is None:
            raise HTTPException(status_code=404, detail=f"job {job_id} not found")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@app.post("/jobs/claim", response_model=Job, tags=["worker"],
          responses={204: {"description": "no job is waiting"}})
def claim_job() -> Job | Response:
    """Called by the worker: hand out the oldest pending (or abandoned) job."""
    now = _now()
    with _lock:
        for job in sorted(_jobs.values(), key=lambda j: j.id):
            abandoned = job.state == "running" and job.claimed_at and now - job.claimed_at > CLAIM_TIMEOUT
            if job.state == "pending" or abandoned:
                job.state, job.claimed_at, job.attempts = "running", now, job.attempts + 1
                return job.model_copy()
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@app.post("/jobs/{job_id}/result", response_model=Job, tags=["worker"])
def complete_job(job_id: int, payload: JobResult) -> Job:
    """Called by the worker when a job is finished (result) or failed (error)."""
    with _lock:
        job = _jobs.get(job_id)
        if job is None:
            raise HTTPException(status_code=404, detail=f"job {job_id} not found")
        if job.state != "running":
            raise HTTPException(status_code=409, detail=f"job {job_id} is {job.state}, not running")
        job.state = "failed" if payload.error else "done"
        job.result, job.error, job.finished_at = payload.result, payload.error, _now()
        return job.model_copy()


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
