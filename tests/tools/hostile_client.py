#!/usr/bin/env python3
"""A bounded hostile client for restarter's servers on loopback (kuttl suites webhook-hostile,
webhook-hostile-bodies and webhook-fair-admission). Python 3 standard library only. It connects to
127.0.0.1 or ::1 and nowhere else (any other target, a host name included, is refused: exit 2),
verifies no certificate (the servers under test present self-signed test certificates) and stops
by itself (hold's --allow-target ADDRESS also allows that private address: a Service or pod of the
local cluster, the tool running in an attacking pod's network namespace on the real node). --source ADDRESS (hold, post) connects from another loopback address (any of 127/8, or
::1; anything else is refused: exit 2): that is how an attacking pod differs from the apiserver
(127.0.0.1) in a cluster, and what a server's per-address shares see; hold's --sources N spreads
the connections round-robin over N consecutive addresses from it (default 127.0.0.2): N pods.

  hostile_client.py hold --hold MODE,URL,COUNT[,BODY_LENGTH] [--hold ...] --duration SECONDS
                         [--byte-interval S] [--body-length B] [--trickle-seconds S]
                         [--connect-timeout S] [--reconnect-period S] [--no-reconnect]
                         [--source ADDRESS] [--sources N] [--close-after S] [--status FILE]
      Holds COUNT connections per --hold until SECONDS have passed, SIGTERM/SIGINT arrives or the
      process that started it is gone. URL is https://HOST:PORT/PATH (TLS) or http://HOST:PORT/PATH.
      Connections are first opened in the order of the --hold arguments.
        MODE idle: connect (and for https finish the TLS handshake), then send nothing.
        MODE slow: then send a request head ("POST PATH" for https, "GET PATH" for http, a Host
                   header, then an endless X-Slow header) one byte every S seconds (default 2),
                   never finishing it.
        MODE slow-body: then send a whole POST head declaring a body of --body-length bytes
                   (default 8,388,000: just under serve-webhook's 8 MiB limit, and 4 times it all
                   but 2 KiB of its 32 MiB in-flight budget) and that body one byte every S
                   seconds, never finishing it.
        MODE trickle: then send a complete small AdmissionReview (a CREATE of an unlabeled
                   StatefulSet, so the webhook looks nothing up) spread evenly over
                   --trickle-seconds (default 9: just inside serve-webhook's 10 s deadlines), read
                   the answer, and again, for as long as the connection lives: never idle, never
                   late.
        MODE handshake: connect (plain TCP, whatever the scheme), send the first 50 bytes of a
                   TLS ClientHello (a record header announcing 512 bytes), then nothing: a stalled
                   TLS handshake.
        MODE hog:  then send a whole POST head declaring a body of BODY_LENGTH (or --body-length)
                   bytes and all of that body but its last byte as fast as the server reads it,
                   then nothing: a budget hog, charged for everything it sent while it waits.
        MODE served: then send one whole request at once (https: the small AdmissionReview of
                   trickle; http: GET PATH), read its answer and keep the connection open,
                   sending nothing more: a client that was served, as the apiserver is.
        MODE pipeline: as served, but 8 requests at once, and 8 more as soon as an answer comes:
                   never idle, a request always arriving or being answered.
      --close-after S: each connection closes itself S seconds after its connect began (a stalled
      handshake closed just before the server's deadline), and reopens as below.
      As an attacker would, it reopens a connection the server closed at once (20 ms), and retries
      one that failed to connect or to finish its handshake within --connect-timeout (default
      10 s) after 0.2 s, doubling up to 1.6 s; each --hold may reopen COUNT connections at once and
      COUNT more per --reconnect-period (default 5 s), which bounds the handshakes a server that
      evicts connections can be made to do (--no-reconnect: never reopen).
      Every mode reports the server's answers ("answers": first lines, counted); trickle counts
      each answered review there.
      SIGUSR1 opens a measurement window and SIGUSR2 closes it: for each --hold the report then
      gives the window's mean number of open connections, its coverage (that mean over COUNT: 1.0
      = all held all the time), the fewest open at once, and how many the server closed in it.
      Every 0.5 s and at the end it writes a JSON status to --status (atomically; "all_reached":
      every connection of every --hold was open at least once; "all_open": all are open now) and
      at the end prints it on stdout: per --hold how many are open now, how many slots were ever
      open ("reached"), opened in total, closed by the server (and when: seconds since start; how
      long each had lived; how long until it was open again), connect errors, handshake timeouts,
      and the first line of anything the server answered.

  hostile_client.py post --url https://HOST:PORT/PATH (--deep N | --size BYTES [--shape env|annotation])
                         [--parallel K] [--namespace NS] [--configmap NAME] [--timeout S]
                         [--source ADDRESS]
      POSTs crafted AdmissionReviews (admission.k8s.io/v1, operation CREATE of a labeled
      StatefulSet in NS referencing ConfigMap NAME), K at once (each on its own connection, sent
      together), and prints one JSON object: each request's HTTP status (null when no answer came:
      then "error" says what happened), seconds, and the answer's first bytes.
        --deep N    request.kind is N nested JSON objects ({"k":{"k":...{}}}: 100,000 levels are
                    about 600 KB).
        --size B    the review is exactly B bytes, its size in the StatefulSet: "env" (default) as
                    many env entries of the container as fit, "annotation" one big pod-template
                    annotation.

  hostile_client.py probe --url http://HOST:PORT/PATH [--url ...] --duration SECONDS
                          [--interval S] [--timeout S] [--status FILE]
      What a kubelet's HTTP probe does, in a loop: a new connection per probe, GET, success when the
      status is 200-399 within --timeout (default 1 s, the kubelet's default timeoutSeconds). Each
      URL is probed every --interval (default 0.25 s) until SECONDS have passed, SIGTERM/SIGINT or
      the parent is gone; then it prints (and writes to --status) per URL the number of probes,
      failures (with the first few: when and why), the longest run of consecutive failures (a
      kubelet restarts the container once failureThreshold probes in a row fail) and the latency
      max, p99 and p50 (failures count as their time spent, at least the timeout).

  hostile_client.py amplify --url https://HOST:PORT/PATH [--loops N] [--names K] [--name NAME ...]
                            [--huge-name BYTES] [--duration S] [--reviews R] [--rate P] [--namespace NS]
                            [--cert FILE --key FILE] [--timeout S] [--status FILE]
      The lookup amplifier: N loops (default 16), each on its own keep-alive connection (reopened
      when closed), POST reviews of a labeled StatefulSet whose pod template names K ConfigMaps
      (default 1,000: amp-0 ... amp-999, each review a fresh uid), or exactly the --name NAMEs
      given (e.g. "." and ".."), plus with --huge-name one name of BYTES bytes, back to back or,
      with --rate, P reviews a second over all loops (each loop P/N, on schedule, at once when
      behind); until S seconds (default 10) have passed, each loop has sent R reviews,
      SIGTERM/SIGINT or the parent is gone.
      --cert/--key present a client certificate. It prints (and writes to --status) per HTTP
      status the number of answers, how many answers carried a patch, connection errors (the first
      few), and the latency p50 and max of answered reviews.

Exit status: 0 when the run ended as asked (the caller asserts on the report), 1 on an internal
error, 2 on a bad command line or a non-loopback target.
"""
import argparse
import errno
import http.client
import ipaddress
import json
import math
import os
import selectors
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import uuid

