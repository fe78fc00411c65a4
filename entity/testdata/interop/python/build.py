"""Builds the request bodies azure-data-tables (Python) sends for the
entities below, by hand: PyPI is not reachable where these fixtures were
made, so the SDK itself did not run. The rules restated here are read from
the SDK's source (see ../README.md); the bodies are serialised the way the
SDK's generated client does, with json.dumps and its defaults (", " and
": " separators, ensure_ascii=True).

Run with python3 from this directory; it rewrites the *.request.json files.
"""
import base64
import json
import math
import uuid
from datetime import datetime, timezone

INT64, INT32, DOUBLE, STRING, GUID, DATETIME, BINARY, BOOLEAN = (
    "Edm.Int64", "Edm.Int32", "Edm.Double", "Edm.String", "Edm.Guid", "Edm.DateTime", "Edm.Binary", "Edm.Boolean")


def utc(dt):
    # _to_utc_datetime: UTC, microseconds, "Z".
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def float_value(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if v == float("inf"):
        return "Infinity"
    if v == float("-inf"):
        return "-Infinity"
    return v


def encode_12_5(entity):
    """TableEntityEncoder (_encoder.py): str, int and bool bare (int with no
    Int32 range check); float, UUID, bytes and datetime annotated; an
    (value, EdmType) tuple annotated with that type, Int64 as a string. The
    annotation key is inserted before the value."""
    out = {}
    for name, value in entity.items():
        edm = None
        if isinstance(value, tuple):
            value, edm = value
            if edm == INT64:
                value = str(value)
            elif edm == DOUBLE:
                value = float_value(value)
            elif edm == DATETIME and isinstance(value, datetime):
                value = utc(value)
        elif isinstance(value, bool) or isinstance(value, str) or isinstance(value, int):
            pass
        elif isinstance(value, float):
            edm, value = DOUBLE, float_value(value)
        elif isinstance(value, uuid.UUID):
            edm, value = GUID, str(value)
        elif isinstance(value, bytes):
            edm, value = BINARY, base64.b64encode(value).decode()
        elif isinstance(value, datetime):
            edm, value = DATETIME, utc(value)
        if edm and name not in ("PartitionKey", "RowKey"):
            out[name + "@odata.type"] = edm
        out[name] = value
    return out


def encode_12_0(entity):
    """_serialize._add_entity_properties: str annotated Edm.String (the keys
    too), int bare and within Int32, float bare when finite, the annotation
    key inserted after the value."""
    out = {}
    for name, value in entity.items():
        edm = None
        if isinstance(value, tuple):
            # The EdmType's converter: Int32, Boolean and finite Doubles
            # go out bare, as for the plain Python types.
            value, edm = value
            if edm == INT64:
                value = str(value)
            elif edm == DOUBLE:
                value = float_value(value)
                if not isinstance(value, str):
                    edm = None
            elif edm in (INT32, BOOLEAN):
                edm = None
        elif isinstance(value, bool):
            pass
        elif isinstance(value, str):
            edm = STRING
        elif isinstance(value, int):
            assert -2**31 <= value < 2**31
        elif isinstance(value, float):
            value = float_value(value)
            if isinstance(value, str):
                edm = DOUBLE
        elif isinstance(value, uuid.UUID):
            edm, value = GUID, str(value)
        elif isinstance(value, bytes):
            edm, value = BINARY, base64.b64encode(value).decode()
        elif isinstance(value, datetime):
            edm, value = DATETIME, utc(value)
        out[name] = value
        if edm:
            out[name + "@odata.type"] = edm
    return out


when = datetime(2012, 3, 4, 5, 6, 7, 123456, tzinfo=timezone.utc)
guid = uuid.UUID("0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901")
types = {
    "PartitionKey": "py", "RowKey": "types",
    "Str": "hello \u00fcn\u00efc\u00f6d\u00e9 \U0001F600 \"q\" \\ /",
    "Int32": 42,
    "Int32Min": -2**31,
    "Int64Big": (9007199254740993, INT64),
    "Int64Max": (2**63 - 1, INT64),
    "DoubleFrac": 2.5,
    "DoubleWhole": 2.0,
    "DoubleWholeTyped": (2, DOUBLE),
    "DoubleExp": 1e21,
    "DoubleTiny": 5e-324,
    "DoubleNaN": float("nan"),
    "DoubleInf": float("inf"),
    "DoubleNegInf": float("-inf"),
    "Bool": True,
    "Date": when,
    "Guid": guid,
    "Bin": bytes([0, 1, 2, 254, 251, 255]),
    "BinEmpty": b"",
    "StrTyped": ("typed", STRING),
    "Int32Typed": (7, INT32),
}
lookalikes = {
    "PartitionKey": "py", "RowKey": "lookalikes",
    "NumStr": "12345", "BigNumStr": "9007199254740993", "FloatStr": "2.5", "ExpStr": "1e3",
    "DateStr": "2012-03-04T05:06:07Z", "GuidStr": str(guid), "BoolStr": "true", "B64Str": "AAEC/vv/",
    "NaNStr": "NaN", "InfStr": "Infinity", "EmptyStr": "",
    "NumStrTyped": ("12345", STRING),
}
keywords = {"PartitionKey": "py", "RowKey": "keywords"}
for i, k in enumerate(["and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le", "true", "false", "null", "INF", "NaN",
                       "AND", "Or", "NOT", "Eq", "TRUE", "Null", "inf", "nan"]):
    keywords[k] = i
keys = [
    ("quote-key", {"PartitionKey": "\u00dc'p k", "RowKey": "O'Brien", "Name": "quote"}),
    ("empty-keys", {"PartitionKey": "", "RowKey": "", "Name": "both empty"}),
    ("unicode-keys", {"PartitionKey": "\u65e5\u672c\u8a9e", "RowKey": "\U0001F600 100% a+b ''", "Name": "unicode"}),
]
# A plain Python int beyond Int32: the 12.5 encoder sends it bare.
bigint = {"PartitionKey": "py", "RowKey": "bare-big-int", "Small": 2**31, "Exact": 2**53, "Inexact": 2**53 + 1}

fixtures = [("types", encode_12_5(types)), ("types-12.0", encode_12_0(types)),
            ("lookalikes", encode_12_5(lookalikes)), ("keywords", encode_12_5(keywords)),
            ("bare-big-int", encode_12_5(bigint))]
fixtures += [(n, encode_12_5(e)) for n, e in keys]
for name, body in fixtures:
    with open(name + ".request.json", "w") as f:
        f.write(json.dumps(body) + "\n")
