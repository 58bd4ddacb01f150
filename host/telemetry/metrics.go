package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
)

// durationBuckets are the histogram boundaries, in seconds: the MCP
// conventions' advice [0.01 … 300] with 0.5, 1, 2.5 and 5 ms in front,
// since a gateway hop on one machine takes well under 10 ms.
var durationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Names of the metrics the semantic conventions do not define.
const (
	MetricDecisions      = "mcphost.permission.decisions"
	MetricConnections    = "mcphost.connection.count"
	MetricReconnects     = "mcphost.server.reconnects"
	MetricPluginRestarts = "mcphost.plugin.restarts"
	MetricTokenRefreshes = "mcphost.token.refreshes"
	MetricReloads        = "mcphost.config.reloads"
)

// instruments are the host's metric instruments.
type instruments struct {
	server         mcpconv.ServerOperationDuration
	client         mcpconv.ClientOperationDuration
	decisions      metric.Int64Counter
	reconnects     metric.Int64Counter
	pluginRestarts metric.Int64Counter
	tokenRefreshes metric.Int64Counter
	reloads        metric.Int64Counter
}

// newInstruments creates the instruments on m; observe reports the
// connection gauge at each collection.
func newInstruments(m metric.Meter, observe metric.Int64Callback) (*instruments, error) {
	in := &instruments{}
	var err error
	bounds := metric.WithExplicitBucketBoundaries(durationBuckets...)
	if in.server, err = mcpconv.NewServerOperationDuration(m, bounds); err != nil {
		return nil, err
	}
	if in.client, err = mcpconv.NewClientOperationDuration(m, bounds); err != nil {
		return nil, err
	}
	counters := []struct {
		c                       *metric.Int64Counter
		name, unit, description string
	}{
		{&in.decisions, MetricDecisions, "{decision}", "Permission decisions on tool calls, by outcome."},
		{&in.reconnects, MetricReconnects, "{reconnect}", "Reconnections to upstream MCP servers."},
		{&in.pluginRestarts, MetricPluginRestarts, "{restart}", "Restarts of plugin processes."},
		{&in.tokenRefreshes, MetricTokenRefreshes, "{refresh}", "OAuth token refreshes for upstream servers, by outcome."},
		{&in.reloads, MetricReloads, "{reload}", "Configuration reloads, by outcome."},
	}
	for _, c := range counters {
		if *c.c, err = m.Int64Counter(c.name, metric.WithUnit(c.unit), metric.WithDescription(c.description)); err != nil {
			return nil, err
		}
	}
	if _, err = m.Int64ObservableUpDownCounter(MetricConnections,
		metric.WithUnit("{connection}"),
		metric.WithDescription("Upstream MCP server connections, by state."),
		metric.WithInt64Callback(observe)); err != nil {
		return nil, err
	}
	return in, nil
}

// RecordRequest records a downstream request's duration d in
// mcp.server.operation.duration: method is mcp.method.name (MethodOther
// unless a known MCP method), target the
// tool (tools/call) or prompt (prompts/get) name, errType its error class
// ("" for success; see ErrorType).
func (t *Telemetry) RecordRequest(ctx context.Context, method, target string, d time.Duration, errType string) {
	if t == nil || t.inst == nil {
		return
	}
	method = methodName(method)
	opts := t.options(setKey{setRequest, method, target, errType})
	t.inst.server.Inst().Record(ctx, d.Seconds(), opts.record...)
}

// RecordCall records a tool call sent to upstream server (from sending the
// request to its response) in mcp.client.operation.duration, by server and
// tool (the registry's canonical name) and error class errType ("" for
// success, ErrorTypeToolError for a result with isError). Its count is the
// number of calls; with error.type set, the number of errors.
func (t *Telemetry) RecordCall(ctx context.Context, server, tool string, d time.Duration, errType string) {
	if t == nil || t.inst == nil {
		return
	}
	opts := t.options(setKey{setCall, server, tool, errType})
	t.inst.client.Inst().Record(ctx, d.Seconds(), opts.record...)
}

// RecordDecision counts a permission decision by its outcome ("allow",
// "deny", "ask", …).
func (t *Telemetry) RecordDecision(ctx context.Context, outcome string) {
	if t == nil || t.inst == nil {
		return
	}
	opts := t.options(setKey{kind: setDecision, a: outcome})
	t.inst.decisions.Add(ctx, 1, opts.add...)
}

// RecordReconnect counts a reconnection to upstream server.
func (t *Telemetry) RecordReconnect(ctx context.Context, server string) {
	if t == nil || t.inst == nil {
		return
	}
	t.inst.reconnects.Add(ctx, 1, metric.WithAttributes(AttrServerName.String(server)))
}

// RecordPluginRestart counts a restart of plugin's process.
func (t *Telemetry) RecordPluginRestart(ctx context.Context, plugin string) {
	if t == nil || t.inst == nil {
		return
	}
	t.inst.pluginRestarts.Add(ctx, 1, metric.WithAttributes(AttrPluginName.String(plugin)))
}

// RecordTokenRefresh counts an OAuth token refresh for upstream server by
// its outcome ("ok", "failed", …; never the token).
func (t *Telemetry) RecordTokenRefresh(ctx context.Context, server, outcome string) {
	if t == nil || t.inst == nil {
		return
	}
	t.inst.tokenRefreshes.Add(ctx, 1, metric.WithAttributes(AttrServerName.String(server), AttrOutcome.String(outcome)))
}

// RecordReload counts a configuration reload by its outcome
// (ReloadApplied, ReloadRejected, ReloadUnchanged).
func (t *Telemetry) RecordReload(ctx context.Context, outcome string) {
	if t == nil || t.inst == nil {
		return
	}
	t.inst.reloads.Add(ctx, 1, metric.WithAttributes(AttrOutcome.String(outcome)))
}

// ObserveConnections sets f as the source of the connection gauge: at
// each collection f yields the number of connections in each state. A
// later call replaces f; nil removes it. f may be called concurrently (by
// a Prometheus scrape and an OTLP export) and must not block.
func (t *Telemetry) ObserveConnections(f func(yield func(state string, n int))) {
	if t == nil || t.inst == nil {
		return
	}
	if f == nil {
		t.conns.Store(nil)
		return
	}
	t.conns.Store(&f)
}

// observeConnections is the connection gauge's callback.
func (t *Telemetry) observeConnections(_ context.Context, o metric.Int64Observer) error {
	f := t.conns.Load()
	if f == nil {
		return nil
	}
	(*f)(func(state string, n int) {
		o.Observe(int64(n), metric.WithAttributes(AttrConnectionState.String(state)))
	})
	return nil
}
