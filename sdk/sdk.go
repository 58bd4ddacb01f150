package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-plugin"
)

// ProtocolVersion is the version of the plugin protocol this package speaks
// (the proto package mcphost.plugin.v1). A test keeps it equal to the version
// stated in sdk/proto/mcphost/plugin/v1/plugin.proto.
const ProtocolVersion = 1

// Handshake is the go-plugin handshake shared by the host and every plugin.
// The magic cookie only tells a user who runs a plugin by hand that it is a
// plugin; it is not a security measure (AutoMTLS and checksums are).
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "MCPHOST_PLUGIN",
	MagicCookieValue: "d7f3c0de-mcphost-plugin",
}

// Names of the go-plugin plugins in a PluginSet.
const (
	KindInfo        = "info"
	KindTransport   = "transport"
	KindAuth        = "auth"
	KindHeaders     = "headers"
	KindInterceptor = "interceptor"
)

// Info describes a plugin: what it provides and the configuration each part takes.
type Info struct {
	Name    string
	Version string
	// Transports lists the transports the plugin serves (e.g. "ws").
	Transports []Component
	// AuthSchemes lists the auth schemes the plugin serves (e.g. "xaa").
	AuthSchemes []Component
	// Headers is set if the plugin is a headers helper.
	Headers *Component
	// Interceptor is set if the plugin is an interceptor; its Config is the
	// schema of the options of the user's interceptor blocks.
	Interceptor *Component
}

// Component is one transport, auth scheme, headers helper or interceptor of
// a plugin.
type Component struct {
	Name        string
	Description string
	// Config lists the attributes the component accepts in the user's HCL.
	Config []Attribute
}

// AttrType is the type of a configuration attribute.
type AttrType int

// Attribute types.
const (
	TypeString AttrType = iota + 1
	TypeNumber
	TypeBool
	TypeListOfString
	TypeMapOfString
)

// Attribute is one configuration attribute of a component.
type Attribute struct {
	Name        string
	Type        AttrType
	Required    bool
	Sensitive   bool
	Description string
}

// Severity of a diagnostic.
type Severity int

// Severities.
const (
	SeverityError Severity = iota + 1
	SeverityWarning
)

// Diagnostic is a problem a user can act on, returned by a plugin in a
// response (as opposed to an error, which means the plugin broke).
type Diagnostic struct {
	Severity Severity
	Summary  string
	Detail   string
	// Attribute names the configuration attribute concerned, if any.
	Attribute string
}

// Diagnostics is a list of diagnostics.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Err returns the error diagnostics as one error, or nil.
func (ds Diagnostics) Err() error {
	var msgs []string
	for _, d := range ds {
		if d.Severity != SeverityError {
			continue
		}
		m := d.Summary
		if d.Detail != "" {
			m += ": " + d.Detail
		}
		if d.Attribute != "" {
			m = d.Attribute + ": " + m
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

// Errorf returns an error diagnostic.
func Errorf(attribute, summary, detailFormat string, args ...any) Diagnostic {
	return Diagnostic{Severity: SeverityError, Attribute: attribute, Summary: summary, Detail: fmt.Sprintf(detailFormat, args...)}
}

// DecodeConfig decodes a component's JSON configuration into v (a pointer to a
// struct with json tags), reporting problems as diagnostics.
func DecodeConfig(raw json.RawMessage, v any) Diagnostics {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Diagnostics{Errorf("", "Invalid plugin configuration", "%v", err)}
	}
	return nil
}
