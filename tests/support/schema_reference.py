"""Reference verdicts for turnbench's JSON Schema checks (src/checks/schema.rs), computed
independently with Python's `jsonschema` (Draft202012Validator, formats asserted).

    python3 -m venv /tmp/schema-venv
    /tmp/schema-venv/bin/pip install jsonschema==4.26.0 rfc3339-validator==0.1.4 fqdn==1.6.0 rfc3987==1.3.8
    /tmp/schema-venv/bin/python tests/support/schema_reference.py    # from the repository root

Writes tests/fixtures/schema_cases.json: every schema, and per (schema, instance) case
Python's verdict. The test `agrees_with_python_jsonschema_on_turnbench_schemas` in
tests/schema_suite.rs asserts that turnbench agrees on every case, except the cases listed in DEVIATIONS below,
where Python is lax or not ECMA-262/RFC 3339 and turnbench deliberately differs; each one
carries turnbench's verdict and why. The generator checks that Python still says what the
deviation claims, so a new Python version cannot silently turn one into an agreement.

Cases come from three places:
- KEYWORDS and FORMATS: hand-written, every supported keyword and format with passing and
  failing instances and the edge cases (1.0 as an integer, code points, leap days, ...);
- the real schemas of checks/*.toml against the references of scenarios/*.toml, their
  [[defect]] variants, and deterministic mutations of those references;
- docs/report.schema.json against tests/snapshots/report.json (as it is, which lacks the
  newer `definitions` of a run, and brought up to date) and mutations of it.

The fixture keeps each distinct instance once (`instances`); a case is
{"schema": i, "instance": j, "valid": Python's verdict} and, for a deviation, "turnbench" and
"why".
"""

import copy
import glob
import json
import os
import random
import sys
import tomllib
from importlib.metadata import version

from jsonschema import Draft202012Validator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "schema_cases.json")
CHECKER = Draft202012Validator.FORMAT_CHECKER

