// otlp-sink: receives the kube-apiserver's OpenTelemetry traces for tests/bench/webhook.sh.
// Versions are those kube-apiserver v1.37.2 itself builds with (its go.mod), so the module cache
// of the local control plane's build already holds them.
module restarter.local/bench/otlp-sink

go 1.26.0

require (
	go.opentelemetry.io/proto/otlp v1.10.0
	google.golang.org/grpc v1.82.1
	google.golang.org/protobuf v1.36.12-0.20260120151049-f2248ac996af
)

require (
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.28.0 // indirect
	golang.org/x/net v0.53.0 // indirect
	golang.org/x/sys v0.43.0 // indirect
	golang.org/x/text v0.36.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260414002931-afd174a4e478 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260414002931-afd174a4e478 // indirect
)
