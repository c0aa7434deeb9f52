"""A recorded Kubernetes API server for `benches/manager.rs`.

It answers what the manager of an `rsop create api --image` kind asks at
start-up, from a list of N objects of the kind (`cache.example.com/v1alpha1`
Memcached) and nothing else: lists paged by `limit` and `continue`, watches
that stay open and quiet, server-side applies and status patches answered with
the object, events accepted. `GET /_stats` gives the requests so far, by verb
and resource, and how many objects have had their status written.

With `restart`, the cluster also holds what the manager made before it
restarted: a Deployment of each object, with the managedFields the API server
keeps, and a pod of each (as metadata, which is all the manager watches).

With `empty`, the cluster starts with no object and takes what it is sent, as
the benchmark's `RSOP_BENCH_CONTEXT=1` mode sends to a real cluster through
`kubectl proxy`: the CRD (established at once), a namespace, the N objects.
A list of Deployments then counts those the manager applied, and says in
`remainingItemCount` how many a page leaves out, as the API server does.

Usage: python3 apiserver.py N [restart|empty]  (prints its port, then serves)
"""

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

GROUP_VERSION = "cache.example.com/v1alpha1"
MANAGER = "bench-operator"
COLLECTION = re.compile(
    r"^/(?:api|apis/[^/]+)/(?P<version>v[^/]+)(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[a-z]+)"
    r"(?:/(?P<name>[^/]+))?(?:/(?P<sub>[a-z]+))?$"
)


def labels(i):
    return {
        "app.kubernetes.io/name": "memcached",
        "app.kubernetes.io/instance": f"memcached-{i:05d}",
        "app.kubernetes.io/managed-by": MANAGER,
    }


def owner(kind, name, uid):
    return [{"apiVersion": GROUP_VERSION if kind == "Memcached" else "apps/v1", "kind": kind,
             "name": name, "uid": uid, "controller": True, "blockOwnerDeletion": True}]


def managed_fields(manager, fields):
    """What the API server records of an apply: a few kilobytes on a Deployment."""
    return [{"manager": manager, "operation": "Apply", "apiVersion": "apps/v1",
             "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {f"f:{name}": {f"f:{key}": {} for key in fields} for name in fields}}]


def deployment(i):
    name = f"memcached-{i:05d}"
    spec_fields = ["replicas", "selector", "template", "strategy", "revisionHistoryLimit",
                   "progressDeadlineSeconds", "minReadySeconds", "paused"]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name, "namespace": "default", "uid": f"deployment-{i}",
            "resourceVersion": "1", "generation": 1, "labels": labels(i),
            "ownerReferences": owner("Memcached", name, f"00000000-0000-0000-0000-{i:012d}"),
            "managedFields": managed_fields(MANAGER, spec_fields)
            + managed_fields("kube-controller-manager", ["status", "conditions", "replicas"]),
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {k: v for k, v in labels(i).items()
                                         if k != "app.kubernetes.io/managed-by"}},
            "template": {
                "metadata": {"labels": labels(i)},
                "spec": {"containers": [{"name": "memcached", "image": "memcached:1.6.26-alpine",
                                         "ports": [{"containerPort": 11211}]}]},
            },
        },
        "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1,
                   "updatedReplicas": 1, "observedGeneration": 1},
    }


def pod(i):
    name = f"memcached-{i:05d}-7d9c8b6f5-x{i:05d}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name, "namespace": "default", "uid": f"pod-{i}", "resourceVersion": "1",
            "labels": dict(labels(i), **{"pod-template-hash": "7d9c8b6f5"}),
            "ownerReferences": owner("ReplicaSet", f"memcached-{i:05d}-7d9c8b6f5", f"rs-{i}"),
        },
    }


class Cluster:
    def __init__(self, count, restart, empty=False):
        self.lock = threading.Lock()
        if empty:
            count = 0
        self.count_of = {"memcacheds": count, "deployments": count if restart else 0,
                         "pods": count if restart else 0}
        self.objects = [
            {
                "apiVersion": GROUP_VERSION,
                "kind": "Memcached",
                "metadata": {
                    "name": f"memcached-{i:05d}",
                    "namespace": "default",
                    "uid": f"00000000-0000-0000-0000-{i:012d}",
                    "resourceVersion": "1",
                    "generation": 1,
                    "creationTimestamp": "2026-01-01T00:00:00Z",
                },
                "spec": {"size": 1, "image": "memcached:1.6.26-alpine"},
            }
            for i in range(count)
        ]
        self.by_name = {o["metadata"]["name"]: o for o in self.objects}
        self.empty = empty
        self.applied = set()
        self.requests = {}
        self.statuses = set()
        self.unknown = []

    def count(self, key):
        with self.lock:
            self.requests[key] = self.requests.get(key, 0) + 1

    def stats(self):
        with self.lock:
            return {
                "requests": dict(self.requests),
                "statuses": len(self.statuses),
                "unknown": list(self.unknown[:20]),
            }