# (name, schema, instances). Instances are Python values; 1.0 stays a float in the JSON.
KEYWORDS = [
    ("true schema", True, [None, 1, "x", [], {}]),
    ("false schema", False, [None, 1, "x", [], {}]),
    ("empty schema", {}, [None, 0, "", [1], {"a": 1}]),
    ("type string", {"type": "string"}, ["", "x", 1, None, [], {}, True]),
    ("type integer", {"type": "integer"}, [1, -7, 1.0, -0.0, 1.5, 1e300, 12345678901234567890, "1", True, None]),
    ("type number", {"type": "number"}, [1, 1.5, -2e-9, "1", True, None]),
    ("type boolean", {"type": "boolean"}, [True, False, 0, 1, "true", None]),
    ("type null", {"type": "null"}, [None, 0, "", False, [], {}]),
    ("type array", {"type": "array"}, [[], [1], {}, "[]"]),
    ("type object", {"type": "object"}, [{}, {"a": 1}, [], "{}"]),
    ("type list", {"type": ["string", "null"]}, ["x", None, 1, []]),
    ("type integer or boolean", {"type": ["integer", "boolean"]}, [1, 2.0, True, 2.5, "1"]),
    ("enum", {"enum": ["A", "B", 1, None, [1, 2], {"k": "v"}]},
     ["A", "B", "C", 1, 1.0, True, None, [1, 2], [1.0, 2.0], [2, 1], {"k": "v"}, {"k": "w"}, "a"]),
    ("enum of false", {"enum": [False, 0]}, [False, 0, 0.0, None, ""]),
    ("enum of true", {"enum": [True]}, [True, 1, 1.0]),
    ("const string", {"const": "S1"}, ["S1", "s1", "S1 ", 1]),
    ("const number", {"const": 1}, [1, 1.0, True, "1", 2]),
    ("const float", {"const": 2.5}, [2.5, 2.50, 2, "2.5"]),
    ("const zero", {"const": 0}, [0, 0.0, -0.0, False, None]),
    ("const object", {"const": {"a": [1, {"b": None}]}},
     [{"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]}, {"a": [True, {"b": None}]}, {"a": [1, {}]}, {"a": [1, {"b": None}], "c": 1}]),
    ("const array", {"const": [0, False]}, [[0, False], [False, 0], [0.0, False], [0, 0]]),
    ("const null", {"const": None}, [None, 0, False, ""]),
    ("properties", {"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}},
     [{}, {"a": 1}, {"a": "x"}, {"a": 1, "b": "y"}, {"b": 2}, {"c": None}, [], "a"]),
    ("required", {"required": ["a", "b"]}, [{"a": 1, "b": 2}, {"a": 1}, {}, {"b": None, "a": None}, [], "ab", 1]),
    ("required empty", {"required": []}, [{}, {"a": 1}]),
    ("properties and required", {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
     [{"id": "a"}, {"id": 7}, {"idx": "a"}, {}]),
    ("additionalProperties false", {"properties": {"a": {}}, "additionalProperties": False},
     [{}, {"a": 1}, {"a": 1, "b": 2}, {"b": 2}, [1, 2], "x"]),
    ("additionalProperties schema", {"properties": {"a": {}}, "additionalProperties": {"type": "boolean"}},
     [{"a": 1}, {"a": 1, "b": True}, {"a": 1, "b": 1}, {"c": False, "d": "x"}]),
    ("additionalProperties alone", {"additionalProperties": {"type": "integer"}}, [{}, {"x": 1, "y": 2.0}, {"x": "1"}]),
    ("additionalProperties with patternProperties",
     {"properties": {"id": {}}, "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": False},
     [{"id": 1}, {"id": 1, "x-a": "s"}, {"x-a": 1}, {"id": 1, "y": 1}, {"X-a": "s"}]),
    ("patternProperties", {"patternProperties": {"^[a-z]+$": {"type": "integer"}, "_id$": {"type": "string"}}},
     [{}, {"abc": 1}, {"abc": "1"}, {"user_id": "u"}, {"user_id": 1}, {"ABC": "x"}, {"a_id": 3}]),
    ("patternProperties unanchored", {"patternProperties": {"id": {"const": 0}}}, [{"xidx": 0}, {"xidx": 1}, {"ID": 1}]),
    ("propertyNames", {"propertyNames": {"pattern": "^[a-z_]+$", "maxLength": 5}},
     [{}, {"abc": 1}, {"ABC": 1}, {"abcdef": 1}, {"a_b": 1, "c": 2}, [], "ABC"]),
    ("propertyNames false", {"propertyNames": False}, [{}, {"a": 1}]),
    ("minProperties", {"minProperties": 2}, [{"a": 1, "b": 2}, {"a": 1}, {}, [1, 2], "ab"]),
    ("maxProperties", {"maxProperties": 1}, [{}, {"a": 1}, {"a": 1, "b": 2}, [1, 2]]),
    ("dependentRequired", {"dependentRequired": {"card": ["billing", "cvv"], "a": []}},
     [{}, {"card": 1, "billing": 2, "cvv": 3}, {"card": 1}, {"card": 1, "cvv": 2}, {"billing": 1}, {"a": 1}, ["card"]]),
    ("dependentSchemas", {"dependentSchemas": {"credit_card": {"required": ["billing_address"]}}},
     [{}, {"credit_card": 1, "billing_address": "x"}, {"credit_card": 1}, {"billing_address": "x"}, "credit_card"]),
    ("items", {"items": {"type": "integer"}}, [[], [1, 2, 3], [1, "2"], [1.0, 2], {"0": "x"}, "12"]),
    ("items false", {"items": False}, [[], [1]]),
    ("prefixItems", {"prefixItems": [{"type": "string"}, {"type": "integer"}]},
     [[], ["a"], ["a", 1], ["a", 1, None], [1, "a"], ["a", "b"]]),
    ("prefixItems with items", {"prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
     [["a"], ["a", 1, 2], ["a", 1, "b"], [1], [], ["a", 1.0]]),
    ("prefixItems with items false", {"prefixItems": [{}, {}], "items": False}, [[], [1], [1, 2], [1, 2, 3]]),
    ("prefixItems in allOf with items", {"items": {"type": "object"}, "allOf": [{"prefixItems": [{"properties": {"id": {"const": "S1"}}}]}]},
     [[{"id": "S1"}, {"id": "S2"}], [{"id": "S2"}], [{"id": "S1"}, 3], []]),
    ("contains", {"contains": {"type": "integer"}}, [[1], ["a", 2], ["a", "b"], [], [1.0], {"a": 1}, "x"]),
    ("contains false", {"contains": False}, [[], [1]]),
    ("minContains", {"contains": {"const": 1}, "minContains": 2}, [[1, 1], [1], [1, 2, 1], [], [1, 1.0]]),
    ("maxContains", {"contains": {"const": 1}, "maxContains": 2}, [[1], [1, 1], [1, 1, 1], [], [2]]),
    ("minContains 0", {"contains": {"const": 1}, "minContains": 0}, [[], [2], [1]]),
    ("minContains 0 maxContains 1", {"contains": {"const": 1}, "minContains": 0, "maxContains": 1}, [[], [1], [1, 1]]),
    ("maxContains without contains", {"maxContains": 1}, [[1, 1, 1]]),
    ("minItems", {"minItems": 2}, [[1, 2], [1], [], {"a": 1, "b": 2}, "ab"]),
    ("maxItems", {"maxItems": 2}, [[], [1, 2], [1, 2, 3], "abc"]),
    ("minItems float", {"minItems": 2.0}, [[1, 2], [1]]),
    ("uniqueItems", {"uniqueItems": True},
     [[], [1, 2], [1, 1], [1, 1.0], [0, False], [1, True], [[1], [True]], [[1], [1.0]], ["a", "A"],
      [{"a": 1, "b": 2}, {"b": 2, "a": 1}], [{"a": 1}, {"a": 2}], [None, None], [None, 0], [1.5, 1.50], list(range(40)) + [7.0],
      list(range(40)), [str(i) for i in range(30)] + ["3"], [[i] for i in range(30)] + [[29.0]]]),
    ("uniqueItems false", {"uniqueItems": False}, [[1, 1]]),
    ("minLength", {"minLength": 2}, ["ab", "a", "", "\u00e9\u00e9", "\U0001f600", "\U0001f600\U0001f600", 12, None]),
    ("maxLength", {"maxLength": 2}, ["", "ab", "abc", "\U0001f600\U0001f600", "\U0001f600\U0001f600\U0001f600", "e\u0301e\u0301", 123]),
    ("maxLength 0", {"maxLength": 0}, ["", " "]),
    ("pattern", {"pattern": "^[A-Z]{3}$"}, ["ABC", "ABCD", "abc", "", 123, None]),
    ("pattern unanchored", {"pattern": "Okafor"}, ["Dr. Emeka Okafor", "okafor", "Okafor!", ""]),
    ("pattern digits", {"pattern": "^\\d+$"}, ["123", "12a", "", "\u0661\u0662"]),
    ("pattern word", {"pattern": "^\\w+$"}, ["abc_1", "ab-c", "\u00e9t\u00e9"]),
    ("pattern space", {"pattern": "^\\S+(\\s+\\S+){0,2}$"}, ["a b c", "a b c d", "a\tb", "a\u00a0b", " a", "a\u2003b"]),
    ("pattern dot", {"pattern": "^a.c$"}, ["abc", "a\nc", "a\u00e9c", "ac"]),
    ("pattern dollar", {"pattern": "^a$"}, ["a", "a\n", "ba"]),
    ("pattern alternation", {"pattern": "(Z|\\+00:00)$"}, ["2025-01-01T00:00:00Z", "2025-01-01T00:00:00+00:00", "2025-01-01T00:00:00+01:00"]),
    ("pattern escapes", {"pattern": "^\\(\u00a7\\d+\\.\\d+\\)$"}, ["(\u00a712.3)", "\u00a712.3", "(\u00a712x3)"]),
    ("pattern class with escapes", {"pattern": "^[\\d\\-]+$"}, ["12-3", "12a", "-"]),
    ("pattern negated class", {"pattern": "^[^\\s,]+$"}, ["abc", "a,b", "a b", "a\u00a0b"]),
    ("pattern word boundary", {"pattern": "\\bcat\\b"}, ["a cat sat", "concat", "cat", "\u00e9cat"]),
    ("pattern quantifier", {"pattern": "^T-\\d{4}$"}, ["T-1234", "T-123", "T-12345", "t-1234"]),
    ("pattern case", {"pattern": "[Ee]mployee"}, ["Employee", "employees", "EMPLOYEE"]),
    ("pattern unicode literal", {"pattern": "^caf\u00e9$"}, ["caf\u00e9", "cafe", "CAF\u00c9"]),
    ("minimum", {"minimum": 2}, [2, 2.0, 1.9999, 3, -1, "3", None]),
    ("minimum float", {"minimum": 0.5}, [0.5, 0, 1, 0.49999999999999994]),
    ("maximum", {"maximum": 10}, [10, 10.0, 10.000001, 9, "11"]),
    ("exclusiveMinimum", {"exclusiveMinimum": 0}, [0, 0.0, -0.0, 1e-300, 1, -1]),
    ("exclusiveMaximum", {"exclusiveMaximum": 100}, [99, 99.9999, 100, 100.0, 101]),
    ("minimum and exclusiveMaximum", {"minimum": 1, "exclusiveMaximum": 5}, [1, 4.999, 5, 0.999]),
    ("minimum large integers", {"minimum": 9007199254740993}, [9007199254740993, 9007199254740992, 9007199254740992.0, 9007199254740994]),
    ("maximum u64", {"maximum": 18446744073709551615}, [18446744073709551615, 18446744073709551614, 1.8446744073709552e19, -1]),
    ("multipleOf integer", {"multipleOf": 2}, [4, 7, 0, -6, 4.0, 4.5, 1e20, "4"]),
    ("multipleOf float", {"multipleOf": 0.5}, [1.5, 2, 1.25, 0, -3.5]),
    ("multipleOf 0.01", {"multipleOf": 0.01}, [19.99, 0.07, 1, 0.075, 100.5]),
    ("multipleOf 0.1", {"multipleOf": 0.1}, [0.3, 0.2, 1.1, 3, 0.1]),
    ("multipleOf tiny", {"multipleOf": 0.0001}, [1e308, 0.0003, 12.3456]),
    ("multipleOf 1.0", {"multipleOf": 1.0}, [1, 1.0, 1.5, 9007199254740993]),
    ("allOf", {"allOf": [{"type": "integer"}, {"minimum": 3}]}, [3, 4, 2, 3.5, "3"]),
    ("anyOf", {"anyOf": [{"type": "string"}, {"minimum": 3}]}, ["x", 3, 2, None]),
    ("oneOf", {"oneOf": [{"type": "integer"}, {"minimum": 2}]}, [1, 2.5, 3, 1.5, "x"]),
    ("oneOf two matches", {"oneOf": [{"type": "string"}, {"minLength": 1}, {"maxLength": 0}]}, ["", "a", 1]),
    ("oneOf with boolean schemas", {"oneOf": [True, False, False]}, [1, "x"]),
    ("anyOf with boolean schemas", {"anyOf": [False, False]}, [1]),
    ("not", {"not": {"type": "string"}}, ["x", 1, None]),
    ("not not", {"not": {"not": {"const": 1}}}, [1, 2, 1.0]),
    ("not true", {"not": True}, [1, None]),
    ("if then", {"if": {"properties": {"day": {"const": "Wed"}}, "required": ["day"]}, "then": {"properties": {"room": {"const": "A"}}}},
     [{"day": "Wed", "room": "A"}, {"day": "Wed", "room": "B"}, {"day": "Tue", "room": "B"}, {"room": "B"}, {"day": "Wed"}, "Wed"]),
    ("if then else", {"if": {"type": "integer"}, "then": {"minimum": 10}, "else": {"type": "string"}},
     [10, 5, "x", None, 10.0, 9.0]),
    ("if else", {"if": {"const": 1}, "else": {"const": 2}}, [1, 2, 3]),
    ("then without if", {"then": False}, [1]),
    ("else without if", {"else": False}, [1]),
    ("if with contains pattern", {"properties": {"sessions": {"items": {
        "if": {"properties": {"speakers": {"contains": {"pattern": "Okafor"}}}, "required": ["speakers"]},
        "then": {"properties": {"day": {"const": "2025-06-18"}}}}}}},
     [{"sessions": [{"speakers": ["Dr. Okafor"], "day": "2025-06-18"}]},
      {"sessions": [{"speakers": ["Dr. Okafor"], "day": "2025-06-17"}]},
      {"sessions": [{"speakers": ["Maya"], "day": "2025-06-17"}, {"day": "x"}]}]),
    ("$ref to $defs", {"$defs": {"time": {"type": "string", "pattern": "^([01]\\d|2[0-3]):[0-5]\\d$"}},
                       "properties": {"start": {"$ref": "#/$defs/time"}, "end": {"$ref": "#/$defs/time"}}},
     [{"start": "09:00", "end": "17:30"}, {"start": "9:00"}, {"end": "24:00"}, {"start": 900}]),
    ("$ref to definitions", {"definitions": {"pos": {"type": "integer", "minimum": 1}}, "items": {"$ref": "#/definitions/pos"}},
     [[1, 2], [0], [1.0], ["1"]]),
    ("$ref with siblings", {"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "maxLength": 2}, ["ab", "abc", 1]),
    ("$ref nested", {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/c"}, "c": {"type": "integer"}}, "$ref": "#/$defs/a"},
     [1, "1", 1.0]),
    ("$ref recursive tree", {"type": "object", "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#"}}},
                             "required": ["value"]},
     [{"value": 1}, {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]},
      {"value": 1, "children": [{"value": 2, "children": [{"value": "3"}]}]}, {"value": 1, "children": [{}]}]),
    ("$ref recursive via $defs", {"$defs": {"node": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/$defs/node"}}]}},
                                 "$ref": "#/$defs/node"},
     [1, [1, [2, [3]]], [1, ["x"]], "x", []]),
    ("$ref escaped pointer", {"$defs": {"a/b": {"const": 1}, "c~d": {"const": 2}, "e f": {"const": 3}, "%25": {"const": 4}},
                              "properties": {"x": {"$ref": "#/$defs/a~1b"}, "y": {"$ref": "#/$defs/c~0d"}, "z": {"$ref": "#/$defs/e%20f"},
                                             "w": {"$ref": "#/$defs/%2525"}}},
     [{"x": 1, "y": 2, "z": 3, "w": 4}, {"x": 2}, {"y": 1}, {"z": 1}, {"w": 1}]),
    ("$ref into properties", {"properties": {"a": {"type": "string"}, "b": {"$ref": "#/properties/a"}}}, [{"b": "x"}, {"b": 1}]),
    ("$ref into an array", {"allOf": [{"minimum": 5}], "properties": {"n": {"$ref": "#/allOf/0"}}}, [{"n": 5}, {"n": 4}, 6]),
    ("$ref to false", {"$defs": {"no": False}, "properties": {"x": {"$ref": "#/$defs/no"}}}, [{}, {"x": 1}]),
    ("$ref to root in property", {"properties": {"self": {"$ref": "#"}}, "required": ["id"]},
     [{"id": 1}, {"id": 1, "self": {"id": 2}}, {"id": 1, "self": {}}]),
    ("annotations", {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/s.json",
                     "$comment": "c", "title": "t", "description": "d", "default": 1, "examples": [1], "deprecated": True,
                     "readOnly": False, "writeOnly": False, "type": "integer"}, [1, "x"]),
    ("$id at the root with a local $ref", {"$id": "https://example.com/root.json", "$defs": {"n": {"type": "null"}}, "$ref": "#/$defs/n"},
     [None, 0]),
    ("content keywords are annotations", {"contentMediaType": "application/json", "contentEncoding": "base64", "type": "string"},
     ["not base64 !", "e30="]),
    ("everything together", {
        "type": "object", "required": ["id", "tags", "price"], "additionalProperties": False,
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z0-9-]+$", "minLength": 3},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 3},
            "price": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.01},
            "when": {"type": "string", "format": "date-time"}}},
     [{"id": "abc", "tags": [], "price": 1.5}, {"id": "ab", "tags": ["a", "a"], "price": 0, "x": 1},
      {"id": "abc", "tags": ["a", "b", "c", "d"], "price": 10.005, "when": "2025-02-29T10:00:00Z"},
      {"id": "ABC", "tags": "a", "price": "1"}]),
]

# (format, valid-looking and invalid instances). Non-strings pass any format.
FORMATS = [
    ("date", ["2025-06-30", "2024-02-29", "2023-02-29", "2000-02-29", "1900-02-29", "2025-04-31", "2025-12-31", "2025-13-01",
              "2025-00-10", "2025-01-00", "2025-1-01", "25-01-01", "2025-01-01T00:00:00Z", "2025/01/01", "30/06/2025",
              "20250101", " 2025-01-01", "2025-01-01 ", "\u0662025-01-01", "0000-01-01", "9999-12-31", "", 20250101, None]),
    ("date-time", ["2025-06-30T12:00:00Z", "2025-06-30T12:00:00+02:00", "2025-06-30T12:00:00.123456-05:30", "2025-06-30t12:00:00z",
                   "2025-06-30 12:00:00Z", "2025-06-30T12:00:00", "2025-06-30T24:00:00Z", "2025-06-30T23:60:00Z",
                   "2025-06-30T23:59:61Z", "2025-02-29T10:00:00Z", "2024-02-29T10:00:00Z", "2025-06-30T12:00:00+24:00",
                   "2025-06-30T12:00:00+01:60", "2025-06-30T12:00:00.Z", "2025-06-30T12:00Z", "2025-06-30T12:00:00+0200",
                   "1998-12-31T23:59:60Z", "1998-12-31T22:59:60Z", "1998-12-31T15:59:60-08:00", "2025-06-30T12:00:00.5Z", 1]),
    ("time", ["12:00:00Z", "23:59:59+23:59", "00:00:00.000001-00:00", "12:00:00", "12:00Z", "24:00:00Z", "12:60:00Z",
              "12:00:60Z", "23:59:60Z", "22:59:60Z", "12:00:00z", "1:00:00Z", "12:00:00+1:00", "T12:00:00Z", "12:00:00.Z", 12]),
    ("email", ["a@example.com", "first.last+tag@sub.example.org", "a@b", "x@[192.0.2.1]", "x@[IPv6:2001:db8::1]", "no-at-sign",
               "two@@example.com", "@example.com", "a@", "a b@example.com", "a@exa mple.com", ".a@example.com", "a.@example.com",
               "a..b@example.com", "a@-example.com", "a@example.com.", "\u00e9@example.com", "a@b@c.com", "\"quoted\"@example.com", 5]),
    ("uuid", ["123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000", "123e4567e89b12d3a456426614174000",
              "123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-4266141740000", "g23e4567-e89b-12d3-a456-426614174000",
              "{123e4567-e89b-12d3-a456-426614174000}", "urn:uuid:123e4567-e89b-12d3-a456-426614174000",
              "123e4567-e89b-12d3-a456-4266-14174000", "00000000-0000-0000-0000-000000000000", 1]),
    ("ipv4", ["192.168.0.1", "0.0.0.0", "255.255.255.255", "256.0.0.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1.2.3.04", "1.2.3.-4",
              " 1.2.3.4", "1.2.3.4 ", "\u0661.2.3.4", "a.b.c.d", "", 1]),
    ("ipv6", ["::1", "::", "2001:db8::1", "2001:0db8:0000:0000:0000:0000:0000:0001", "::ffff:192.168.0.1", "fe80::1%eth0",
              "2001:db8::1::1", "12345::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8", ":1", "g::1", "192.168.0.1", "", 1]),
    ("hostname", ["example.com", "a", "a.b.c", "example.com.", "xn--bcher-kva.example", "-a.com", "a-.com", "a_b.com", "a..b",
                  ".a", "exa mple.com", "a" * 63 + ".com", "a" * 64 + ".com", ".".join(["a" * 50] * 5), "123.com", "1.2.3.4",
                  "\u0661\u0662.com", "b\u00fccher.example", 1]),
    ("uri", ["https://example.com/path?q=1#frag", "urn:isbn:0451450523", "mailto:a@example.com", "http://[::1]:8080/",
             "http://user:pw@host:80/p", "file:///etc/hosts", "http://a b.com", "no-scheme", "/relative/path", "1http://x",
             "http://example.com/%zz", "http://example.com/%41", "http://x/\u00e9", "a:", "http://host:port/", "http://[::1/",
             "http://[zz]/", "https://example.com/a#b#c", "ht!tp://x", "x:y", "http://example.com/<tag>", 1]),
]

# (schema name, instance) -> (turnbench's verdict, why). Python's verdict is the opposite.
DEVIATIONS = {
    ("pattern digits", "\u0661\u0662"): (False, "Python's re: \\d is any Unicode digit; ECMA-262 and turnbench: [0-9]"),
    ("pattern word", "\u00e9t\u00e9"): (False, "Python's re: \\w is Unicode; ECMA-262 and turnbench: [A-Za-z0-9_]"),
    ("pattern dollar", "a\n"): (False, "Python's re: $ also matches before a final newline; ECMA-262 and turnbench: only at the end"),
    ("pattern word boundary", "\u00e9cat"): (True, "Python's re: \\b between Unicode word characters; ECMA-262 and turnbench: ASCII"),
    ("format date-time", "1998-12-31T23:59:60Z"): (True, "RFC 3339 allows a leap second at 23:59:60 UTC; rfc3339-validator refuses every :60"),
    ("format date-time", "1998-12-31T15:59:60-08:00"): (True, "RFC 3339 leap second (23:59:60 in UTC); rfc3339-validator refuses every :60"),
    ("format time", "23:59:60Z"): (True, "RFC 3339 leap second; rfc3339-validator refuses every :60"),
    ("format date", "0000-01-01"): (True, "RFC 3339 full-date allows year 0000; Python's date type starts at year 1"),
    ("format email", "two@@example.com"): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", "@example.com"): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", "a@"): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", "a b@example.com"): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", "a@exa mple.com"): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", ".a@example.com"): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", "a.@example.com"): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", "a..b@example.com"): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", "a@-example.com"): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", "a@example.com."): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", "\u00e9@example.com"): (False, "Python's email check is only '\"@\" in it'; non-ASCII is idn-email"),
    ("format email", "a@b@c.com"): (False, "Python's email check is only '\"@\" in it'"),
    ("format email", "\"quoted\"@example.com"): (False, "turnbench's pragmatic email refuses quoted local parts; Python only wants an \"@\""),
    ("format uuid", "123e4567-e89b-12d3-a456-4266-14174000"): (False, "Python's uuid check accepts an extra hyphen after the fourth group"),
    ("format uri", "a:"): (False, "RFC 3986 allows an empty hier-part; turnbench wants something after the scheme"),
    ("format hostname", "\u0661\u0662.com"): (False, "fqdn's regex uses \\d without re.ASCII, so Unicode digits pass; RFC 1123 labels are ASCII"),
}


