package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// batchOptions are a batcher's limits: those of the SDK's batch span
// processor, with its defaults and OTEL_BSP_* variables (see bspFor).
type batchOptions struct {
	maxQueue, maxBatch int           // OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE
	delay, timeout     time.Duration // OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT
}

// defaultBatch are the SDK's defaults (sdktrace.DefaultMaxQueueSize, …).
var defaultBatch = batchOptions{
	maxQueue: sdktrace.DefaultMaxQueueSize,
	maxBatch: sdktrace.DefaultMaxExportBatchSize,
	delay:    sdktrace.DefaultScheduleDelay * time.Millisecond,
	timeout:  sdktrace.DefaultExportTimeout * time.Millisecond,
}

// batcher is the span processor that batches ended spans for the
// exporter. It does what the SDK's batch span processor does — same
// limits, same variables; a sampled span is queued, up to maxQueue (more
// are dropped), and exported in batches of up to maxBatch when a batch is
// full, delay after the last export, on ForceFlush and on Shutdown — but
// its queue is a slice under a mutex, not a channel: the SDK's processor
// sends every ended span to its goroutine, waking it (a futex call and a
// thread switch) three times per tool call through the gateway, which
// cost more CPU than building the spans. The batcher wakes its goroutine
// once per full batch.
type batcher struct {
	exp sdktrace.SpanExporter
	o   batchOptions

	mu      sync.Mutex
	queue   []sdktrace.ReadOnlySpan
	spare   []sdktrace.ReadOnlySpan // the last exported batch's array, for the next queue
	stopped bool

	exporting sync.Mutex    // one export at a time (the exporter's contract)
	full      chan struct{} // a full batch is queued (buffered: one signal)
	stop      chan struct{} // closed by Shutdown
	done      chan struct{} // closed when run returns
	stopOnce  sync.Once
}

var _ sdktrace.SpanProcessor = (*batcher)(nil)

// newBatcher starts a batcher of exp; Shutdown ends its goroutine.
func newBatcher(exp sdktrace.SpanExporter, o batchOptions) *batcher {
	b := &batcher{exp: exp, o: o, full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

// run exports when a batch is full or delay has passed since the last
// export, until Shutdown.
func (b *batcher) run() {
	defer close(b.done)
	t := time.NewTimer(b.o.delay)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.full:
		case <-t.C:
		}
		if err := b.export(context.Background()); err != nil {
			otel.Handle(err)
		}
		t.Reset(b.o.delay)
	}
}

// OnStart does nothing.
func (b *batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues s if it is sampled, the queue has room and the batcher
// runs.
func (b *batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if b.stopped || len(b.queue) >= b.o.maxQueue {
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, s)
	n := len(b.queue)
	b.mu.Unlock()
	if n == b.o.maxBatch {
		select {
		case b.full <- struct{}{}:
		default: // (already signalled)
		}
	}
}

// export exports every queued span, in batches of up to maxBatch, each
// within the export timeout; it stops at the first error.
func (b *batcher) export(ctx context.Context) error {
	b.exporting.Lock()
	defer b.exporting.Unlock()
	b.mu.Lock()
	spans := b.queue
	b.queue, b.spare = b.spare[:0], nil
	b.mu.Unlock()
	var err error
	for rest := spans; len(rest) > 0 && err == nil; {
		n := min(len(rest), b.o.maxBatch)
		ectx, cancel := context.WithTimeout(ctx, b.o.timeout)
		err = b.exp.ExportSpans(ectx, rest[:n])
		cancel()
		rest = rest[n:]
	}
	clear(spans) // (the spans are the exporter's no longer)
	b.mu.Lock()
	if b.spare == nil && cap(spans) <= 2*b.o.maxQueue {
		b.spare = spans[:0]
	}
	b.mu.Unlock()
	return err
}

// ForceFlush exports the spans queued so far.
func (b *batcher) ForceFlush(ctx context.Context) error {
	b.mu.Lock()
	stopped := b.stopped
	b.mu.Unlock()
	if stopped {
		return nil
	}
	return b.export(ctx)
}

// Shutdown stops the batcher, exports what is queued, and shuts the
// exporter down. Later calls do nothing.
func (b *batcher) Shutdown(ctx context.Context) error {
	var err error
	b.stopOnce.Do(func() {
		b.mu.Lock()
		b.stopped = true // (OnEnd queues no more)
		b.mu.Unlock()
		close(b.stop)
		<-b.done
		err = errors.Join(b.export(ctx), b.exp.Shutdown(ctx))
	})
	return err
}
