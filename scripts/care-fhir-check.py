"""Independent check of the care service's FHIR R4 form with the fhir.resources R4B models.

Usage: python care-fhir-check.py BASE_URL [TOKEN] [REQUEST_UUID] [NAMESPACE]
  BASE_URL: a running, FRESH `slipway care serve --demo` (this check completes the demo's
  active data request), including --base-path if any. It starts nothing itself.
  TOKEN defaults to demo-staff, REQUEST_UUID to the demo's active request, NAMESPACE to care.

Fetches GET {base}/{ns}/missingInformationRequest/{uuid}/fhir, parses it as an R4B Bundle
and its entries as Questionnaire and Task (pydantic validation of every element), checks
the SDC task pattern, builds a QuestionnaireResponse with fhir.resources answering every
item, POSTs it as application/fhir+json and expects 200, then 409 when posted again; then
reads the answer back (a third entry, a valid QuestionnaireResponse `completed`), corrects one
value through …/amend and reads it `amended`, the Task noting the correction.

Before that, the worklist: it adds open requests through the admin API (ADMIN_TOKEN,
default demo-admin), pages through GET {base}/fhir/Task?status=requested by each Bundle's
`next` link, validates every page as an R4B searchset Bundle and every entry as a Task, and
checks that every open request comes exactly once, in expiry order; then it claims the
request (Task in-progress, owned by the caller) and, after the POST, reads it completed.
Exit status 0 on success; any failure raises.
"""

import datetime
import decimal
import json
import sys
import urllib.error
import urllib.request
import uuid as uuid_module

from fhir.resources.R4B.bundle import Bundle
from fhir.resources.R4B.questionnaire import Questionnaire
from fhir.resources.R4B.questionnaireresponse import (
    QuestionnaireResponse,
    QuestionnaireResponseItem,
    QuestionnaireResponseItemAnswer,
)
from fhir.resources.R4B.task import Task

SDC = "http://hl7.org/fhir/uv/sdc/CodeSystem/temp"
FIELD_TYPE = "urn:slipway:care:field-type"
ACTIVE = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01"


def call(method, url, token, body=None, content_type=None):
    req = urllib.request.Request(url, method=method, data=body)
    req.add_header("Authorization", f"Bearer {token}")
    if content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def answer(item):
    """A valid answer for an item, from its FHIR type and its field type code."""
    field_type = next((c.code for c in item.code or [] if c.system == FIELD_TYPE), None)
    t = item.type
    if t == "choice":
        return QuestionnaireResponseItemAnswer(valueCoding=item.answerOption[0].valueCoding)
    if t == "date":
        return QuestionnaireResponseItemAnswer(valueDate=datetime.date(1980, 5, 6))
    if t == "dateTime":
        return QuestionnaireResponseItemAnswer(valueDateTime="2026-01-15T10:30:00Z")
    if t == "boolean":
        return QuestionnaireResponseItemAnswer(valueBoolean=True)
    if t == "integer":
        return QuestionnaireResponseItemAnswer(valueInteger=7)
    if t == "decimal":
        return QuestionnaireResponseItemAnswer(valueDecimal=decimal.Decimal("7.5"))
    if field_type == "EMAIL":
        return QuestionnaireResponseItemAnswer(valueString="dana@example.com")
    if field_type == "PHONE":
        return QuestionnaireResponseItemAnswer(valueString="+1 555 0100")
    text = "Answer"[: item.maxLength or 6]
    return QuestionnaireResponseItemAnswer(valueString=text)