def verdict(schema, instance):
    return Draft202012Validator(schema, format_checker=CHECKER).is_valid(instance)


class Fixture:
    def __init__(self):
        self.schemas = []
        self.instances = []
        self.instance_index = {}
        self.cases = []
        self.used_deviations = set()

    def instance(self, instance):
        # Keyed by JSON text: `==` would take 1, 1.0 and True for one another.
        text = json.dumps(instance, sort_keys=True, ensure_ascii=False)
        if text not in self.instance_index:
            self.instance_index[text] = len(self.instances)
            self.instances.append(instance)
        return self.instance_index[text]

    def schema(self, name, schema):
        Draft202012Validator.check_schema(schema)
        self.schemas.append({"name": name, "schema": schema})
        return len(self.schemas) - 1

    def case(self, index, instance):
        name = self.schemas[index]["name"]
        schema = self.schemas[index]["schema"]
        python = verdict(schema, instance)
        case = {"schema": index, "instance": self.instance(instance), "valid": python}
        key = (name, instance) if isinstance(instance, (str, int, float, type(None))) else None
        if key in DEVIATIONS:
            ours, why = DEVIATIONS[key]
            if ours == python:
                sys.exit(f"deviation {key!r} no longer deviates: Python says {python}")
            case["turnbench"] = ours
            case["why"] = why
            self.used_deviations.add(key)
        self.cases.append(case)


