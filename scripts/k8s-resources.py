#!/usr/bin/env python3
"""Writes data/k8s-openapi/resources.tsv: every resource the Kubernetes API
serves, as k8s-openapi types it, with the Kubernetes minors that serve it.

    python3 scripts/k8s-resources.py ~/.cargo/registry/src/*/k8s-openapi-0.* > data/k8s-openapi/resources.tsv

Each argument is an unpacked k8s-openapi crate (`cargo download`, or the
cargo registry's sources); each of its `src/v1_NN` trees is one Kubernetes
minor. Columns: group (empty for the core group), plural, kind, namespaced,
first minor, last minor.
"""
import pathlib
import re
import sys

RESOURCE = re.compile(
    r'impl crate::Resource for (\w+) \{.*?const GROUP: &\'static str = "([^"]*)";'
    r'.*?const URL_PATH_SEGMENT: &\'static str = "([^"]*)";'
    r'.*?type Scope = crate::(\w+);',
    re.S,
)

seen = {}
for crate in sys.argv[1:]:
    for tree in sorted(pathlib.Path(crate, "src").glob("v1_*")):
        minor = int(tree.name.split("_")[1])
        for source in tree.rglob("*.rs"):
            for kind, group, plural, scope in RESOURCE.findall(source.read_text()):
                # List types and the discovery documents are no resources.
                if not plural or scope == "SubResourceScope" or kind.endswith("List"):
                    continue
                key = (group, plural, kind, scope == "NamespaceResourceScope")
                first, last = seen.get(key, (minor, minor))
                seen[key] = (min(first, minor), max(last, minor))

print("# group\tplural\tkind\tnamespaced\tfirst\tlast")
for (group, plural, kind, namespaced), (first, last) in sorted(seen.items()):
    print(f"{group}\t{plural}\t{kind}\t{str(namespaced).lower()}\t1.{first}\t1.{last}")
