#!/usr/bin/env python3
"""Validates custom resources against the schema of their CustomResourceDefinition.

    python3 tests/tools/validate_cr.py CRD.yaml OBJECT.yaml...

Each object must be of the CRD's kind and one of its served versions. It is
checked against that version's openAPIV3Schema as the API server would: the
JSON Schema keywords (through the jsonschema package, which
kubernetes-validate already installs), `nullable`, and, strictly, no field
the schema does not declare (the API server would prune it silently) unless
the schema says `x-kubernetes-preserve-unknown-fields`.

Exit 0 when every object is valid; 1 with one line per problem otherwise.
"""

import sys

import jsonschema
import yaml


def unknown_fields(value, schema, path):
    """Yields the paths of fields `schema` does not declare."""
    if not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return
    if isinstance(value, dict):
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            if properties is not None and key in properties:
                yield from unknown_fields(item, properties[key], f"{path}.{key}")
            elif isinstance(additional, dict):
                yield from unknown_fields(item, additional, f"{path}.{key}")
            elif properties is not None or additional is False:
                yield f"{path}.{key}"
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            yield from unknown_fields(item, schema["items"], f"{path}[{i}]")


def to_json_schema(schema):
    """The OpenAPI v3 schema as JSON Schema: `nullable: true` admits null."""
    if isinstance(schema, list):
        return [to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: to_json_schema(v) for k, v in schema.items() if not k.startswith("x-kubernetes")}
    if out.pop("nullable", False) and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        crd = yaml.safe_load(f)
    kind = crd["spec"]["names"]["kind"]
    group = crd["spec"]["group"]
    schemas = {
        f"{group}/{v['name']}": v["schema"]["openAPIV3Schema"]
        for v in crd["spec"]["versions"]
        if v.get("served")
    }
    problems = []
    for name in argv[2:]:
        with open(name) as f:
            for obj in yaml.safe_load_all(f):
                if obj is None:
                    continue
                where = f"{name}: {obj.get('kind')} {obj.get('metadata', {}).get('name')}"
                if obj.get("kind") != kind or obj.get("apiVersion") not in schemas:
                    problems.append(f"{where}: not a served version of {kind}")
                    continue
                schema = schemas[obj["apiVersion"]]
                validator = jsonschema.Draft4Validator(to_json_schema(schema))
                for error in validator.iter_errors(obj):
                    at = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
                    problems.append(f"{where}: {at or '.'}: {error.message}")
                for field in unknown_fields(obj, schema, ""):
                    problems.append(f"{where}: {field}: unknown field")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