def hand_written(fx):
    for name, schema, instances in KEYWORDS:
        index = fx.schema(name, schema)
        for instance in instances:
            fx.case(index, instance)
    for name, instances in FORMATS:
        index = fx.schema(f"format {name}", {"format": name})
        for instance in instances:
            fx.case(index, instance)


def reference_json(text):
    """The reference as JSON, if it is (bare or in one fence), else None."""
    body = text.strip()
    if body.startswith("```"):
        lines = body.splitlines()
        if len(lines) >= 2 and lines[-1].strip() == "```":
            body = "\n".join(lines[1:-1])
    try:
        return json.loads(body)
    except ValueError:
        return None


def replaced(text, defect):
    pairs = defect.get("replace", [])
    for old, new in zip(pairs[0::2], pairs[1::2]):
        text = text.replace(old, new)
    return text


def mutations(value, rng, count):
    """Deterministic variants of a JSON value: one change each, at a random place."""
    paths = []

    def walk(v, path):
        paths.append(path)
        if isinstance(v, dict):
            for k, child in v.items():
                walk(child, path + [k])
        elif isinstance(v, list):
            for i, child in enumerate(v):
                walk(child, path + [i])

    walk(value, [])
    replacements = [None, 0, 1.0, -1, 2.5, "", "x", "2025-02-30", "12:30", True, [], {}, [1, 1]]
    out = []
    for _ in range(count):
        mutant = copy.deepcopy(value)
        path = rng.choice(paths)
        parent = mutant
        for step in path[:-1]:
            parent = parent[step]
        target = parent[path[-1]] if path else mutant
        change = rng.randrange(6)
        if change == 0 and path:
            del parent[path[-1]]
        elif change == 1 and isinstance(target, dict):
            target["zz_extra"] = rng.choice(replacements)
        elif change == 2 and isinstance(target, list) and target:
            target.append(copy.deepcopy(target[0]))
        elif change == 3 and isinstance(target, str):
            target = rng.choice([target + " x", target.upper(), target[:-1], ""])
            if path:
                parent[path[-1]] = target
        elif change == 4 and isinstance(target, (int, float)) and not isinstance(target, bool):
            target = rng.choice([target + 1, -target, target + 0.5, float(target)])
            if path:
                parent[path[-1]] = target
        elif path:
            parent[path[-1]] = rng.choice(replacements)
        out.append(mutant)
    return out


