"""__APP_NAME__: a durable support agent on Restate, scaffolded by Slipway (template: durable-agent).

Serve:     hypercorn --config hypercorn-config.toml --bind 0.0.0.0:${PORT:-__PORT__} agent:app
Register:  restate deployments register http://localhost:__PORT__

`SupportAgent` is a Restate workflow: one run per ticket id. Every step that touches the outside
world runs inside `ctx.run_typed(...)` (the typed form of `ctx.run`), so Restate journals its
result. When the process crashes or is redeployed mid-run, Restate invokes the workflow again
and the SDK replays finished steps from the journal instead of running them twice; a run that
waits for a human approval is suspended and costs nothing while it waits.
`CustomerMemory` is a virtual object (durable per-customer state) the agent reads and updates.
"""

import logging
import os
import random
import time
from typing import Literal

import restate
from pydantic import BaseModel, Field
from restate import (
    ObjectContext,
    ObjectSharedContext,
    RunOptions,
    TerminalError,
    WorkflowContext,
    WorkflowSharedContext,
)

AGENT_NAME = "__DISPLAY_NAME__"
# Probability that "send reply" fails, to watch Restate retry a step (0 = never fails).
FLAKINESS = float(os.environ.get("AGENT_FLAKINESS", "0"))

# restate.getLogger drops records while a run is being replayed, so each line is logged once.
log = restate.getLogger("agent")
log.setLevel(os.environ.get("LOG_LEVEL", "INFO"))
log.addHandler(logging.StreamHandler())
log.propagate = False


# --- Messages -------------------------------------------------------------------------------


class Ticket(BaseModel):
    customer: str = Field(min_length=1, description="customer id; keys CustomerMemory")
    subject: str
    body: str = ""


class Triage(BaseModel):
    category: Literal["billing", "bug", "account", "question"]
    priority: Literal["low", "normal", "high"]


class Decision(BaseModel):
    approved: bool
    reviewer: str = "reviewer"
    note: str | None = None


class Resolution(BaseModel):
    ticket_id: str
    category: str
    priority: str
    reply: str
    status: Literal["sent", "rejected"]
    reviewed_by: str | None = None


# --- Tools: the agent's side effects. Swap in an LLM, a CRM, an e-mail API... ---------------
# Each is called through ctx.run_typed, so it runs once per workflow even across restarts.

KEYWORDS = {
    "billing": ("invoice", "refund", "charge", "payment", "price"),
    "bug": ("error", "crash", "broken", "bug", "fails"),
    "account": ("login", "password", "account", "access", "2fa"),
}


def classify(ticket: Ticket) -> Triage:
    text = f"{ticket.subject} {ticket.body}".lower()
    category = next((c for c, words in KEYWORDS.items() if any(w in text for w in words)), "question")
    urgent = any(w in text for w in ("urgent", "asap", "refund", "outage", "down"))
    priority = "high" if urgent else ("normal" if category != "question" else "low")
    return Triage(category=category, priority=priority)


def draft_reply(ticket: Ticket, triage: Triage, previous_tickets: int) -> str:
    greeting = "Welcome back" if previous_tickets else "Hello"
    steps = {
        "billing": "Our billing team is reviewing the charge and will correct it if needed.",
        "bug": "We reproduced the problem and opened an engineering ticket.",
        "account": "We have sent a secure link to restore access to your account.",
        "question": "Here is what we found in our documentation.",
    }[triage.category]
    return f"{greeting} {ticket.customer}, thanks for reaching out about \"{ticket.subject}\". {steps}"


def send_reply(customer: str, reply: str) -> float:
    if random.random() < FLAKINESS:
        raise RuntimeError("mail server unavailable")  # retried by Restate
    log.info("reply to %s: %s", customer, reply)
    return time.time()


# --- Durable state per customer ----------------------------------------------------------

customer_memory = restate.VirtualObject("CustomerMemory")


@customer_memory.handler()
async def remember(ctx: ObjectContext, entry: dict) -> int:
    """Append a handled ticket to this customer's history (exclusive: one writer per key)."""
    history = await ctx.get("history") or []
    history = (history + [entry])[-20:]
    ctx.set("history", history)
    return len(history)


@customer_memory.handler(kind="shared")
async def history(ctx: ObjectSharedContext) -> list[dict]:
    return await ctx.get("history") or []


# --- The agent workflow ---------------------------------------------------------------------

support_agent = restate.Workflow("SupportAgent")


@support_agent.main()
async def run(ctx: WorkflowContext, ticket: Ticket) -> Resolution:
    """Handle one ticket; the workflow key (ticket id) makes the run idempotent."""
    ctx.set("stage", "classifying")
    triage = await ctx.run_typed("classify", classify, ticket=ticket)

    past = await ctx.object_call(history, key=ticket.customer, arg=None)

    ctx.set("stage", "drafting")
    reply = await ctx.run_typed("draft reply", draft_reply, ticket=ticket, triage=triage, previous_tickets=len(past))
    ctx.set("draft", reply)

    reviewer = None
    if triage.priority == "high":
        # Durable promise: the run suspends here until someone calls `approve` for this id.
        ctx.set("stage", "awaiting approval")
        decision = await ctx.promise("approval", type_hint=Decision).value()
        reviewer = decision.reviewer
        if not decision.approved:
            ctx.set("stage", "rejected")
            return Resolution(ticket_id=ctx.key(), category=triage.category, priority=triage.priority,
                              reply=decision.note or reply, status="rejected", reviewed_by=reviewer)
        if decision.note:
            reply = f"{reply} {decision.note}"

    ctx.set("stage", "sending")
    await ctx.run_typed("send reply", send_reply, RunOptions(max_attempts=10), customer=ticket.customer, reply=reply)

    # One-way call: delivered exactly once by Restate, the workflow does not wait for it.
    ctx.object_send(remember, key=ticket.customer,
                    arg={"ticket_id": ctx.key(), "subject": ticket.subject, "category": triage.category})
    ctx.set("stage", "done")
    return Resolution(ticket_id=ctx.key(), category=triage.category, priority=triage.priority,
                      reply=reply, status="sent", reviewed_by=reviewer)


@support_agent.handler()
async def approve(ctx: WorkflowSharedContext, decision: Decision) -> str:
    """Human in the loop: resolve the approval a high-priority run is waiting for."""
    stage = await ctx.get("stage")
    if stage in ("done", "rejected"):
        raise TerminalError(f"ticket {ctx.key()} is already {stage}", status_code=409)
    await ctx.promise("approval", type_hint=Decision).resolve(decision)
    return "recorded"


@support_agent.handler()
async def status(ctx: WorkflowSharedContext) -> dict:
    """Where the run is, and the draft reply once there is one."""
    return {"ticket_id": ctx.key(), "agent": AGENT_NAME,
            "stage": await ctx.get("stage") or "not started", "draft": await ctx.get("draft")}


# The ASGI app hypercorn serves: Restate's endpoint (discovery, invocations, /health).
app = restate.app(services=[support_agent, customer_memory])


if __name__ == "__main__":
    import asyncio

    import hypercorn.asyncio
    from hypercorn.config import Config

    config = Config.from_toml("hypercorn-config.toml")
    config.bind = [f"0.0.0.0:{os.environ.get('PORT', '__PORT__')}"]
    asyncio.run(hypercorn.asyncio.serve(app, config))
