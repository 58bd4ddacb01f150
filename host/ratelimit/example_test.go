package ratelimit_test

import (
	"fmt"

	"github.com/mcphost/mcphost/host/ratelimit"
)

// A gateway admits each request of a principal through Acquire, and
// answers 429 with a Retry-After header when it is refused.
func Example() {
	r, err := ratelimit.ParseRate("20/s")
	if err != nil {
		panic(err)
	}
	l := ratelimit.New(ratelimit.Options{Rate: r, Burst: 2, MaxConcurrent: 16})
	for i := range 3 {
		release, retryAfter, reason, ok := l.Acquire("https://as.example.com alice")
		if !ok {
			fmt.Printf("request %d: 429 (%v), Retry-After: %d\n", i, reason, ratelimit.RetryAfterSeconds(retryAfter))
			continue
		}
		fmt.Printf("request %d: served\n", i)
		release()
	}
	// Output:
	// request 0: served
	// request 1: served
	// request 2: 429 (rate limit exceeded), Retry-After: 1
}

func ExampleParseRate() {
	for _, s := range []string{"20/s", "100/m", "2.5/s", "20 per second"} {
		r, err := ratelimit.ParseRate(s)
		fmt.Println(float64(r), err)
	}
	// Output:
	// 20 <nil>
	// 1.6666666666666667 <nil>
	// 2.5 <nil>
	// 0 rate "20 per second": want N/s, N/m or N/h with N a positive number, such as "20/s", "100/m", "5000/h" or "2.5/s"
}