def check_worklist(base, token, uuid, ns):
    """Pages the open worklist and checks every Bundle and Task with fhir.resources."""
    admin = "demo-admin"
    status, _, body = call("GET", f"{base}/admin/data-requests/{uuid}", admin)
    assert status == 200, f"GET admin data request answered {status}: {body[:300]!r}"
    existing = json.loads(body)
    made = []
    for day in [9, 3, 7, 3, 1, 5, 8]:
        new = str(uuid_module.uuid4())
        doc = {
            "carePlanExternalId": existing["carePlanExternalId"],
            "groupId": existing["groupId"],
            "status": "Active",
            "expirationDate": f"2098-03-{day:02d}",
        }
        status, _, body = call(
            "PUT", f"{base}/admin/data-requests/{new}", admin, json.dumps(doc).encode(), "application/json"
        )
        assert status == 200, f"PUT data request answered {status}: {body[:300]!r}"
        made.append(new)
    url = f"{base}/fhir/Task?status=requested&_count=3"
    seen, ends, pages = [], [], 0
    while url:
        status, content_type, body = call("GET", url, token)
        assert status == 200, f"GET {url} answered {status}: {body[:300]!r}"
        assert content_type.startswith("application/fhir+json"), content_type
        raw = json.loads(body)
        bundle = Bundle.model_validate(raw)
        assert bundle.type == "searchset", bundle.type
        pages += 1
        for entry, raw_entry in zip(bundle.entry or [], raw.get("entry", [])):
            task = Task.model_validate(raw_entry["resource"])
            assert task.status == "requested", task.status
            assert entry.search.mode == "match"
            assert entry.fullUrl.endswith(f"/fhir/Task/{task.id}"), entry.fullUrl
            seen.append(task.id)
            ends.append(str(task.restriction.period.end))
        url = next((l.url for l in bundle.link or [] if l.relation == "next"), None)
    assert len(seen) == len(set(seen)), f"a request came twice: {seen}"
    assert set(made) | {uuid} <= set(seen), "an open request is missing from the worklist"
    assert ends == sorted(ends), f"not in expiry order: {ends}"
    print(f"worklist ok: {len(seen)} open requests on {pages} pages, each once, by expiry")

    status, _, body = call("POST", f"{base}/{ns}/missingInformationRequest/{uuid}/claim", token)
    assert status == 200, f"claim answered {status}: {body[:300]!r}"
    task = Task.model_validate(json.loads(body))
    assert task.status == "in-progress" and task.owner is not None, task.status
    print(f"claimed: Task {task.status}, owner {task.owner.display}")


def main():
    base = sys.argv[1].rstrip("/")
    token = sys.argv[2] if len(sys.argv) > 2 else "demo-staff"
    uuid = sys.argv[3] if len(sys.argv) > 3 else ACTIVE
    ns = sys.argv[4] if len(sys.argv) > 4 else "care"
    url = f"{base}/{ns}/missingInformationRequest/{uuid}"
    check_worklist(base, token, uuid, ns)

    status, content_type, body = call("GET", f"{url}/fhir", token)
    assert status == 200, f"GET …/fhir answered {status}: {body[:500]!r}"
    assert content_type.startswith("application/fhir+json"), content_type
    bundle = Bundle.model_validate(json.loads(body))
    assert bundle.type == "collection", bundle.type
    raw = json.loads(body)["entry"]
    kinds = [e["resource"]["resourceType"] for e in raw]
    assert kinds == ["Questionnaire", "Task"], kinds
    questionnaire = Questionnaire.model_validate(raw[0]["resource"])
    task = Task.model_validate(raw[1]["resource"])

    assert questionnaire.item, "the questionnaire has no items"
    for item in questionnaire.item:
        assert item.linkId and item.text and item.type, item
        assert item.required is True, item.linkId
        if item.type == "choice":
            assert item.answerOption, f"choice item {item.linkId} without answerOption"
    assert task.status == "in-progress", task.status  # claimed by check_worklist
    assert task.intent, "task without intent"
    codes = [(c.system, c.code) for c in task.code.coding]
    assert (SDC, "complete-questionnaire") in codes, codes
    assert task.for_fhir.identifier or task.for_fhir.reference, "task.for names no patient"
    assert task.restriction.period.end is not None, "no restriction.period.end"
    inputs = [
        i.valueCanonical
        for i in task.input
        if any((c.system, c.code) == (SDC, "questionnaire") for c in i.type.coding)
    ]
    assert inputs == [questionnaire.url], (inputs, questionnaire.url)
    print(
        f"bundle ok: Questionnaire with {len(questionnaire.item)} items, "
        f"Task {task.status}, ends {task.restriction.period.end}"
    )

    response = QuestionnaireResponse(
        status="completed",
        questionnaire=questionnaire.url,
        authored=datetime.datetime.now(datetime.timezone.utc),
        item=[
            QuestionnaireResponseItem(linkId=item.linkId, text=item.text, answer=[answer(item)])
            for item in questionnaire.item
        ],
    )
    payload = response.json().encode()
    QuestionnaireResponse.model_validate_json(payload)
    status, _, body = call("POST", url, token, payload, "application/fhir+json")
    assert status == 200, f"POST QuestionnaireResponse answered {status}: {body[:500]!r}"
    result = json.loads(body)
    assert result["status"] == "Completed", result
    assert sorted(result["updatedFields"]) == sorted(i.linkId for i in questionnaire.item), result
    print(f"QuestionnaireResponse accepted: {len(result['updatedFields'])} fields written")

    status, _, body = call("POST", url, token, payload, "application/fhir+json")
    assert status == 409, f"a second POST answered {status}: {body[:500]!r}"
    print("second POST refused with 409, as for the plain body")

    status, _, body = call("GET", f"{base}/fhir/Task/{uuid}", token)
    assert status == 200, f"GET Task answered {status}: {body[:300]!r}"
    task = Task.model_validate(json.loads(body))
    assert task.status == "completed", task.status
    print("the answered request's Task is completed")
    check_answer(url, token, questionnaire, response)


