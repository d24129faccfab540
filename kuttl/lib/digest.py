#!/usr/bin/env python3
"""The content digests restarter writes, computed independently of it, for kuttl step scripts
(docs/architecture.md, "Keyed digests"; the byte stream is lib/core/src/content.cpp's: each field
length-prefixed with 8 bytes big-endian; `data`, then `binaryData`, each as its name, its size and
its entries in key order, then for a Secret `type`; the first 16 bytes of the hash, in hex; h2
first hashes metadata.namespace, metadata.name and metadata.uid, each length-prefixed the same way).

  digest.py plain KIND < OBJECT.json            the unkeyed SHA-256 (what trees before keys wrote)
  digest.py keyed KIND KEY_BASE64 < OBJECT.json the record's text of the h1 digest (content only,
                                                what releases before this one wrote): h1.<key id>.<hmac>
  digest.py h2 KIND KEY_BASE64 < OBJECT.json    the record's text of the h2 digest (the object's
                                                namespace, name, uid and content: what is written now)
  digest.py key-id KEY_BASE64                   the key's id
  digest.py key-size KEY_BASE64                 how many bytes the key holds

KIND is configmap or secret; OBJECT the object as `kubectl get -o json` prints it.
"""
import base64
import hashlib
import hmac
import json
import sys


def field(out, data):
    raw = data.encode() if isinstance(data, str) else data
    out.append(len(raw).to_bytes(8, "big"))
    out.append(raw)


def content_stream(obj, kind):
    out = []
    for name in ("data", "binaryData"):
        field(out, name)
        values = obj.get(name)
        if values is None:
            field(out, "0")
            continue
        field(out, str(len(values)))
        for key in sorted(values, key=lambda k: k.encode()):
            field(out, key)
            field(out, values[key])
    if kind == "secret":
        field(out, "type")
        field(out, obj.get("type") or "")
    return b"".join(out)


def key_id(key):
    out = []
    field(out, "restarter digest key id")
    field(out, key)
    return hashlib.sha256(b"".join(out)).hexdigest()[:8]


def identity_stream(obj):
    out = []
    metadata = obj.get("metadata") or {}
    for name in ("namespace", "name", "uid"):
        field(out, metadata.get(name) or "")
    return b"".join(out)


def main(argv):
    if len(argv) >= 2 and argv[0] == "key-size":
        print(len(base64.b64decode(argv[1])))
        return 0
    if len(argv) >= 2 and argv[0] == "key-id":
        print(key_id(base64.b64decode(argv[1])))
        return 0
    if len(argv) < 2 or argv[0] not in ("plain", "keyed", "h2") or argv[1] not in ("configmap", "secret"):
        sys.stderr.write(__doc__)
        return 2
    obj = json.load(sys.stdin)
    stream = content_stream(obj, argv[1])
    if argv[0] == "plain":
        print(hashlib.sha256(stream).hexdigest()[:32])
        return 0
    key = base64.b64decode(argv[2])
    if argv[0] == "h2":
        stream = identity_stream(obj) + stream
    tag = "h2" if argv[0] == "h2" else "h1"
    print("%s.%s.%s" % (tag, key_id(key), hmac.new(key, stream, hashlib.sha256).hexdigest()[:32]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
