package auth

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestCallbackOneShot(t *testing.T) {
	cb, err := listenCallback(0)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.close()
	if !strings.HasPrefix(cb.RedirectURL(), "http://127.0.0.1:") {
		t.Fatalf("redirect URL %s is not on 127.0.0.1", cb.RedirectURL())
	}
	cb.expect("good-state")
	get := func(q string) int {
		resp, err := http.Get(cb.RedirectURL() + "?" + q)
		if err != nil {
			return 0 // closed after use
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := get("code=x&state=wrong"); c != http.StatusBadRequest {
		t.Errorf("wrong state: %d, want 400", c)
	}
	if c := get("code=x&state=good-state"); c != http.StatusOK {
		t.Errorf("good callback: %d", c)
	}
	res, err := cb.wait(context.Background())
	if err != nil || res.Code != "x" {
		t.Fatalf("wait = %v, %v", res, err)
	}
	if c := get("code=y&state=good-state"); c == http.StatusOK {
		t.Errorf("replayed callback accepted")
	}
}
