#!/usr/bin/env python3
"""The table of the Helm chart's values in docs/install.md, generated from values.schema.json (types,
descriptions) and values.yaml (defaults) of manifests/helm/restarter.

Usage: values-table.py            print the table
       values-table.py --check    exit 1 (with a diff) unless docs/install.md holds exactly this table
       values-table.py --write    put this table into docs/install.md

In docs/install.md ("Install with Helm") the table sits between the lines `<!-- helm-values:begin -->` and
`<!-- helm-values:end -->`. Also fails when a key of values.yaml has no description in the
schema, or the reverse, so neither can drift from the other.
"""
import difflib
import json
import os
import sys

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHART = os.path.join(REPO, "manifests", "helm", "restarter")
DOC = os.path.join(REPO, "docs", "install.md")
BEGIN, END = "<!-- helm-values:begin -->", "<!-- helm-values:end -->"

problems = []


def type_of(schema):
    t = schema.get("type", "any")
    types = t if isinstance(t, list) else [t]
    shown = "/".join(x for x in types if x != "null")
    if "enum" in schema:
        shown = " \\| ".join(f"`{v}`" if v else '`""`' for v in schema["enum"] if v is not None)
    return shown + (" or null" if "null" in types else "")


def default_of(value):
    if value is None:
        return "null"
    if value in ({}, [], ""):
        return {dict: "`{}`", list: "`[]`", str: '`""`'}[type(value)]
    text = json.dumps(value, separators=(", ", ": "))
    return f"`{text}`"


def rows(schema, values, path):
    props = schema.get("properties")
    if schema.get("type") == "object" and props and all("description" in p for p in props.values()):
        # A group of values (every property described): one row per leaf. An object whose
        # properties are not described (resources) is one value.
        for key in values:
            if key not in props:
                problems.append(f"values.yaml has {'.'.join(path + [key])}, the schema does not")
        for key, sub in props.items():
            if key not in values:
                problems.append(f"the schema has {'.'.join(path + [key])}, values.yaml does not")
                continue
            yield from rows(sub, values[key], path + [key])
        return
    if "description" not in schema:
        problems.append(f"{'.'.join(path)} has no description in the schema")
    description = schema.get("description", "").replace("|", "\\|")
    yield f"| `{'.'.join(path)}` | {type_of(schema)} | {default_of(values)} | {description} |"


def table():
    with open(os.path.join(CHART, "values.schema.json")) as f:
        schema = json.load(f)
    with open(os.path.join(CHART, "values.yaml")) as f:
        values = yaml.safe_load(f)
    lines = ["| value | type | default | meaning |", "| --- | --- | --- | --- |"]
    lines += list(rows(schema, values, []))
    return lines


def doc_split():
    with open(DOC) as f:
        text = f.read().split("\n")
    try:
        begin, end = text.index(BEGIN), text.index(END)
    except ValueError:
        sys.exit(f"values-table.py: docs/install.md lacks the lines {BEGIN} and {END}")
    return text, begin, end


def main(argv):
    lines = table()
    if problems:
        sys.exit("values-table.py: " + "; ".join(problems))
    mode = argv[1] if len(argv) > 1 else ""
    if mode == "":
        print("\n".join(lines))
    elif mode == "--check":
        text, begin, end = doc_split()
        current = text[begin + 1:end]
        if current != lines:
            sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(
                current, lines, "docs/install.md", "generated", lineterm=""))
            sys.exit("values-table.py: docs/install.md's values table differs from the schema's; "
                     "run tests/helm/values-table.py --write")
    elif mode == "--write":
        text, begin, end = doc_split()
        with open(DOC, "w") as f:
            f.write("\n".join(text[:begin + 1] + lines + text[end:]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