LOOPBACK = ("127.0.0.1", "::1")
# The first bytes of a TLS 1.2/1.3 ClientHello: a handshake record of 512 bytes, of which only
# these 50 are ever sent (mode handshake).
PARTIAL_CLIENT_HELLO_BYTES = 50


def partial_client_hello():
    """The first PARTIAL_CLIENT_HELLO_BYTES bytes of a real ClientHello (this Python's OpenSSL, as
    a client would send it), so that the server waits for the rest instead of failing at once."""
    context = client_context()
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = context.wrap_bio(incoming, outgoing, server_side=False)
    try:
        client.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()[:PARTIAL_CLIENT_HELLO_BYTES]
PIPELINED = 8             # requests a pipeline connection sends at once
HOG_CHUNK = 1 << 20       # at most this much of a hog's body per send loop and slot
MAX_DURATION = 3600.0
MAX_CONNECTIONS = 2000
MAX_PARALLEL = 64
MAX_BODY = 64 << 20
MAX_DEPTH = 10_000_000
REOPEN_DELAY = 0.02       # after the server closed an open connection
RETRY_DELAY = 0.2         # after a failed connect or handshake (doubling up to 1.6 s)
STATUS_EVERY = 0.5
TICK = 0.1
KEPT_CLOSE_TIMES = 20
KEPT_ANSWERS = 10
KEPT_FAILURES = 5


# SIGUSR1/SIGUSR2 of `hold`, queued from the start of the process on (main installs the
# handlers first) and consumed by its loop.
PENDING_WINDOW = []


class UsageError(Exception):
    pass


# Addresses other than loopback that --allow-target named (hold only): the cluster's own Service
# and pod addresses, inside its network namespace, when the tool runs in an attacking pod's
# network namespace on the real node. Private addresses only.
ALLOWED_TARGETS = set()


def loopback_target(url, schemes):
    """(scheme, host, port, path) of URL, which must name 127.0.0.1 or ::1 literally (or an address
    --allow-target named)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in schemes:
        raise UsageError(f"{url}: the scheme must be {' or '.join(schemes)}")
    host = parts.hostname
    try:
        address = ipaddress.ip_address(host or "")
    except ValueError:
        raise UsageError(f"{url}: not a loopback address (only 127.0.0.1 and ::1 are allowed)") from None
    if str(address) not in LOOPBACK and str(address) not in ALLOWED_TARGETS:
        raise UsageError(f"{url}: not a loopback address (only 127.0.0.1 and ::1 are allowed)")
    try:
        port = parts.port
    except ValueError:
        raise UsageError(f"{url}: bad port") from None
    if not port:
        raise UsageError(f"{url}: a port is required")
    return parts.scheme, str(address), port, parts.path or "/"


def loopback_source(address):
    """ADDRESS of --source: any 127/8 address or ::1, literally."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        raise UsageError(f"--source {address}: not an address (a loopback one: 127.0.0.0/8 or ::1)") from None
    if not parsed.is_loopback:
        raise UsageError(f"--source {address}: not a loopback address (127.0.0.0/8 or ::1)")
    return str(parsed)


def source_range(first, count):
    """--source FIRST --sources COUNT: COUNT consecutive loopback addresses from FIRST (default
    127.0.0.2), or [] for no --source at all."""
    bounded(count, 1, 250, "--sources")
    if not first:
        if count > 1:
            first = "127.0.0.2"
        else:
            return []
    start = ipaddress.ip_address(loopback_source(first))
    addresses = [start + i for i in range(count)]
    for address in addresses:
        if not address.is_loopback:
            raise UsageError(f"--sources {count} from {first}: {address} is not a loopback address")
    return [str(address) for address in addresses]


def bind_source(sock, source):
    if source:
        sock.bind((source, 0))


