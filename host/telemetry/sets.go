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

// setOptions are the measurement options of one attribute set, as the
// variadic arguments of Record and Add: passing a slice made once costs no
// allocation, where a single option is put in a new slice per call.
type setOptions struct {
	record []metric.RecordOption
	add    []metric.AddOption
}

// setCache holds the measurement options (a precomputed attribute set) of
// each combination of attribute values the per-call metrics have seen:
// building a set sorts, deduplicates and hashes its attributes on every
// measurement otherwise, which is most of a measurement's cost on the
// gateway's hot path.
type setCache = boundedCache[setKey, setOptions]

// options returns the measurement options of k's attributes, built on
// first use.
func (t *Telemetry) options(k setKey) setOptions {
	return t.sets.get(k, func() setOptions {
		o := metric.WithAttributeSet(attribute.NewSet(k.attrs()...))
		return setOptions{record: []metric.RecordOption{o}, add: []metric.AddOption{o}}
	})
}

// boundedCache is a map of values built on first use, of at most
// maxCachedSets entries (past the bound, values are built per use). Its
// keys come from the registry and fixed lists, and, bounded, from what
// clients send (see maxCachedSets). It is safe for concurrent use.
type boundedCache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// get returns k's value, built by build if it is not cached.
func (c *boundedCache[K, V]) get(k K, build func() V) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = build()
	c.mu.Lock()
	if len(c.m) < maxCachedSets {
		if c.m == nil {
			c.m = make(map[K]V)
		}
		c.m[k] = v
	}
	c.mu.Unlock()
	return v
}

// len returns the number of cached values.
func (c *boundedCache[K, V]) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
