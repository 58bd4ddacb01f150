package ratelimit

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseRate: ParseRate never panics, and what it accepts is a positive
// finite rate written N/unit; what it refuses, it says how to write.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"20/s", "100/m", "5000/h", "2.5/s", "0/s", "1e3/s", "Inf/s", "/s", "20", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			if !strings.Contains(err.Error(), "N/s, N/m or N/h") && !strings.Contains(err.Error(), "positive") && !strings.Contains(err.Error(), "too small") {
				t.Fatalf("ParseRate(%q): an unhelpful error %v", s, err)
			}
			return
		}
		if f := float64(r); !(f > 0) || math.IsInf(f, 0) {
			t.Fatalf("ParseRate(%q) = %v", s, r)
		}
		if strings.Count(s, "/") != 1 {
			t.Fatalf("ParseRate(%q) accepted", s)
		}
	})
}