def family_of(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def authority(host, port):
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def client_context():
    # Verifies nothing: the servers under test present self-signed test certificates, and only
    # loopback is ever dialled.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def bounded(value, low, high, name):
    if not (low <= value <= high):
        raise UsageError(f"{name} must be between {low} and {high}")
    return value


def write_json(path, document):
    if not path:
        return
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


class Stopper:
    """SIGTERM/SIGINT, the deadline, or the parent gone (reparented) end a run."""

    def __init__(self, duration):
        self.start = time.monotonic()
        self.deadline = self.start + duration
        self.parent = os.getppid()
        self.reason = None
        self.event = threading.Event()
        signal.signal(signal.SIGTERM, self._signal)
        signal.signal(signal.SIGINT, self._signal)

    def _signal(self, number, _frame):
        self.stop(signal.Signals(number).name)

    def stop(self, reason):
        if self.reason is None:
            self.reason = reason
        self.event.set()

    def check(self):
        if self.reason is None:
            if time.monotonic() >= self.deadline:
                self.stop("duration")
            elif os.getppid() != self.parent:
                self.stop("parent exited")
        return self.reason is not None


# ---------------------------------------------------------------------------------------- hold

class Group:
    def __init__(self, spec, mode, scheme, host, port, path, count, start, body_length=0):
        self.spec = spec
        self.mode = mode
        # A stalled handshake is written raw: the partial ClientHello is all it ever sends.
        self.tls = scheme == "https" and mode != "handshake"
        self.host, self.port, self.path, self.count = host, port, path, count
        self.start = start
        method = "POST" if self.tls else "GET"
        if mode in ("slow-body", "hog"):
            self.head = (f"POST {path} HTTP/1.1\r\nHost: {authority(host, port)}\r\n"
                         f"User-Agent: restarter-hostile-client\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {body_length}\r\n\r\n").encode()
            if mode == "hog":
                self.head += b"x" * (body_length - 1)
        elif mode in ("trickle", "served", "pipeline") and self.tls:
            sts = labeled_statefulset("default", "hostile-config")
            del sts["metadata"]["labels"]
            body = compact(review("default", sts)).encode()
            self.head = (f"POST {path} HTTP/1.1\r\nHost: {authority(host, port)}\r\n"
                         f"User-Agent: restarter-hostile-client\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        elif mode == "handshake":
            self.head = partial_client_hello()
        elif mode in ("served", "pipeline"):
            self.head = (f"GET {path} HTTP/1.1\r\nHost: {authority(host, port)}\r\n"
                         f"User-Agent: restarter-hostile-client\r\n\r\n").encode()
        else:
            self.head = (f"{method} {path} HTTP/1.1\r\nHost: {authority(host, port)}\r\n"
                         f"User-Agent: restarter-hostile-client\r\nX-Slow: ").encode()
        if mode == "pipeline":
            self.head *= PIPELINED
        self.open = 0
        self.connecting = 0
        self.opened = 0
        self.closed_by_server = 0
        self.close_times = []
        self.last_close = None
        self.lifetimes = []
        self.connect_errors = 0
        self.last_connect_error = None
        self.handshake_timeouts = 0
        self.reached = 0          # slots whose connection was open at least once
        self.gaps = []            # seconds from a server's close to the slot's next open
        self.tokens = float(count)  # reconnect budget: COUNT at once, COUNT per --reconnect-period
        self.tokens_at = start
        self.answers = {}
        self.bytes_sent = 0
        self.integral = 0.0
        self.integral_at = start
        self.window = None  # {"t0", "i0", "min", "closed0", "t1", "i1"}

    def _integrate(self, now):
        self.integral += self.open * (now - self.integral_at)
        self.integral_at = now

    def change_open(self, delta, now):
        self._integrate(now)
        self.open += delta
        if self.window is not None and "t1" not in self.window:
            self.window["min"] = min(self.window["min"], self.open)

    def window_start(self, now):
        self._integrate(now)
        self.window = {"t0": now, "i0": self.integral, "min": self.open, "closed0": self.closed_by_server}

    def window_end(self, now):
        if self.window is None or "t1" in self.window:
            return
        self._integrate(now)
        self.window.update(t1=now, i1=self.integral, closed1=self.closed_by_server)

    def take_token(self, now, period):
        self.tokens = min(float(self.count), self.tokens + (now - self.tokens_at) * self.count / period)
        self.tokens_at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def server_closed(self, now, lifetime):
        self.closed_by_server += 1
        self.last_close = round(now - self.start, 3)
        if len(self.close_times) < KEPT_CLOSE_TIMES:
            self.close_times.append(self.last_close)
        self.lifetimes.append(lifetime)

    def answered(self, first_line):
        if first_line in self.answers or len(self.answers) < KEPT_ANSWERS:
            self.answers[first_line] = self.answers.get(first_line, 0) + 1

    def report(self, now):
        self._integrate(now)
        out = {
            "hold": self.spec, "mode": self.mode, "tls": self.tls, "count": self.count,
            "open": self.open, "connecting": self.connecting, "opened_total": self.opened,
            "closed_by_server": self.closed_by_server, "close_times": self.close_times,
            "last_close": self.last_close,
            "lifetime_seconds": ({"min": round(min(self.lifetimes), 3), "max": round(max(self.lifetimes), 3),
                                  "mean": round(sum(self.lifetimes) / len(self.lifetimes), 3)}
                                 if self.lifetimes else None),
            "connect_errors": self.connect_errors, "last_connect_error": self.last_connect_error,
            "handshake_timeouts": self.handshake_timeouts, "reached": self.reached,
            "reopen_gap_seconds": ({"max": round(max(self.gaps), 3),
                                    "mean": round(sum(self.gaps) / len(self.gaps), 3)} if self.gaps else None),
            "answers": self.answers,
            "bytes_sent": self.bytes_sent,
            "mean_open": round(self.integral / (now - self.start), 2) if now > self.start else 0,
        }
        if self.window is not None:
            w = self.window
            t1 = w.get("t1", now)
            i1 = w.get("i1", self.integral)
            seconds = t1 - w["t0"]
            out["window"] = {
                "seconds": round(seconds, 3),
                "coverage": round((i1 - w["i0"]) / (seconds * self.count), 4) if seconds > 0 else
                (1.0 if w["min"] >= self.count else w["min"] / self.count),
                "mean_open": round((i1 - w["i0"]) / seconds, 2) if seconds > 0 else w["min"],
                "min_open": w["min"],
                "closed_by_server": w.get("closed1", self.closed_by_server) - w["closed0"],
            }
        return out


class Slot:
    __slots__ = ("group", "source", "sock", "state", "retry_at", "deadline", "opened_at", "next_byte_at",
                 "head_pos", "failures", "reached", "closed_at", "sent_at", "connected_at")

    def __init__(self, group, source):
        self.group = group
        self.source = source  # the loopback address it connects from (None: the default)
        self.sock = None
        self.state = "waiting"
        self.retry_at = 0.0
        self.deadline = 0.0
        self.opened_at = 0.0
        self.next_byte_at = 0.0
        self.head_pos = 0
        self.failures = 0
        self.reached = False
        self.closed_at = None  # when the server last closed it, until it is open again
        self.sent_at = 0.0     # trickle: when the review under way began
        self.connected_at = 0.0  # when its connect began (--close-after counts from it)

class Holder:
    def __init__(self, args, groups):
        self.args = args
        self.groups = groups
        self.selector = selectors.DefaultSelector()
        self.context = client_context()
        sources = args.sources or [None]
        self.slots = [Slot(g, sources[i % len(sources)]) for g in groups for i in range(g.count)]
        self.window_state = "none"
        self.stopper = Stopper(args.duration)

    # -- state changes
    def _forget(self, slot):
        if slot.sock is not None:
            try:
                self.selector.unregister(slot.sock)
            except (KeyError, ValueError):
                pass
            try:
                slot.sock.close()
            except OSError:
                pass
            slot.sock = None

    def _schedule(self, slot, now, failed):
        slot.failures = slot.failures + 1 if failed else 0
        delay = RETRY_DELAY * (2 ** min(slot.failures - 1, 3)) if failed else REOPEN_DELAY
        slot.state = "waiting" if self.args.reconnect else "done"
        slot.retry_at = now + delay

    def close_slot(self, slot, now, why):
        """why: 'server' (the server closed an open connection), 'error', 'timeout' or 'stop'."""
        g = slot.group
        if slot.state == "open":
            g.change_open(-1, now)
        elif slot.state in ("connecting", "handshaking"):
            g.connecting -= 1
        if why == "server":
            g.server_closed(now, now - slot.opened_at)
            slot.closed_at = now
        self._forget(slot)
        if why != "stop":
            self._schedule(slot, now, failed=why in ("error", "timeout"))

    def connect(self, slot, now):
        g = slot.group
        sock = socket.socket(family_of(g.host), socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            bind_source(sock, slot.source)
        except OSError as e:
            sock.close()
            g.connect_errors += 1
            g.last_connect_error = f"bind {slot.source}: {e}"
            slot.sock = None
            slot.state = "connecting"
            g.connecting += 1
            self.close_slot(slot, now, "error")
            return
        err = sock.connect_ex((g.host, g.port))
        slot.sock = sock
        slot.state = "connecting"
        slot.deadline = now + self.args.connect_timeout
        slot.connected_at = now
        g.connecting += 1
        if err not in (0, errno.EINPROGRESS):
            g.connect_errors += 1
            g.last_connect_error = os.strerror(err)
            self.close_slot(slot, now, "error")
            return
        self.selector.register(sock, selectors.EVENT_WRITE, slot)

    def became_open(self, slot, now):
        g = slot.group
        g.connecting -= 1
        g.change_open(+1, now)
        g.opened += 1
        slot.state = "open"
        slot.opened_at = now
        slot.failures = 0
        if not slot.reached:
            slot.reached = True
            g.reached += 1
        if slot.closed_at is not None:
            g.gaps.append(now - slot.closed_at)
            slot.closed_at = None
        slot.head_pos = 0
        slot.next_byte_at = now
        slot.sent_at = now
        self.selector.modify(slot.sock, selectors.EVENT_READ, slot)

    def handshake(self, slot, now):
        try:
            slot.sock.do_handshake()
        except ssl.SSLWantReadError:
            self.selector.modify(slot.sock, selectors.EVENT_READ, slot)
            return
        except ssl.SSLWantWriteError:
            self.selector.modify(slot.sock, selectors.EVENT_WRITE, slot)
            return
        except (ssl.SSLError, OSError) as e:
            slot.group.connect_errors += 1
            slot.group.last_connect_error = f"TLS handshake: {e}"
            self.close_slot(slot, now, "error")
            return
        self.became_open(slot, now)

    def on_event(self, slot, now):
        g = slot.group
        if slot.state == "connecting":
            err = slot.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                g.connect_errors += 1
                g.last_connect_error = os.strerror(err)
                self.close_slot(slot, now, "error")
                return
            if not g.tls:
                self.became_open(slot, now)
                return
            self.selector.unregister(slot.sock)
            slot.sock = self.context.wrap_socket(slot.sock, do_handshake_on_connect=False)
            self.selector.register(slot.sock, selectors.EVENT_WRITE, slot)
            slot.state = "handshaking"
            self.handshake(slot, now)
        elif slot.state == "handshaking":
            self.handshake(slot, now)
        elif slot.state == "open":
            self.read(slot, now)

    def read(self, slot, now):
        while True:
            try:
                data = slot.sock.recv(4096)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                return  # e.g. a TLS 1.3 session ticket: no application data
            except (ssl.SSLError, OSError):
                self.close_slot(slot, now, "server")
                return
            if not data:
                self.close_slot(slot, now, "server")
                return
            if data.startswith(b"HTTP/"):
                slot.group.answered(data.split(b"\r\n", 1)[0][:100].decode("latin-1"))
                if slot.group.mode in ("trickle", "pipeline") and slot.head_pos >= len(slot.group.head):
                    slot.head_pos = 0  # answered: the next review, trickled again
                    slot.next_byte_at = now
                    slot.sent_at = now
            if not (slot.group.tls and slot.sock.pending()):
                return

    def send_burst(self, slot, now):
        """handshake and hog: everything there is to send, as fast as the server reads it."""
        g = slot.group
        budget = HOG_CHUNK
        while slot.head_pos < len(g.head) and budget > 0:
            try:
                sent = slot.sock.send(g.head[slot.head_pos:slot.head_pos + min(budget, 65536)])
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                return  # the rest at the next tick
            except (ssl.SSLError, OSError):
                self.close_slot(slot, now, "server")
                return
            if not sent:
                return
            slot.head_pos += sent
            g.bytes_sent += sent
            budget -= sent

    def send_trickle(self, slot, now):
        """trickle: the bytes of the review that are due by now, evenly over --trickle-seconds."""
        g = slot.group
        if slot.head_pos >= len(g.head):
            return  # waiting for the answer
        due = min(len(g.head), int((now - slot.sent_at) / self.args.trickle_seconds * len(g.head)) + 1)
        if due <= slot.head_pos:
            return
        try:
            sent = slot.sock.send(g.head[slot.head_pos:due])
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return
        except (ssl.SSLError, OSError):
            self.close_slot(slot, now, "server")
            return
        slot.head_pos += sent
        g.bytes_sent += sent

    def send_byte(self, slot, now):
        g = slot.group
        if g.mode in ("hog", "handshake", "served", "pipeline"):
            return self.send_burst(slot, now)
        if g.mode == "trickle":
            return self.send_trickle(slot, now)
        if g.mode == "slow-body" and slot.head_pos < len(g.head):
            byte = g.head[slot.head_pos:]  # the head at once; then the body byte by byte
        else:
            byte = g.head[slot.head_pos:slot.head_pos + 1] if slot.head_pos < len(g.head) else b"a"
        try:
            sent = slot.sock.send(byte)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return  # try again at the next tick
        except (ssl.SSLError, OSError):
            self.close_slot(slot, now, "server")
            return
        if sent:
            slot.head_pos += sent
            g.bytes_sent += sent
            slot.next_byte_at += self.args.byte_interval
            if slot.next_byte_at < now:
                slot.next_byte_at = now + self.args.byte_interval

    # -- the loop
    def status(self, now, final=False):
        window = {"state": self.window_state}
        groups = [g.report(now) for g in self.groups]
        return {
            "state": "done" if final else "running",
            "stop_reason": self.stopper.reason,
            "elapsed_seconds": round(now - self.stopper.start, 3),
            "all_open": all(g["open"] == g["count"] for g in groups),
            "all_reached": all(g["reached"] == g["count"] for g in groups),
            "window": window,
            "groups": groups,
        }

    def run(self):
        next_status = 0.0
        while not self.stopper.check():
            now = time.monotonic()
            while PENDING_WINDOW:
                what, at = PENDING_WINDOW.pop(0)
                for g in self.groups:
                    (g.window_start if what == "start" else g.window_end)(at)
                self.window_state = "open" if what == "start" else "closed"
            # Reopen the longest-waiting first: with the budget short, every slot gets its turn.
            ready = sorted((slot for slot in self.slots if slot.state == "waiting" and slot.retry_at <= now),
                           key=lambda slot: slot.retry_at)
            for slot in ready:
                if slot.group.take_token(now, self.args.reconnect_period):
                    self.connect(slot, now)
            for slot in self.slots:
                if slot.state in ("connecting", "handshaking") and now >= slot.deadline:
                    slot.group.handshake_timeouts += 1
                    self.close_slot(slot, now, "timeout")
                elif (slot.state in ("handshaking", "open") and self.args.close_after
                      and now - slot.connected_at >= self.args.close_after):
                    self.close_slot(slot, now, "self")  # closes itself just before a deadline, reconnects
                elif slot.state == "open" and slot.group.mode != "idle" and now >= slot.next_byte_at:
                    self.send_byte(slot, now)
            for key, _ in self.selector.select(TICK):
                self.on_event(key.data, time.monotonic())
            now = time.monotonic()
            if now >= next_status:
                write_json(self.args.status, self.status(now))
                next_status = now + STATUS_EVERY
        now = time.monotonic()
        for g in self.groups:
            g.window_end(now)
        if self.window_state == "open":
            self.window_state = "closed at exit"
        report = self.status(now, final=True)
        for slot in self.slots:
            if slot.state in ("connecting", "handshaking", "open"):
                self.close_slot(slot, now, "stop")
        self.selector.close()
        write_json(self.args.status, report)
        json.dump(report, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0


MODES = ("idle", "slow", "slow-body", "trickle", "handshake", "hog", "served", "pipeline")


def parse_hold(spec, start, body_length):
    try:
        parts = spec.split(",")
        if len(parts) == 4:
            body_length = bounded(int(parts[3]), 1, MAX_BODY, f"--hold {spec}: BODY_LENGTH")
        elif len(parts) != 3:
            raise ValueError
        mode, url, count = parts[:3]
        count = int(count)
    except ValueError:
        raise UsageError(f"--hold {spec}: want MODE,URL,COUNT[,BODY_LENGTH]") from None
    if mode not in MODES:
        raise UsageError(f"--hold {spec}: MODE must be one of {', '.join(MODES)}")
    bounded(count, 1, MAX_CONNECTIONS, f"--hold {spec}: COUNT")
    scheme, host, port, path = loopback_target(url, ("http", "https"))
    return Group(spec, mode, scheme, host, port, path, count, start, body_length)


def cmd_hold(args):
    bounded(args.duration, 1, MAX_DURATION, "--duration")
    bounded(args.byte_interval, 0.01, 60, "--byte-interval")
    bounded(args.body_length, 1, MAX_BODY, "--body-length")
    bounded(args.connect_timeout, 0.1, 120, "--connect-timeout")
    bounded(args.reconnect_period, 0.1, 600, "--reconnect-period")
    bounded(args.trickle_seconds, 0.1, 600, "--trickle-seconds")
    bounded(args.close_after, 0, 600, "--close-after")
    for target in args.allow_target or []:
        try:
            address = ipaddress.ip_address(target)
        except ValueError:
            raise UsageError(f"--allow-target {target}: not an address") from None
        if not address.is_private or address.is_loopback:
            raise UsageError(f"--allow-target {target}: only a private address (a cluster's own) may be allowed")
        ALLOWED_TARGETS.add(str(address))
    args.sources = source_range(args.source, args.sources)
    start = time.monotonic()
    groups = [parse_hold(spec, start, args.body_length) for spec in args.hold]
    total = sum(g.count for g in groups)
    if total > MAX_CONNECTIONS:
        raise UsageError(f"at most {MAX_CONNECTIONS} connections in all, not {total}")
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < total + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, total + 64), hard))
    return Holder(args, groups).run()


# ---------------------------------------------------------------------------------------- post

def labeled_statefulset(namespace, configmap):
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "hostile", "namespace": namespace,
                     "labels": {"restarter.stackable.tech/enabled": "true"}},
        "spec": {
            "serviceName": "hostile", "replicas": 0,
            "selector": {"matchLabels": {"app": "hostile"}},
            "template": {
                "metadata": {"labels": {"app": "hostile"}},
                "spec": {
                    "volumes": [{"name": "config", "configMap": {"name": configmap}}],
                    "containers": [{"name": "app", "image": "registry.invalid/hostile:1", "env": []}],
                },
            },
        },
    }


