package config

import (
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Telemetry configures OpenTelemetry traces and metrics of the host (a
// telemetry block):
//
//	telemetry {
//	  service_name  = "mcphost"                  # default "mcphost"
//	  otlp_endpoint = "http://127.0.0.1:4318"    # OTLP/HTTP base URL; host:port for grpc
//	  otlp_protocol = "http/protobuf"            # or "grpc"
//	  otlp_headers  = { authorization = env("OTEL_TOKEN") }
//	  traces        = true                       # default true
//	  metrics       = true                       # default true
//	  prometheus    = true                       # default false: /metrics on the HTTP front
//	  sample_ratio  = 0.25                       # 0..1, default 1
//	}
//
// It is operator configuration that sends data off the machine, so only
// the user, local, cli and managed scopes may set it: a project file's is
// ignored, with a warning, and not evaluated. The block of the highest
// scope wins whole. OTLPHeaders often hold a credential: `config show`
// redacts their values.
type Telemetry struct {
	// ServiceName is the service.name resource attribute.
	ServiceName string `hcl:"service_name,optional" json:"service_name"`
	// OTLPEndpoint is where traces and metrics are exported: for
	// http/protobuf a base URL (http or https) the signal paths
	// (/v1/traces, /v1/metrics) are appended to, for grpc host:port. ""
	// leaves it to the exporter (the OTEL_EXPORTER_OTLP_* environment
	// variables, else its local default).
	OTLPEndpoint string `hcl:"otlp_endpoint,optional" json:"otlp_endpoint,omitempty"`
	// OTLPProtocol is OTLPHTTPProtobuf (the default) or OTLPGRPC.
	OTLPProtocol string `hcl:"otlp_protocol,optional" json:"otlp_protocol"`
	// OTLPHeaders are sent with every export (HTTP headers or gRPC
	// metadata), e.g. a token of the collector.
	OTLPHeaders map[string]string `hcl:"otlp_headers,optional" json:"otlp_headers,omitempty"`
	// Traces and Metrics turn the OTLP export of each signal on (both by
	// default).
	Traces  bool `hcl:"traces,optional" json:"traces"`
	Metrics bool `hcl:"metrics,optional" json:"metrics"`
	// Prometheus serves the metrics at /metrics on the gateway's HTTP
	// front, for scraping (off by default).
	Prometheus bool `hcl:"prometheus,optional" json:"prometheus"`
	// SampleRatio is the fraction of traces sampled, 0 to 1 (default 1). A
	// trace its caller sampled is always sampled (parent-based).
	SampleRatio float64 `hcl:"sample_ratio,optional" json:"sample_ratio"`
	Origin      Origin  `json:"origin"`
}

// OTLP protocols (telemetry { otlp_protocol }).
const (
	OTLPHTTPProtobuf = "http/protobuf"
	OTLPGRPC         = "grpc"
)

// DefaultServiceName is the service name telemetry reports by default.
const DefaultServiceName = "mcphost"

// decodeTelemetry decodes a telemetry block, its defaults filled in.
func decodeTelemetry(b *hcl.Block, path string, scope Scope, ctx *hcl.EvalContext) (*Telemetry, hcl.Diagnostics) {
	t := &Telemetry{
		ServiceName: DefaultServiceName, OTLPProtocol: OTLPHTTPProtobuf,
		Traces: true, Metrics: true, SampleRatio: 1,
	}
	attrs, diags := decodeBody(b.Body, ctx, t)
	t.Origin = Origin{Scope: scope, File: path, Range: b.DefRange}
	at := func(name string) *hcl.Range {
		if a, ok := attrs[name]; ok {
			return a.Expr.Range().Ptr()
		}
		return &b.DefRange
	}
	if strings.TrimSpace(t.ServiceName) == "" {
		diags = append(diags, errorf(at("service_name"), "Invalid service_name", "service_name may not be empty; leave it out for %q.", DefaultServiceName))
	}
	protocols := []string{OTLPHTTPProtobuf, OTLPGRPC}
	if !slices.Contains(protocols, t.OTLPProtocol) {
		diags = append(diags, errorf(at("otlp_protocol"), "Invalid otlp_protocol",
			"otlp_protocol must be one of %s, got %q.", strings.Join(protocols, ", "), t.OTLPProtocol))
	} else if t.OTLPEndpoint != "" {
		if msg := checkOTLPEndpoint(t.OTLPProtocol, t.OTLPEndpoint); msg != "" {
			diags = append(diags, errorf(at("otlp_endpoint"), "Invalid otlp_endpoint", "%s", msg))
		}
	}
	for k := range t.OTLPHeaders {
		if !headerNameRE.MatchString(k) {
			diags = append(diags, errorf(at("otlp_headers"), "Invalid header name", "%q is not a valid header name.", k))
		}
	}
	if t.SampleRatio < 0 || t.SampleRatio > 1 {
		diags = append(diags, errorf(at("sample_ratio"), "Invalid sample_ratio",
			"sample_ratio is the fraction of traces sampled, from 0 (none) to 1 (all), got %g.", t.SampleRatio))
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return t, diags
}

// checkOTLPEndpoint validates an endpoint for its protocol; "" means valid.
func checkOTLPEndpoint(protocol, raw string) string {
	if protocol == OTLPGRPC {
		host, port, err := net.SplitHostPort(raw)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return "For the grpc protocol otlp_endpoint is host:port, e.g. \"127.0.0.1:4317\" (no scheme)."
		}
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "For the http/protobuf protocol otlp_endpoint is the collector's http(s) base URL, e.g. \"http://127.0.0.1:4318\"."
	}
	if u.User != nil {
		return "credentials in the url are not allowed; use otlp_headers."
	}
	return ""
}

// mergeTelemetry takes the telemetry block of the highest scope that has
// one; a project's is ignored, with a warning.
func mergeTelemetry(cfg *Config, files []*decodedFile) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, f := range files {
		if f.scope == ScopeProject {
			if f.telemetryRange != nil {
				diags = append(diags, warnf(f.telemetryRange, "Ignored in project scope",
					"A telemetry block is only honoured in the user, local, cli and managed scopes: a repository's configuration may not send traces, metrics or credentials (otlp_headers) anywhere."))
			}
			continue
		}
		if f.telemetry != nil {
			cfg.Telemetry = f.telemetry
		}
	}
	return diags
}

// Equal reports whether t and o configure telemetry alike (where the
// blocks are written does not count). Either may be nil (no telemetry
// block).
func (t *Telemetry) Equal(o *Telemetry) bool {
	if t == nil || o == nil {
		return t == o
	}
	a, b := *t, *o
	a.Origin, b.Origin = Origin{}, Origin{}
	return reflect.DeepEqual(a, b)
}
