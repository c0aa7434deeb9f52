#!/usr/bin/env python3
"""Lints and renders a Helm chart with the real Helm engine, offline.

    python3 tests/tools/helm_chart.py lint CHART
    python3 tests/tools/helm_chart.py render CHART --release NAME --namespace NS [--set K=V]...
    python3 tests/tools/helm_chart.py notes CHART --release NAME --namespace NS [--set K=V]...

Helm comes from the PyPI package helm-python-sdk (import name helm_python),
which embeds Helm's Go SDK as a library, so no helm binary and no cluster
are needed.

lint:   `helm lint --strict`. Prints every message; exits 1 on any warning
        or error (informational messages, such as a missing icon, pass).
render: `helm template`: every rendered manifest as one YAML stream, files
        in path order, empty files left out. Values are checked against
        values.schema.json first, as `helm install` does.
notes:  the rendered NOTES.txt.

Exit 0 on success; 1 with the reason on stderr otherwise.
"""

import argparse
import sys

import helm_python as helm

SEVERITY = {1: "INFO", 2: "WARNING", 3: "ERROR"}


def values_of(args):
    values = {}
    for expr in args.set:
        merge(values, helm.parse_set_string(expr))
    for expr in args.set_string:
        merge(values, helm.parse_set_string_values(expr))
    return values or None


def merge(base, override):
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value


def lint(args):
    report = helm.lint(args.chart, values_of(args), strict=True, namespace=args.namespace)
    failed = bool(report.get("errors"))
    for message in report.get("messages") or []:
        severity = message.get("severity", 3)
        failed = failed or severity >= 2
        print(f"[{SEVERITY.get(severity, severity)}] {message.get('path', '')}: {message.get('error', '')}")
    for error in report.get("errors") or []:
        print(f"[ERROR] {error}")
    return 1 if failed else 0


def render(args, notes=False):
    with helm.Chart.load(args.chart) as chart:
        files = chart.render(values_of(args), name=args.release, namespace=args.namespace)
    if notes:
        sys.stdout.write("".join(t for p, t in files.items() if p.endswith("/NOTES.txt")))
        return 0
    documents = []
    for path in sorted(files):
        text = files[path].strip("\n")
        if path.endswith("/NOTES.txt") or not text.strip():
            continue
        documents.append(f"# Source: {path}\n{text}\n")
    sys.stdout.write("---\n".join(documents))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["lint", "render", "notes"])
    parser.add_argument("chart")
    parser.add_argument("--release", default="release-name")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--set", action="append", default=[], metavar="K=V")
    parser.add_argument("--set-string", action="append", default=[], metavar="K=V")
    args = parser.parse_args()
    try:
        if args.command == "lint":
            return lint(args)
        return render(args, notes=args.command == "notes")
    except helm.HelmError as error:
        print(f"helm: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