def review(namespace, sts, kind=None):
    request = {
        "uid": str(uuid.uuid4()),
        "kind": kind if kind is not None else {"group": "apps", "version": "v1", "kind": "StatefulSet"},
        "resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
        "name": sts["metadata"]["name"], "namespace": namespace, "operation": "CREATE",
        "userInfo": {"username": "restarter-hostile-client"},
        "object": sts, "dryRun": False,
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def compact(document):
    return json.dumps(document, separators=(",", ":"))


def deep_review(depth, namespace, configmap):
    """request.kind is `depth` nested objects; built as text (json cannot nest that deep)."""
    marker = '"@KIND@"'
    text = compact(review(namespace, labeled_statefulset(namespace, configmap), kind="@KIND@"))
    nested = '{"k":' * (depth - 1) + "{}" + "}" * (depth - 1)
    return text.replace(marker, nested, 1).encode()


def big_review(size, shape, namespace, configmap):
    sts = labeled_statefulset(namespace, configmap)
    base = review(namespace, sts)
    if shape == "annotation":
        sts["spec"]["template"]["metadata"]["annotations"] = {"example.com/big": ""}
        short = len(compact(base))
        if short > size:
            raise UsageError(f"--size {size} is below the smallest review ({short} bytes)")
        sts["spec"]["template"]["metadata"]["annotations"]["example.com/big"] = "x" * (size - short)
    else:
        env = sts["spec"]["template"]["spec"]["containers"][0]["env"]
        entry_value = "v" * 32
        env.append({"name": "VAR_0000000", "value": ""})
        short = len(compact(base))
        if short > size:
            raise UsageError(f"--size {size} is below the smallest review ({short} bytes)")
        entry = len(compact({"name": "VAR_0000000", "value": entry_value})) + 1  # and its comma
        n = (size - short) // entry
        for i in range(1, n + 1):
            env.append({"name": f"VAR_{i:07d}", "value": entry_value})
        env[0]["value"] = "v" * (size - short - n * entry)
    body = compact(base).encode()
    if len(body) != size:
        raise RuntimeError(f"built {len(body)} bytes, not {size}")
    return body


def post_one(scheme, host, port, path, body, timeout, barrier, result, source=None):
    started = None
    connection = None
    bind = (source, 0) if source else None
    try:
        if scheme == "https":
            connection = http.client.HTTPSConnection(host, port, timeout=timeout, context=client_context(),
                                                     source_address=bind)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=timeout, source_address=bind)
        connection.connect()
        barrier.wait(timeout)
        started = time.monotonic()
        send_error = None
        try:
            connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        except (OSError, http.client.HTTPException) as e:
            send_error = e  # the server may still have answered (e.g. 413) before closing
        try:
            response = connection.getresponse()
            answer = response.read(300)
            result.update(status=response.status, answer=answer.decode("utf-8", "replace"))
            if send_error is not None:
                result["note"] = f"body not fully sent: {send_error}"
        except (OSError, http.client.HTTPException) as e:
            result.update(status=None, error=f"{type(e).__name__}: {e}" if send_error is None
                          else f"{type(send_error).__name__}: {send_error}; then {type(e).__name__}: {e}")
    except (OSError, http.client.HTTPException, threading.BrokenBarrierError) as e:
        result.update(status=None, error=f"{type(e).__name__}: {e}")
    finally:
        if started is not None:
            result["seconds"] = round(time.monotonic() - started, 3)
        if connection is not None:
            connection.close()