def answered_bundle(url, token):
    """The answered request's bundle: Questionnaire, Task, QuestionnaireResponse, each valid."""
    status, _, body = call("GET", f"{url}/fhir", token)
    assert status == 200, f"GET …/fhir of the answered request answered {status}: {body[:500]!r}"
    Bundle.model_validate(json.loads(body))
    raw = json.loads(body)["entry"]
    kinds = [e["resource"]["resourceType"] for e in raw]
    assert kinds == ["Questionnaire", "Task", "QuestionnaireResponse"], kinds
    return Task.model_validate(raw[1]["resource"]), QuestionnaireResponse.model_validate(raw[2]["resource"])


def check_answer(url, token, questionnaire, sent):
    """The answer stays readable as a valid QuestionnaireResponse; a correction (…/amend, a
    QuestionnaireResponse too) makes it `amended` and notes itself on the Task."""
    task, answer_read = answered_bundle(url, token)
    assert answer_read.status == "completed", answer_read.status
    assert answer_read.questionnaire == questionnaire.url, answer_read.questionnaire
    assert [i.linkId for i in answer_read.item] == [i.linkId for i in questionnaire.item]
    assert all(i.answer for i in answer_read.item), "an answered item reads back without its answer"
    print(f"answer readable: QuestionnaireResponse {answer_read.status}, {len(answer_read.item)} items")

    decimal_item = next((i for i in questionnaire.item if i.type == "decimal"), None)
    assert decimal_item is not None, "the demo group has a decimal field to correct"
    items = []
    for item in sent.item:
        if item.linkId == decimal_item.linkId:
            item = QuestionnaireResponseItem(linkId=item.linkId, answer=[QuestionnaireResponseItemAnswer(valueDecimal=decimal.Decimal("8.5"))])
        items.append(item)
    corrected = QuestionnaireResponse(status="amended", questionnaire=questionnaire.url, item=items)
    status, _, body = call("POST", f"{url}/amend", token, corrected.json().encode(), "application/fhir+json")
    assert status == 200, f"POST …/amend answered {status}: {body[:500]!r}"
    result = json.loads(body)
    assert result["amended"] is True and result["changedFields"] == [decimal_item.linkId], result

    task, answer_read = answered_bundle(url, token)
    assert answer_read.status == "amended", answer_read.status
    value = next(i.answer[0].valueDecimal for i in answer_read.item if i.linkId == decimal_item.linkId)
    assert value == decimal.Decimal("8.5"), value
    assert task.status == "completed" and task.businessStatus.text == "amended", task.businessStatus
    assert task.note and decimal_item.text in task.note[0].text, task.note
    print(f"corrected: QuestionnaireResponse {answer_read.status}; Task note {task.note[0].text!r}")


if __name__ == "__main__":
    main()
