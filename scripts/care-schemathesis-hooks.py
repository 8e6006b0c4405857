"""Schemathesis hooks for the care service: what the OpenAPI document cannot say.

The document says every syntactic rule the validator enforces (it is generated from the
validator's tables). Three kinds of rule are beyond any schema, and only these are handled
here, for POSITIVE cases only (negative cases are sent as generated, so a schema violation
is never repaired into valid data):

1. Stored data: `vendorName`, `programName`, consent `name`, `drugNdc`, `objectName`,
   `recordType` and `additionalFields` keys name records of the deployment. Generated values
   are replaced by those of the demo data set (`--demo`), which the run is against.
2. Rules across keys: external IDs unique per kind within one request; the cardholder name
   (first + last at most 49 characters together). Generated values are made to comply.
3. Month lengths: the date pattern (and `format: date`) cannot stop every generator from
   producing a day past the end of its month (`2023-02-29`); such cases are dropped.

Missing-information POSTs: which field UUIDs and values fulfil a data request is stored data
too; a schema-valid body that does not fulfil the request is a 412, allowed for positive
data by `care-schemathesis.toml`.
"""

import datetime
import re

import schemathesis

DEMO = {
    "vendorName": "DemoRx",
    "programName": "DemoCareProgram",
    "purpose": "DUP-TREATMENT",
    "product": "PROD-1001",
    "object": "AdverseEvent",
    "recordType": "Serious",
}
DATE_KEYS = {"enrollmentDate", "dateOfBirth", "effectiveDate", "expirationDate"}
DATE_SHAPE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
PARTIES = ("patient", "physician", "staff", "caregiver", "pharmacy", "organization")
CONTACTS = {"addresses": "address", "phones": "phone", "emails": "email", "faxes": "fax"}


def _is_positive(case):
    meta = getattr(case, "meta", None)
    return meta is not None and meta.generation.mode.is_positive


def _is_enroll(case):
    return case.operation.method.upper() == "POST" and case.operation.path.endswith("/eRxApi")


def _dates(value, key=None):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _dates(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _dates(v, key)
    elif key in DATE_KEYS and isinstance(value, str):
        yield value


def _calendar_date(s):
    try:
        datetime.date.fromisoformat(s)
        return True
    except ValueError:
        return False


@schemathesis.hook
def filter_case(context, case):
    if not (_is_positive(case) and _is_enroll(case)):
        return True
    return all(
        _calendar_date(d) for d in _dates(case.body) if DATE_SHAPE.match(d)
    )


class _Ids:
    """Makes external IDs unique per kind, as one request needs."""

    def __init__(self):
        self.seen = set()
        self.counter = 0

    def fix(self, obj, kind):
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
            return
        while (kind, obj["id"]) in self.seen:
            self.counter += 1
            obj["id"] = f"u{self.counter}"
        self.seen.add((kind, obj["id"]))


def _objects(value):
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _no_additional_fields(obj):
    if isinstance(obj, dict) and isinstance(obj.get("additionalFields"), dict):
        obj["additionalFields"] = {}


@schemathesis.hook
def map_case(context, case):
    if not (_is_positive(case) and _is_enroll(case)) or not isinstance(case.body, dict):
        return case
    body = case.body
    body["vendorName"] = DEMO["vendorName"]
    body["programName"] = DEMO["programName"]
    ids = _Ids()
    for party in PARTIES:
        p = body.get(party)
        if not isinstance(p, dict):
            continue
        ids.fix(p, party)
        _no_additional_fields(p)
        for key, kind in CONTACTS.items():
            for c in _objects(p.get(key)):
                ids.fix(c, kind)
                _no_additional_fields(c)
    for c in _objects(body.get("consents")):
        c["name"] = DEMO["purpose"]
        ids.fix(c, "consent")
        _no_additional_fields(c)
    for i in _objects(body.get("insurances")):
        ids.fix(i, "insurance")
        _no_additional_fields(i)
        first, last = i.get("policyHolderFirstName"), i.get("policyHolderLastName")
        if isinstance(first, str) and isinstance(last, str) and len(first) + len(last) > 49:
            i["policyHolderLastName"] = last[: max(0, 49 - len(first))]
    for rx in _objects(body.get("prescriptions")):
        rx["drugNdc"] = DEMO["product"]
        ids.fix(rx, "prescription")
        _no_additional_fields(rx)
    for o in _objects(body.get("additionalObjects")):
        o["objectName"] = DEMO["object"]
        for r in _objects(o.get("records")):
            r["recordType"] = DEMO["recordType"]
            _no_additional_fields(r)
    return case
