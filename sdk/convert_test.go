package sdk

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPrincipalConversionCopiesGroups: the protocol message and the SDK's
// Principal never share a Groups slice, in either direction, and nil stays
// nil.
func TestPrincipalConversionCopiesGroups(t *testing.T) {
	t.Parallel()
	if serverRefToPB(&ServerRef{}).GetPrincipal() != nil {
		t.Error("no principal became one in the protocol message")
	}
	if serverRefFromPB(serverRefToPB(&ServerRef{})).Principal != nil {
		t.Error("no principal became one after the round trip")
	}

	in := &ServerRef{Principal: &Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"eng"}, Token: "tok"}}
	msg := serverRefToPB(in)
	msg.Principal.Groups[0] = "changed"
	if in.Principal.Groups[0] != "eng" {
		t.Error("serverRefToPB shares the caller's Groups")
	}
	msg.Principal.Groups[0] = "eng"
	out := serverRefFromPB(msg)
	if diff := cmp.Diff(in, &out); diff != "" {
		t.Errorf("round trip (-in +out):\n%s", diff)
	}
	out.Principal.Groups[0] = "changed"
	if msg.Principal.Groups[0] != "eng" {
		t.Error("serverRefFromPB shares the message's Groups")
	}
}
