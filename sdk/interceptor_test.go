package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/sdktest"
)

// recordingInterceptor answers from its table by the request's Name and
// keeps the last request it got.
type recordingInterceptor struct {
	got chan *sdk.InterceptRequest
}

func (r *recordingInterceptor) Intercept(_ context.Context, req *sdk.InterceptRequest) (*sdk.InterceptResponse, error) {
	r.got <- req
	switch req.Name {
	case "deny":
		return &sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "no"}, nil
	case "mutate":
		return &sdk.InterceptResponse{Action: sdk.ActionMutate, Payload: json.RawMessage(`{"x":"[REDACTED]"}`)}, nil
	case "diag":
		return &sdk.InterceptResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf("deny_arguments", "Invalid regular expression", "missing )")}}, nil
	case "nil":
		return nil, nil
	case "broken":
		return nil, errors.New("exploded")
	}
	return &sdk.InterceptResponse{}, nil
}

// scopingInterceptor adds Scope: a config {"request":true} needs the
// request phase only; {"bad":true} is a diagnostic.
type scopingInterceptor struct{ recordingInterceptor }

func (scopingInterceptor) Scope(_ context.Context, config json.RawMessage) (bool, bool, sdk.Diagnostics) {
	var c struct{ Request, Bad bool }
	if d := sdk.DecodeConfig(config, &c); d != nil {
		return false, false, d
	}
	if c.Bad {
		return false, false, sdk.Diagnostics{sdk.Errorf("bad", "Bad", "bad")}
	}
	return c.Request, !c.Request, nil
}

var interceptorInfo = sdk.Info{Name: "guard", Version: "1.0.0", Interceptor: &sdk.Component{Name: "guard", Config: []sdk.Attribute{{Name: "deny_arguments", Type: sdk.TypeListOfString}}}}

// TestInterceptorThroughGRPC: every request field reaches the plugin (the
// principal's token never does), and every response part comes back.
func TestInterceptorThroughGRPC(t *testing.T) {
	t.Parallel()
	impl := &recordingInterceptor{got: make(chan *sdk.InterceptRequest, 1)}
	ic := sdktest.Interceptor(t, &sdk.ServeOpts{Info: interceptorInfo, Interceptor: impl})
	ctx := context.Background()
	base := sdk.InterceptRequest{
		Interceptor: "guard", Event: sdk.EventToolsCall, Phase: sdk.PhaseResponse,
		Payload: json.RawMessage(`{"content":[]}`), Config: json.RawMessage(`{"deny_arguments":["x"]}`),
		Request: json.RawMessage(`{"a":1}`), ServerName: "github",
		Principal: &sdk.Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"eng"}, Token: "secret-token"},
	}
	tests := []struct {
		name    string
		want    *sdk.InterceptResponse
		wantErr bool
	}{
		{"pass", &sdk.InterceptResponse{Action: sdk.ActionPass}, false},
		{"deny", &sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "no"}, false},
		{"mutate", &sdk.InterceptResponse{Action: sdk.ActionMutate, Payload: json.RawMessage(`{"x":"[REDACTED]"}`)}, false},
		{"diag", &sdk.InterceptResponse{Action: sdk.ActionPass, Diagnostics: sdk.Diagnostics{sdk.Errorf("deny_arguments", "Invalid regular expression", "missing )")}}, false},
		{"nil", &sdk.InterceptResponse{Action: sdk.ActionPass}, false},
		{"broken", nil, true},
	}
	for _, tt := range tests {
		req := base
		req.Name = tt.name
		resp, err := ic.Intercept(ctx, &req)
		if (err != nil) != tt.wantErr {
			t.Fatalf("%s: err = %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, resp, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: response (-want +got):\n%s", tt.name, diff)
		}
		got := <-impl.got
		want := req
		want.Principal = &sdk.Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"eng"}}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("%s: request (-want +got):\n%s", tt.name, diff)
		}
	}
	if base.Principal.Token != "secret-token" {
		t.Error("Intercept changed the caller's principal")
	}
}

func TestInterceptorScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	plain := sdktest.Interceptor(t, &sdk.ServeOpts{Info: interceptorInfo, Interceptor: &recordingInterceptor{}})
	scoped := sdktest.Interceptor(t, &sdk.ServeOpts{Info: interceptorInfo, Interceptor: &scopingInterceptor{}})
	tests := []struct {
		name          string
		ic            sdk.InterceptorClient
		config        string
		req, resp     bool
		wantDiagnoses bool
	}{
		{"without Scope: every phase", plain, `{}`, true, true, false},
		{"request only", scoped, `{"request":true}`, true, false, false},
		{"response only", scoped, `{}`, false, true, false},
		{"diagnostic", scoped, `{"bad":true}`, false, false, true},
		{"unknown option", scoped, `{"nope":1}`, false, false, true},
	}
	for _, tt := range tests {
		req, resp, diags, err := tt.ic.InterceptScope(ctx, json.RawMessage(tt.config))
		if err != nil || req != tt.req || resp != tt.resp || diags.HasErrors() != tt.wantDiagnoses {
			t.Errorf("%s: InterceptScope = %v, %v, %v, %v", tt.name, req, resp, diags, err)
		}
		if req2, resp2, diags2 := tt.ic.Scope(ctx, json.RawMessage(tt.config)); req2 != req || resp2 != resp || diags2.HasErrors() != tt.wantDiagnoses {
			t.Errorf("%s: Scope differs from InterceptScope", tt.name)
		}
	}
	// A failed RPC is an error, and Scope's answer to it is every phase.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, _, err := scoped.InterceptScope(cctx, nil); err == nil {
		t.Error("InterceptScope with a cancelled context: no error")
	}
	if req, resp, _ := scoped.Scope(cctx, nil); !req || !resp {
		t.Errorf("Scope after a failed RPC = %v, %v; want every phase", req, resp)
	}
}

func TestInterceptorInfo(t *testing.T) {
	t.Parallel()
	info, err := sdktest.Info(t, &sdk.ServeOpts{Info: interceptorInfo, Interceptor: &recordingInterceptor{}}).GetInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&interceptorInfo, info); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