def make_handler(cluster):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: without this, each response waits for the
        # client's delayed ACK.
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def send_json(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"null")

        def route(self):
            url = urlparse(self.path)
            match = COLLECTION.match(url.path)
            return url, parse_qs(url.query), match

        def not_found(self):
            with cluster.lock:
                cluster.unknown.append(f"{self.command} {self.path}")
            self.send_json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                 "code": 404, "reason": "NotFound", "message": self.path})

        def do_GET(self):
            url, query, match = self.route()
            if url.path == "/_stats":
                return self.send_json(200, cluster.stats())
            if match and match["plural"] == "customresourcedefinitions" and match["name"]:
                return self.send_json(200, {"metadata": {"name": match["name"]}, "status": {
                    "conditions": [{"type": "Established", "status": "True"}]}})
            if not match or match["name"]:
                return self.not_found()
            plural = match["plural"]
            if query.get("watch") == ["true"]:
                cluster.count(f"watch {plural}")
                # Open and quiet: nothing changes in this cluster.
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.flush()
                threading.Event().wait()
                return
            cluster.count(f"list {plural}")
            total = cluster.count_of.get(plural, 0)
            make = {"memcacheds": cluster.objects.__getitem__, "deployments": deployment,
                    "pods": pod}.get(plural)
            start = int(query.get("continue", ["0"])[0])
            limit = int(query.get("limit", ["0"])[0]) or total
            page = [make(i) for i in range(start, min(start + limit, total))]
            metadata = {"resourceVersion": "1"}
            if start + limit < total:
                metadata["continue"] = str(start + limit)
                metadata["remainingItemCount"] = total - start - limit
            self.send_json(200, {"apiVersion": "v1", "kind": "List",
                                 "metadata": metadata, "items": page})

        def do_PATCH(self):
            url, _, match = self.route()
            if not match or not match["name"]:
                return self.not_found()
            plural, name, sub = match["plural"], match["name"], match["sub"]
            cluster.count(f"patch {plural}{'/' + sub if sub else ''}")
            patch = self.body() or {}
            if plural == "memcacheds" and sub == "status":
                with cluster.lock:
                    cluster.statuses.add(name)
                    answer = dict(cluster.by_name[name])
                answer["status"] = patch.get("status", {})
                return self.send_json(200, answer)
            if plural == "deployments":
                with cluster.lock:
                    cluster.applied.add(name)
                    if cluster.empty:
                        cluster.count_of["deployments"] = len(cluster.applied)
            patch.setdefault("metadata", {})
            patch["metadata"].setdefault("uid", f"uid-{plural}-{name}")
            patch["metadata"]["resourceVersion"] = "2"
            self.send_json(200, patch)

        def do_POST(self):
            _, _, match = self.route()
            if not match:
                return self.not_found()
            cluster.count(f"create {match['plural']}")
            body = self.body() or {}
            metadata = body.setdefault("metadata", {})
            metadata["resourceVersion"] = "1"
            if match["plural"] == "memcacheds":
                with cluster.lock:
                    metadata.update(namespace=match["ns"], generation=1,
                                    uid=f"00000000-0000-0000-0000-{len(cluster.objects):012d}",
                                    creationTimestamp="2026-01-01T00:00:00Z")
                    cluster.objects.append(body)
                    cluster.by_name[metadata["name"]] = body
                    cluster.count_of["memcacheds"] = len(cluster.objects)
            self.send_json(201, body)

        def do_PUT(self):
            self.not_found()

        def do_DELETE(self):
            _, _, match = self.route()
            if not match or match["plural"] != "namespaces":
                return self.not_found()
            cluster.count("delete namespaces")
            self.send_json(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})

    return Handler


class Server(ThreadingHTTPServer):
    # The socketserver default backlog of 5 drops the SYNs of a manager that opens its first
    # connections all at once, and each dropped SYN costs a second of retransmission timeout,
    # which the benchmark would count as the manager's; Go's listener, as the API server's,
    # takes the system's maximum.
    request_queue_size = 4096
    daemon_threads = True


def main():
    cluster = Cluster(int(sys.argv[1]), sys.argv[2:] == ["restart"], sys.argv[2:] == ["empty"])
    server = Server(("127.0.0.1", 0), make_handler(cluster))
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
