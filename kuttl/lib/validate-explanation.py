#!/usr/bin/python3
"""Validates explain-restart JSON (stdin) against cli/schema/restart-explanation.schema.json, or
against the cli/schema file named by the first argument (e.g. workload-status-list.schema.json for
`restarter status -o json`).

Uses Debian's python3-jsonschema (tests/install-deps.sh installs it), hence /usr/bin/python3.
Exit 0 when valid; 1 with the validation error otherwise.
"""
import json
import pathlib
import sys

import jsonschema

schema_name = sys.argv[1] if len(sys.argv) > 1 else "restart-explanation.schema.json"
schema_path = pathlib.Path(__file__).resolve().parents[2] / "cli" / "schema" / schema_name
schema = json.loads(schema_path.read_text())
document = json.load(sys.stdin)
try:
    jsonschema.validate(document, schema)
except jsonschema.ValidationError as error:
    print(f"document does not match {schema_path.name}: {error.message} at {list(error.absolute_path)}", file=sys.stderr)
    sys.exit(1)
print(f"document matches {schema_path.name}")
