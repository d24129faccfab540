// otlp-sink is a minimal OTLP/gRPC trace receiver for the webhook benchmark
// (tests/bench/webhook.sh). kube-apiserver, started with a tracing configuration pointing here,
// exports one span "Call mutating webhook" per webhook call, timed by the apiserver itself around
// the HTTPS call and the patch it applies. The histogram the apiserver also keeps
// (apiserver_admission_webhook_admission_duration_seconds) has no bucket between 5 ms and 25 ms;
// these spans give the same measurement to the microsecond.
//
// Usage: otlp-sink -listen 127.0.0.1:4317 -span "Call mutating webhook" -attribute webhook=NAME
//
// For every matching span it prints one JSON line to stdout:
//
//	{"start_unix_nano":...,"duration_ms":2.41,"attributes":{"webhook":"...","operation":"CREATE",...},
//	 "events_ms":{"Request completed":2.05,"Patch applied":2.37}}
//
// (events_ms: when each span event happened, in ms after the span started). Lines are written
// whole and flushed at once, so a reader may tail the file. Other spans are counted, not printed.
// SIGINT/SIGTERM stop it; it then prints "otlp-sink: N spans received, M printed" to stderr.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
)

type line struct {
	StartUnixNano uint64             `json:"start_unix_nano"`
	DurationMs    float64            `json:"duration_ms"`
	Attributes    map[string]string  `json:"attributes"`
	EventsMs      map[string]float64 `json:"events_ms,omitempty"`
}

type sink struct {
	collectortrace.UnimplementedTraceServiceServer
	spanName string
	want     map[string]string // attribute filters, all must match

	mu       sync.Mutex
	out      *json.Encoder
	received int
	printed  int
}

func attributeText(v *commonv1.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonv1.AnyValue_StringValue:
		return x.StringValue
	case *commonv1.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonv1.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonv1.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	default:
		return v.String()
	}
}

func (s *sink) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, span := range ss.GetSpans() {
				s.received++
				if span.GetName() != s.spanName {
					continue
				}
				attrs := map[string]string{}
				for _, kv := range span.GetAttributes() {
					attrs[kv.GetKey()] = attributeText(kv.GetValue())
				}
				matches := true
				for k, v := range s.want {
					if attrs[k] != v {
						matches = false
					}
				}
				if !matches {
					continue
				}
				start, end := span.GetStartTimeUnixNano(), span.GetEndTimeUnixNano()
				l := line{StartUnixNano: start, DurationMs: float64(end-start) / 1e6, Attributes: attrs}
				for _, ev := range span.GetEvents() {
					if l.EventsMs == nil {
						l.EventsMs = map[string]float64{}
					}
					l.EventsMs[ev.GetName()] = float64(int64(ev.GetTimeUnixNano())-int64(start)) / 1e6
				}
				if err := s.out.Encode(l); err != nil {
					fmt.Fprintln(os.Stderr, "otlp-sink: writing:", err)
					os.Exit(1)
				}
				s.printed++
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

type filters map[string]string

func (f filters) String() string { return fmt.Sprint(map[string]string(f)) }
func (f filters) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	f[k] = val
	return nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:4317", "address to receive OTLP/gRPC on (loopback only)")
	spanName := flag.String("span", "Call mutating webhook", "name of the spans to print")
	want := filters{}
	flag.Var(want, "attribute", "KEY=VALUE a printed span must carry (repeatable)")
	flag.Parse()

	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(os.Stderr, "otlp-sink: -listen must be a loopback address with a port, got %q\n", *listen)
		os.Exit(2)
	}
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "otlp-sink:", err)
		os.Exit(1)
	}
	s := &sink{spanName: *spanName, want: want, out: json.NewEncoder(os.Stdout)}
	server := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(server, s)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-stop
		server.GracefulStop()
	}()
	fmt.Fprintf(os.Stderr, "otlp-sink: listening on %s\n", lis.Addr())
	if err := server.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "otlp-sink:", err)
		os.Exit(1)
	}
	s.mu.Lock()
	fmt.Fprintf(os.Stderr, "otlp-sink: %d spans received, %d printed\n", s.received, s.printed)
	s.mu.Unlock()
}