def cmd_post(args):
    scheme, host, port, path = loopback_target(args.url, ("http", "https"))
    bounded(args.parallel, 1, MAX_PARALLEL, "--parallel")
    bounded(args.timeout, 1, 600, "--timeout")
    source = loopback_source(args.source) if args.source else None
    if args.deep is not None:
        bounded(args.deep, 1, MAX_DEPTH, "--deep")
        body = deep_review(args.deep, args.namespace, args.configmap)
        what = f"request.kind nested {args.deep} levels"
    else:
        bounded(args.size, 1, MAX_BODY, "--size")
        body = big_review(args.size, args.shape, args.namespace, args.configmap)
        what = f"{args.shape}-shaped StatefulSet"
    results = [{"index": i} for i in range(args.parallel)]
    barrier = threading.Barrier(args.parallel)
    threads = [threading.Thread(target=post_one, daemon=True,
                                args=(scheme, host, port, path, body, args.timeout, barrier, results[i],
                                      source))
               for i in range(args.parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(args.timeout * 3 + 5)
    statuses = {}
    for r in results:
        key = str(r.get("status")) if "status" in r else "unfinished"
        statuses[key] = statuses.get(key, 0) + 1
    json.dump({"url": args.url, "review": what, "bytes": len(body), "parallel": args.parallel,
               "statuses": statuses, "requests": results}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


# ------------------------------------------------------------------------------------- amplify

MAX_NAMES = 10_000


def amplifier_review(namespace, names):
    sts = labeled_statefulset(namespace, names[0])
    sts["metadata"]["name"] = "amplifier"
    sts["spec"]["template"]["spec"]["volumes"] = [
        {"name": f"v{i}", "configMap": {"name": name, "optional": True}} for i, name in enumerate(names)]
    return review(namespace, sts)


class Amplifier:
    """One loop: reviews back to back on one keep-alive connection."""

    def __init__(self, scheme, host, port, path, template, context, timeout, reviews, stopper, interval=0.0):
        self.scheme, self.host, self.port, self.path = scheme, host, port, path
        self.template, self.context, self.timeout = template, context, timeout
        self.reviews, self.stopper, self.interval = reviews, stopper, interval
        self.statuses, self.patched, self.errors, self.latencies = {}, 0, 0, []
        self.first_errors = []
        self.lock = threading.Lock()

    def connect(self):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self.context)
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def run(self):
        connection, sent = None, 0
        begin = time.monotonic()
        while not self.stopper.event.is_set() and (self.reviews == 0 or sent < self.reviews):
            if self.interval > 0:
                delay = begin + sent * self.interval - time.monotonic()
                if delay > 0 and self.stopper.event.wait(delay):
                    break
            self.template["request"]["uid"] = str(uuid.uuid4())
            body = compact(self.template).encode()
            sent += 1
            started = time.monotonic()
            try:
                if connection is None:
                    connection = self.connect()
                connection.request("POST", self.path, body=body, headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                answer = response.read(MAX_BODY)
                seconds = time.monotonic() - started
                patched = False
                if response.status == 200:
                    try:
                        patched = "patch" in json.loads(answer).get("response", {})
                    except ValueError:
                        pass
                with self.lock:
                    self.statuses[str(response.status)] = self.statuses.get(str(response.status), 0) + 1
                    self.patched += 1 if patched else 0
                    self.latencies.append(seconds)
                if response.will_close:
                    connection.close()
                    connection = None
            except (OSError, http.client.HTTPException) as e:
                with self.lock:
                    self.errors += 1
                    if len(self.first_errors) < KEPT_FAILURES:
                        self.first_errors.append(f"{type(e).__name__}: {e}")
                if connection is not None:
                    connection.close()
                    connection = None
                self.stopper.event.wait(RETRY_DELAY)
        if connection is not None:
            connection.close()

    def report(self):
        with self.lock:
            return dict(statuses=dict(self.statuses), patched=self.patched, errors=self.errors,
                        first_errors=list(self.first_errors), latencies=list(self.latencies))


def cmd_amplify(args):
    scheme, host, port, path = loopback_target(args.url, ("http", "https"))
    bounded(args.loops, 1, MAX_PARALLEL, "--loops")
    bounded(args.duration, 0.1, MAX_DURATION, "--duration")
    bounded(args.timeout, 1, 600, "--timeout")
    bounded(args.reviews, 0, 1_000_000, "--reviews")
    names = list(args.name or [])
    if not names and args.huge_name is None:
        names = [f"amp-{i}" for i in range(bounded(args.names, 1, MAX_NAMES, "--names"))]
    if args.huge_name is not None:
        names.append("h" * bounded(args.huge_name, 1, MAX_BODY // 2, "--huge-name"))
    bounded(len(names), 1, MAX_NAMES, "the number of names")
    if (args.cert is None) != (args.key is None):
        raise UsageError("--cert and --key go together")
    context = client_context()
    if args.cert is not None:
        context.load_cert_chain(args.cert, args.key)
    interval = 0.0
    if args.rate is not None:
        interval = args.loops / bounded(args.rate, 0.1, 100_000, "--rate")
    stopper = Stopper(args.duration)
    loops = [Amplifier(scheme, host, port, path, amplifier_review(args.namespace, names), context, args.timeout,
                       args.reviews, stopper, interval) for _ in range(args.loops)]
    threads = [threading.Thread(target=a.run, daemon=True) for a in loops]
    for t in threads:
        t.start()
    next_status = 0.0
    while any(t.is_alive() for t in threads) and not stopper.check():
        stopper.event.wait(TICK)
        now = time.monotonic()
        if args.status and now >= next_status:
            write_json(args.status, {"state": "running"})
            next_status = now + STATUS_EVERY
    stopper.event.set()
    for t in threads:
        t.join(args.timeout + 5)
    statuses, patched, errors, first_errors, latencies = {}, 0, 0, [], []
    for a in loops:
        r = a.report()
        for key, n in r["statuses"].items():
            statuses[key] = statuses.get(key, 0) + n
        patched += r["patched"]
        errors += r["errors"]
        first_errors.extend(r["first_errors"][:KEPT_FAILURES - len(first_errors)])
        latencies.extend(r["latencies"])
    report = {"state": "done", "stop_reason": stopper.reason or "reviews sent",
              "elapsed_seconds": round(time.monotonic() - stopper.start, 3), "loops": args.loops,
              "names_per_review": len(names), "statuses": statuses, "answered": len(latencies),
              "patched": patched, "errors": errors, "first_errors": first_errors}
    if latencies:
        report.update(p50_seconds=round(nearest_rank(latencies, 0.5), 4), max_seconds=round(max(latencies), 4))
    write_json(args.status, report)
    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


# --------------------------------------------------------------------------------------- probe

def probe_once(host, port, path, timeout):
    """(ok, seconds, detail) of one kubelet-like HTTP GET on a new connection."""
    start = time.monotonic()
    deadline = start + timeout
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {authority(host, port)}\r\n"
                         f"User-Agent: restarter-probe\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while b"\r\n" not in data:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise socket.timeout("timed out")
                sock.settimeout(remaining)
                chunk = sock.recv(1024)
                if not chunk:
                    raise ConnectionError("closed before answering")
                data += chunk
        status_line = data.split(b"\r\n", 1)[0].decode("latin-1")
        seconds = time.monotonic() - start
        parts = status_line.split()
        code = int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else 0
        if seconds > timeout:
            return False, seconds, f"answered after {seconds:.3f} s: {status_line}"
        return 200 <= code < 400, seconds, status_line
    except (OSError, ValueError) as e:
        return False, max(time.monotonic() - start, 0.0), f"{type(e).__name__}: {e}"


def nearest_rank(values, q):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class Prober:
    def __init__(self, url, interval, timeout, stopper):
        _, self.host, self.port, self.path = loopback_target(url, ("http",))
        self.url = url
        self.interval, self.timeout, self.stopper = interval, timeout, stopper
        self.latencies = []
        self.failures = 0
        self.failure_run = 0          # failures since the last success
        self.longest_failure_run = 0  # what a kubelet's failureThreshold is compared with
        self.first_failures = []
        self.lock = threading.Lock()

    def run(self):
        start = time.monotonic()
        n = 0
        while not self.stopper.event.is_set():
            ok, seconds, detail = probe_once(self.host, self.port, self.path, self.timeout)
            with self.lock:
                self.latencies.append(seconds)
                self.failure_run = 0 if ok else self.failure_run + 1
                self.longest_failure_run = max(self.longest_failure_run, self.failure_run)
                if not ok:
                    self.failures += 1
                    if len(self.first_failures) < KEPT_FAILURES:
                        self.first_failures.append(
                            {"at_seconds": round(time.monotonic() - self.stopper.start, 3), "why": detail})
            n += 1
            wait = start + n * self.interval - time.monotonic()
            if wait > 0:
                self.stopper.event.wait(wait)

    def report(self):
        with self.lock:
            values = list(self.latencies)
            out = {"url": self.url, "probes": len(values), "failures": self.failures,
                   "longest_failure_run": self.longest_failure_run,
                   "first_failures": list(self.first_failures)}
        if values:
            out.update(max_seconds=round(max(values), 4), p99_seconds=round(nearest_rank(values, 0.99), 4),
                       p50_seconds=round(nearest_rank(values, 0.5), 4))
        return out


def cmd_probe(args):
    bounded(args.duration, 1, MAX_DURATION, "--duration")
    bounded(args.interval, 0.05, 60, "--interval")
    bounded(args.timeout, 0.05, 60, "--timeout")
    stopper = Stopper(args.duration)
    probers = [Prober(url, args.interval, args.timeout, stopper) for url in args.url]
    threads = [threading.Thread(target=p.run, daemon=True) for p in probers]
    for t in threads:
        t.start()
    next_status = 0.0
    while not stopper.check():
        stopper.event.wait(TICK)
        now = time.monotonic()
        if args.status and now >= next_status:
            write_json(args.status, {"state": "running", "probes": [p.report() for p in probers]})
            next_status = now + STATUS_EVERY
    for t in threads:
        t.join(args.timeout + 5)
    report = {"state": "done", "stop_reason": stopper.reason,
              "elapsed_seconds": round(time.monotonic() - stopper.start, 3),
              "timeout_seconds": args.timeout, "probes": [p.report() for p in probers]}
    write_json(args.status, report)
    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


def main():
    signal.signal(signal.SIGUSR1, lambda *_: PENDING_WINDOW.append(("start", time.monotonic())))
    signal.signal(signal.SIGUSR2, lambda *_: PENDING_WINDOW.append(("end", time.monotonic())))
    parser = argparse.ArgumentParser(
        description="A bounded hostile client for loopback targets (see the module docstring).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    hold = sub.add_parser("hold", help="hold idle, slow, trickling, stalled-handshake and hog connections")
    hold.add_argument("--hold", action="append", required=True, metavar="MODE,URL,COUNT[,BODY_LENGTH]")
    hold.add_argument("--duration", type=float, required=True)
    hold.add_argument("--byte-interval", type=float, default=2.0)
    hold.add_argument("--body-length", type=int, default=8_388_000)
    hold.add_argument("--connect-timeout", type=float, default=10.0)
    hold.add_argument("--no-reconnect", dest="reconnect", action="store_false")
    hold.add_argument("--reconnect-period", type=float, default=5.0)
    hold.add_argument("--trickle-seconds", type=float, default=9.0)
    hold.add_argument("--source", help="connect from this loopback address (127.0.0.0/8 or ::1)")
    hold.add_argument("--sources", type=int, default=1,
                      help="spread the connections round-robin over this many consecutive addresses from --source")
    hold.add_argument("--close-after", type=float, default=0.0,
                      help="close each connection this many seconds after connecting, then reconnect (0: never)")
    hold.add_argument("--allow-target", action="append",
                      help="also allow this private address as a target (a cluster Service or pod address, "
                           "from an attacking pod's network namespace on the real node)")
    hold.add_argument("--status")
    post = sub.add_parser("post", help="post crafted AdmissionReviews")
    post.add_argument("--url", required=True)
    what = post.add_mutually_exclusive_group(required=True)
    what.add_argument("--deep", type=int)
    what.add_argument("--size", type=int)
    post.add_argument("--shape", choices=("env", "annotation"), default="env")
    post.add_argument("--parallel", type=int, default=1)
    post.add_argument("--namespace", default="default")
    post.add_argument("--configmap", default="hostile-config")
    post.add_argument("--timeout", type=float, default=60.0)
    post.add_argument("--source", help="connect from this loopback address (127.0.0.0/8 or ::1)")
    probe = sub.add_parser("probe", help="probe HTTP endpoints like a kubelet, in a loop")
    probe.add_argument("--url", action="append", required=True)
    probe.add_argument("--duration", type=float, required=True)
    probe.add_argument("--interval", type=float, default=0.25)
    probe.add_argument("--timeout", type=float, default=1.0)
    probe.add_argument("--status")
    amplify = sub.add_parser("amplify", help="loops of reviews naming many ConfigMaps (lookup amplifier)")
    amplify.add_argument("--url", required=True)
    amplify.add_argument("--loops", type=int, default=16)
    amplify.add_argument("--names", type=int, default=1000)
    amplify.add_argument("--name", action="append")
    amplify.add_argument("--huge-name", type=int)
    amplify.add_argument("--duration", type=float, default=10.0)
    amplify.add_argument("--reviews", type=int, default=0)
    amplify.add_argument("--rate", type=float)
    amplify.add_argument("--namespace", default="default")
    amplify.add_argument("--cert")
    amplify.add_argument("--key")
    amplify.add_argument("--timeout", type=float, default=30.0)
    amplify.add_argument("--status")
    args = parser.parse_args()
    try:
        return {"hold": cmd_hold, "post": cmd_post, "probe": cmd_probe,
                "amplify": cmd_amplify}[args.command](args)
    except UsageError as e:
        print(f"hostile_client.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
