package telemetry

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// maxCachedSets bounds a setCache: the values come from the registry
// (servers, tools) and from a fixed list of outcomes and error classes,
// but a tool name a client sends for a tool that does not exist reaches a
// request metric too, so a client could otherwise grow the cache without
// bound. Past the bound, sets are built per measurement (the cost of no
// cache, nothing lost).
const maxCachedSets = 4096

// setKey identifies the attributes of one measurement: the metric (kind)
// and up to three attribute values, as attrs says.
type setKey struct {
	kind    uint8
	a, b, c string
}

// The metric kinds of a setKey.
const (
	setRequest  uint8 = iota + 1 // a: method, b: target, c: error.type
	setCall                      // a: server, b: tool, c: error.type
	setDecision                  // a: outcome
)

// attrs returns the attributes k stands for.
func (k setKey) attrs() []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 5)
	errType := ""
	switch k.kind {
	case setRequest:
		attrs = append(attrs, semconv.McpMethodNameKey.String(k.a))
		attrs = appendTarget(attrs, k.a, k.b)
		errType = k.c
	case setCall:
		attrs = append(attrs, semconv.McpMethodNameKey.String(MethodToolsCall))
		attrs = appendTarget(attrs, MethodToolsCall, k.b)
		attrs = append(attrs, AttrServerName.String(k.a))
		errType = k.c
	case setDecision:
		attrs = append(attrs, AttrOutcome.String(k.a))
	}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	return attrs
}

// setCache holds the measurement option (a precomputed attribute set) of
// each combination of attribute values the per-call metrics have seen:
// building a set sorts, deduplicates and hashes its attributes on every
// measurement otherwise, which is most of a measurement's cost on the
// gateway's hot path.
type setCache struct {
	mu   sync.RWMutex
	opts map[setKey]metric.MeasurementOption
}

// option returns the option of k's attributes, built on first use.
func (c *setCache) option(k setKey) metric.MeasurementOption {
	c.mu.RLock()
	o, ok := c.opts[k]
	c.mu.RUnlock()
	if ok {
		return o
	}
	o = metric.WithAttributeSet(attribute.NewSet(k.attrs()...))
	c.mu.Lock()
	if len(c.opts) < maxCachedSets {
		if c.opts == nil {
			c.opts = make(map[setKey]metric.MeasurementOption)
		}
		c.opts[k] = o
	}
	c.mu.Unlock()
	return o
}
