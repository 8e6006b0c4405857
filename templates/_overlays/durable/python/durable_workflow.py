"""Durable workflow added by the Slipway durable overlay (scaffold_app with "durable": true).

`durable_app` is an ASGI app that speaks the Restate service protocol. The service's main.py
mounts it at /restate; register that URL with a Restate server (see DURABLE.md) and invoke the
workflow through Restate's ingress. Every `ctx.run_typed(...)` step is recorded in Restate's
journal: if the process crashes or is redeployed mid-way, Restate re-invokes the workflow and
completed steps are replayed from the journal instead of being executed again.
"""

import random
import time
import uuid
from datetime import timedelta

import restate
from restate import RunOptions, TerminalError, Workflow, WorkflowContext, WorkflowSharedContext

order_workflow = Workflow("OrderWorkflow")


# --- Side effects. In a real app these call a payment provider, a database, an e-mail API... ---


def reserve_stock(order: dict) -> str:
    if not order.get("items"):
        raise TerminalError("an order needs at least one item")  # terminal: never retried
    return f"res-{uuid.uuid4().hex[:8]}"


def charge_payment(order: dict) -> str:
    # Fails now and then to show retries: Restate retries the step, the journal keeps
    # the steps before it, and the charge happens exactly once.
    if random.random() < 0.3:
        raise RuntimeError("payment provider timed out")
    return f"pay-{uuid.uuid4().hex[:8]}"


def send_confirmation(order: dict, payment_id: str) -> str:
    return f"confirmation for {order.get('customer', 'customer')} ({payment_id}) sent at {time.time():.0f}"


# --- The workflow ---------------------------------------------------------------------------


@order_workflow.main()
async def run(ctx: WorkflowContext, order: dict) -> dict:
    """Process one order; the workflow key (the URL's id) is the order id."""
    ctx.set("status", "reserving")
    reservation = await ctx.run_typed("reserve stock", reserve_stock, RunOptions(max_attempts=3), order=order)

    ctx.set("status", "charging")
    payment = await ctx.run_typed(
        "charge payment", charge_payment, RunOptions(max_duration=timedelta(minutes=5)), order=order
    )

    ctx.set("status", "confirming")
    confirmation = await ctx.run_typed("send confirmation", send_confirmation, order=order, payment_id=payment)

    ctx.set("status", "done")
    return {"order_id": ctx.key(), "reservation": reservation, "payment": payment, "confirmation": confirmation}


@order_workflow.handler()
async def status(ctx: WorkflowSharedContext) -> str:
    """Read the workflow's progress while it runs (or after it finished)."""
    return await ctx.get("status") or "not started"


durable_app = restate.app(services=[order_workflow])
