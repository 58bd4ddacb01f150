package telemetry

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// batchRecorder is a span exporter that records the size of each batch
// it is given and, while gate is set, blocks each export until gate is
// closed.
type batchRecorder struct {
	mu       sync.Mutex
	batches  []int
	gate     chan struct{}
	shutdown bool
}

func (r *batchRecorder) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, len(spans))
	return nil
}

func (r *batchRecorder) Shutdown(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shutdown = true
	return nil
}

func (r *batchRecorder) got() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.batches...)
}

// recordOnly records every span without sampling it: OnEnd sees spans
// that must not be exported.
type recordOnly struct{}

func (recordOnly) ShouldSample(sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return sdktrace.SamplingResult{Decision: sdktrace.RecordOnly}
}

func (recordOnly) Description() string { return "RecordOnly" }

// TestBatcher checks that the batcher exports as the SDK's batch span
// processor does: full batches at once, the rest after the delay or on
// ForceFlush and Shutdown, a full queue drops spans, unsampled spans and
// spans ended after Shutdown are not exported. The goroutine and its timer
// run in a synctest bubble: time passes only when everything waits.
func TestBatcher(t *testing.T) {
	t.Parallel()
	const delay = time.Minute
	o := batchOptions{maxQueue: 6, maxBatch: 3, delay: delay, timeout: time.Second}
	for _, tc := range []struct {
		name string
		// run ends spans with end and drives b; it returns the batches
		// it expects exported.
		run func(t *testing.T, b *batcher, r *batchRecorder, end func(n int)) []int
	}{
		{"a full batch is exported at once", func(t *testing.T, b *batcher, r *batchRecorder, end func(int)) []int {
			for range 2 {
				end(3)
				synctest.Wait()
			}
			end(1) // (waits for the delay)
			synctest.Wait()
			return []int{3, 3}
		}},
		{"the rest after the delay", func(t *testing.T, b *batcher, r *batchRecorder, end func(int)) []int {
			end(2)
			synctest.Wait()
			if got := r.got(); len(got) != 0 {
				t.Errorf("exported %v before the delay", got)
			}
			time.Sleep(delay)
			synctest.Wait()
			return []int{2}
		}},
		{"ForceFlush exports everything queued", func(t *testing.T, b *batcher, r *batchRecorder, end func(int)) []int {
			end(2)
			if err := b.ForceFlush(t.Context()); err != nil {
				t.Fatal(err)
			}
			return []int{2}
		}},
		{"a full queue drops spans", func(t *testing.T, b *batcher, r *batchRecorder, end func(int)) []int {
			r.gate = make(chan struct{})
			end(3) // a full batch: its export blocks
			synctest.Wait()
			end(8) // six fit in the queue
			close(r.gate)
			if err := b.ForceFlush(t.Context()); err != nil {
				t.Fatal(err)
			}
			return []int{3, 3, 3}
		}},
		{"Shutdown exports what is queued, then nothing", func(t *testing.T, b *batcher, r *batchRecorder, end func(int)) []int {
			end(2)
			if err := b.Shutdown(t.Context()); err != nil {
				t.Fatal(err)
			}
			if !r.shutdown {
				t.Error("the exporter was not shut down")
			}
			end(5)
			if err := b.ForceFlush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := b.Shutdown(t.Context()); err != nil {
				t.Errorf("second Shutdown: %v", err)
			}
			return []int{2}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &batchRecorder{}
				b := newBatcher(r, o)
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b), sdktrace.WithSampler(sdktrace.AlwaysSample()))
				defer tp.Shutdown(context.Background())
				tracer := tp.Tracer("test")
				end := func(n int) {
					for range n {
						_, s := tracer.Start(context.Background(), "s")
						s.End()
					}
				}
				want := tc.run(t, b, r, end)
				if diff := cmp.Diff(want, r.got()); diff != "" {
					t.Errorf("batches exported (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestBatcherUnsampled checks that a span recorded but not sampled is not
// exported.
func TestBatcherUnsampled(t *testing.T) {
	t.Parallel()
	r := &batchRecorder{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(newBatcher(r, defaultBatch)), sdktrace.WithSampler(recordOnly{}))
	_, s := tp.Tracer("test").Start(context.Background(), "s")
	if !s.IsRecording() {
		t.Fatal("the span is not recorded")
	}
	s.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.got(); len(got) != 0 {
		t.Errorf("exported %v", got)
	}
}

// TestBatchFor checks the OTEL_BSP_* variables, read as the SDK reads
// them: positive integers only, a batch no larger than the queue.
func TestBatchFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want batchOptions
	}{
		{"defaults", nil, batchOptions{maxQueue: 2048, maxBatch: 512, delay: 5 * time.Second, timeout: 30 * time.Second}},
		{"all set", map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "10", "OTEL_BSP_SCHEDULE_DELAY": "250", "OTEL_BSP_EXPORT_TIMEOUT": "1000"},
			batchOptions{maxQueue: 100, maxBatch: 10, delay: 250 * time.Millisecond, timeout: time.Second}},
		{"batch capped by queue", map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "100"}, batchOptions{maxQueue: 100, maxBatch: 100, delay: 5 * time.Second, timeout: 30 * time.Second}},
		{"bad values ignored", map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "-1", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "x", "OTEL_BSP_SCHEDULE_DELAY": "0", "OTEL_BSP_EXPORT_TIMEOUT": "1.5"},
			batchOptions{maxQueue: 2048, maxBatch: 512, delay: 5 * time.Second, timeout: 30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := resolve(&Options{Traces: true, LookupEnv: envOf(tc.env)})
			if err != nil {
				t.Fatal(err)
			}
			if p.batch != tc.want {
				t.Errorf("got %+v, want %+v", p.batch, tc.want)
			}
		})
	}
}
