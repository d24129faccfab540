#!/usr/bin/env python3
"""Sends N AdmissionReviews of SIZE bytes at once, each over its own TLS connection, to a webhook on
loopback, and prints how many got which HTTP status (a measurement, not a test; see
webhook_limits.sh). A review the server refuses before reading its body ends in a closed
connection while it is still being sent; that is counted as "refused".

Usage: parallel_reviews.py PORT N SIZE SHAPE   (SHAPE: string = one large annotation value,
       tiny = many small annotations, the costliest shape to parse)
"""
import collections
import json
import socket
import ssl
import sys
import threading


def review(size, shape):
    obj = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "big", "namespace": "default", "annotations": {}},
           "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}}
    base = len(json.dumps(obj)) + 400
    if shape == "string":
        obj["metadata"]["annotations"]["big"] = "x" * (size - base)
    else:
        annotations = obj["metadata"]["annotations"]
        i = 0
        while base < size:
            key = "k%d" % i
            annotations[key] = "v"
            base += len(key) + 8
            i += 1
    body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "00000000-0000-0000-0000-000000000001",
                        "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
                        "resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
                        "namespace": "default", "name": "big", "operation": "CREATE", "object": obj}}
    return json.dumps(body, separators=(",", ":")).encode()


def send(port, data, results, lock):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    outcome = "error"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as raw:
            with context.wrap_socket(raw) as tls:
                head = ("POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(data)).encode()
                try:
                    tls.sendall(head + data)
                except OSError:
                    pass  # refused early: the answer may still be readable
                answer = b""
                try:
                    while not answer.startswith(b"HTTP/1.1 ") or b"\r\n" not in answer:
                        chunk = tls.recv(65536)
                        if not chunk:
                            break
                        answer += chunk
                except OSError:
                    pass
                outcome = answer[9:12].decode() if answer.startswith(b"HTTP/1.1 ") else "refused"
    except OSError as e:
        outcome = "error:" + type(e).__name__
    with lock:
        results[outcome] += 1


def main():
    port, count, size, shape = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    data = review(size, shape)
    results = collections.Counter()
    lock = threading.Lock()
    threads = [threading.Thread(target=send, args=(port, data, results, lock)) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("%d x %d bytes (%s): %s" % (count, len(data), shape, dict(sorted(results.items()))))


if __name__ == "__main__":
    main()
