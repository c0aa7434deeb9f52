#!/usr/bin/env python3
"""Reads YAML files as PyYAML's `safe_load_all` does and prints them as JSON.

    python3 tests/tools/yaml_json.py FILE...

Prints one JSON object: each file's path to the list of its documents, or
to `{"error": "..."}` when PyYAML cannot read it or reads a value JSON
cannot hold (a timestamp, a set). PyYAML follows YAML 1.1, so it is the
reader that disagrees with YAML 1.2 readers on plain scalars such as `y`,
`on`, `1:20` or `=`.
"""

import json
import sys

import yaml


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = {}
    for path in paths:
        try:
            with open(path) as f:
                documents = list(yaml.safe_load_all(f))
            # Fails on what JSON cannot hold, such as a datetime.
            json.dumps(documents)
            out[path] = documents
        except (yaml.YAMLError, TypeError, ValueError) as e:
            out[path] = {"error": f"{type(e).__name__}: {e}"}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