def real_checks(fx):
    rng = random.Random(20250630)
    for path in sorted(glob.glob(os.path.join(ROOT, "checks", "*.toml"))):
        with open(path, "rb") as f:
            checks = tomllib.load(f)
        scenario_path = os.path.join(ROOT, "scenarios", os.path.basename(path))
        with open(scenario_path, "rb") as f:
            scenario = tomllib.load(f)
        references = [t.get("reference", "") for t in scenario.get("turn", [])]
        final = references[-1] if references else ""
        answers = [r for r in map(reference_json, references) if r is not None]
        for defect in checks.get("defect", []):
            if "answer" in defect:
                spoiled = reference_json(defect["answer"])
            else:
                turn = defect.get("turn", len(references))
                spoiled = reference_json(replaced(references[turn - 1], defect))
            if spoiled is not None:
                answers.append(spoiled)
        final_json = reference_json(final)
        if final_json is not None:
            answers.extend(mutations(final_json, rng, 40))
        # Deduplicated as JSON text: `==` would take 1, 1.0 and True for one another.
        unique = list({json.dumps(a, sort_keys=True): a for a in answers}.values())
        stem = os.path.basename(path)[:-5]
        for check in checks.get("check", []):
            if check["kind"] != "json_schema" or "schema" not in check:
                continue
            index = fx.schema(f"{stem} {check['id']}", json.loads(check["schema"]))
            for a in unique:
                fx.case(index, a)


