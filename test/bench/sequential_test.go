package bench

import "testing"

// One caller, each call after the previous one's answer: the hop's own
// latency and CPU per call. With 8 callers on two cores the p50 is mostly
// queueing for the CPU and the hop's wake-ups are shared by the calls in
// flight, which hides part of what the process in the middle adds; an
// independent harness that runs sequential calls as well as concurrent ones
// sees that part. scripts/bench.sh runs these with their own call count.

// BenchmarkServeDirect1 is BenchmarkServeDirect8 with one caller.
func BenchmarkServeDirect1(b *testing.B) { serveDirect(b, newVersion, 1) }

// BenchmarkServeFloor1 is BenchmarkServeFloor8 with one caller.
func BenchmarkServeFloor1(b *testing.B) { serveFloor(b, newVersion, 1) }

// (BenchmarkServeGateway1, with the telemetry benchmarks, is the gateway.)

// BenchmarkServeDirectOld1 is BenchmarkServeDirectOld8 with one caller.
func BenchmarkServeDirectOld1(b *testing.B) { serveDirect(b, oldVersion, 1) }

// BenchmarkServeFloorOld1 is BenchmarkServeFloorOld8 with one caller.
func BenchmarkServeFloorOld1(b *testing.B) { serveFloor(b, oldVersion, 1) }

// BenchmarkServeGatewayOld1 is BenchmarkServeGatewayOld8 with one caller.
func BenchmarkServeGatewayOld1(b *testing.B) {
	serveGateway(b, oldVersion, gatewayConfig(b, 1), 1)
}

// BenchmarkHTTPDirect1 is BenchmarkHTTPDirect8 with one caller.
func BenchmarkHTTPDirect1(b *testing.B) { httpDirect(b, 1) }

// BenchmarkHTTPGateway1 is BenchmarkHTTPGateway8 with one caller.
func BenchmarkHTTPGateway1(b *testing.B) { httpGateway(b, gatewayConfig(b, 1), 1) }

// BenchmarkHTTPGatewayTel1 is BenchmarkHTTPGatewayTel8 with one caller.
func BenchmarkHTTPGatewayTel1(b *testing.B) { httpGateway(b, telemetryConfig(b), 1) }

// BenchmarkHTTPDirectNew1 is BenchmarkHTTPDirectNew8 with one caller.
func BenchmarkHTTPDirectNew1(b *testing.B) { httpDirectNew(b, 1) }

// BenchmarkHTTPUpstream1 is BenchmarkHTTPUpstream8 with one caller.
func BenchmarkHTTPUpstream1(b *testing.B) { httpUpstream(b, 1) }
