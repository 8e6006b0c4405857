"""schemathesis hooks for scripts/platform-schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

The platform's OpenAPI document is exact: every request it calls valid must be accepted
(2xx, or 401/403/404/409 for state: a UUID naming nothing, a role the caller lacks). A few
inputs cannot be described by a schema because only the server can make a valid one: page
tokens, presigned-URL signatures, build contexts (a compressed tar holding a valid devfile).
The document marks those with "x-opaque": true, on the parameter or on the request body.

This hook drops a "schema-valid request rejected" failure only when the server's 400 names,
in its error's `field`, an input the document marks opaque: an opaque parameter by name, or,
for an opaque body, any field that is not one of the operation's parameters (the body is
checked first and its errors name "context" or "devfile"). Every other rejection still fails.
"""

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData


def _opaque_inputs(operation):
    """(names of opaque parameters, names of other parameters, whether the body is opaque)."""
    item = operation.schema.raw_schema["paths"][operation.path]
    op = item[operation.method.lower()]
    params = item.get("parameters", []) + op.get("parameters", [])
    opaque = {p["name"] for p in params if p.get("x-opaque")}
    others = {p["name"] for p in params if not p.get("x-opaque")}
    return opaque, others, bool(op.get("requestBody", {}).get("x-opaque"))


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if not isinstance(failure, RejectedPositiveData) or response.status_code != 400:
        return True
    try:
        field = response.json()["error"]["field"]
    except (ValueError, KeyError, TypeError):
        return True
    opaque, others, opaque_body = _opaque_inputs(case.operation)
    if field in opaque:
        return False
    if opaque_body and field is not None and field not in others:
        return False
    return True


# Build contexts (tar.zst, tar.gz) and prebuilt images (tar) are sent as the raw bytes
# schemathesis generates for their `format: binary` bodies.
schemathesis.serializer.alias(
    [
        "application/zstd",
        "application/gzip",
        "application/x-tar",
        "application/vnd.oci.image.layout.v1+tar",
    ],
    "application/octet-stream",
)