def report_schema(fx):
    with open(os.path.join(ROOT, "docs", "report.schema.json")) as f:
        schema = json.load(f)
    with open(os.path.join(ROOT, "tests", "snapshots", "report.json")) as f:
        snapshot = json.load(f)
    current = copy.deepcopy(snapshot)
    for run in current["meta"]["runs"]:
        run.setdefault("definitions", None)
    index = fx.schema("docs/report.schema.json", schema)
    rng = random.Random(2)
    for instance in [snapshot, current, {}, None] + mutations(current, rng, 6):
        fx.case(index, instance)


def main():
    fx = Fixture()
    hand_written(fx)
    real_checks(fx)
    report_schema(fx)
    unused = set(DEVIATIONS) - fx.used_deviations
    if unused:
        sys.exit(f"deviations never met: {sorted(unused)}")
    fixture = {
        "generated_by": "tests/support/schema_reference.py",
        "python": sys.version.split()[0],
        "jsonschema": version("jsonschema"),
        "format_checkers": sorted(CHECKER.checkers),
        "schemas": fx.schemas,
        "instances": fx.instances,
        "cases": fx.cases,
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")
    agree = sum(1 for c in fx.cases if "turnbench" not in c)
    valid = sum(1 for c in fx.cases if c["valid"])
    print(f"{len(fx.schemas)} schemas, {len(fx.instances)} instances, {len(fx.cases)} cases "
          f"(Python: {valid} valid, {len(fx.cases) - valid} invalid), {len(fx.cases) - agree} deviations -> {OUT}")


if __name__ == "__main__":
    main()
