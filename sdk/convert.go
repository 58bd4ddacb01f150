package sdk

import (
	"slices"
	"time"

	pb "github.com/mcphost/mcphost/sdk/internal/pluginpb/v1"
)

// Conversions between the SDK's types and the protocol's, all in one place.

func infoToPB(i *Info) *pb.GetInfo_Response {
	out := &pb.GetInfo_Response{Name: i.Name, Version: i.Version}
	for _, c := range i.Transports {
		out.Transports = append(out.Transports, componentToPB(&c))
	}
	for _, c := range i.AuthSchemes {
		out.AuthSchemes = append(out.AuthSchemes, componentToPB(&c))
	}
	if i.Headers != nil {
		out.Headers = componentToPB(i.Headers)
	}
	if i.Interceptor != nil {
		out.Interceptor = componentToPB(i.Interceptor)
	}
	return out
}

func infoFromPB(r *pb.GetInfo_Response) *Info {
	out := &Info{Name: r.GetName(), Version: r.GetVersion()}
	for _, c := range r.GetTransports() {
		out.Transports = append(out.Transports, componentFromPB(c))
	}
	for _, c := range r.GetAuthSchemes() {
		out.AuthSchemes = append(out.AuthSchemes, componentFromPB(c))
	}
	if r.GetHeaders() != nil {
		c := componentFromPB(r.GetHeaders())
		out.Headers = &c
	}
	if r.GetInterceptor() != nil {
		c := componentFromPB(r.GetInterceptor())
		out.Interceptor = &c
	}
	return out
}

func componentToPB(c *Component) *pb.Component {
	out := &pb.Component{Name: c.Name, Description: c.Description}
	for _, a := range c.Config {
		out.Config = append(out.Config, &pb.Attribute{Name: a.Name, Type: pb.Attribute_Type(a.Type), Required: a.Required, Sensitive: a.Sensitive, Description: a.Description})
	}
	return out
}

func componentFromPB(c *pb.Component) Component {
	out := Component{Name: c.GetName(), Description: c.GetDescription()}
	for _, a := range c.GetConfig() {
		out.Config = append(out.Config, Attribute{Name: a.GetName(), Type: AttrType(a.GetType()), Required: a.GetRequired(), Sensitive: a.GetSensitive(), Description: a.GetDescription()})
	}
	return out
}

func diagsToPB(ds Diagnostics) []*pb.Diagnostic {
	var out []*pb.Diagnostic
	for _, d := range ds {
		out = append(out, &pb.Diagnostic{Severity: pb.Diagnostic_Severity(d.Severity), Summary: d.Summary, Detail: d.Detail, Attribute: d.Attribute})
	}
	return out
}

func diagsFromPB(ds []*pb.Diagnostic) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		out = append(out, Diagnostic{Severity: Severity(d.GetSeverity()), Summary: d.GetSummary(), Detail: d.GetDetail(), Attribute: d.GetAttribute()})
	}
	return out
}

func openToPB(r *OpenRequest) *pb.Open {
	out := &pb.Open{Transport: r.Transport, ServerName: r.ServerName, Url: r.URL, Headers: r.Headers, ProxyUrl: r.ProxyURL, ConfigJson: r.Config}
	if r.TLS != nil {
		out.Tls = &pb.TLS{CaPem: r.TLS.CAPEM, ClientCertPem: r.TLS.ClientCertPEM, ClientKeyPem: r.TLS.ClientKeyPEM, ServerName: r.TLS.ServerName, InsecureSkipVerify: r.TLS.InsecureSkipVerify}
	}
	return out
}

func openFromPB(o *pb.Open) *OpenRequest {
	out := &OpenRequest{Transport: o.GetTransport(), ServerName: o.GetServerName(), URL: o.GetUrl(), Headers: o.GetHeaders(), ProxyURL: o.GetProxyUrl(), Config: o.GetConfigJson()}
	if t := o.GetTls(); t != nil {
		out.TLS = &TLSConfig{CAPEM: t.GetCaPem(), ClientCertPEM: t.GetClientCertPem(), ClientKeyPEM: t.GetClientKeyPem(), ServerName: t.GetServerName(), InsecureSkipVerify: t.GetInsecureSkipVerify()}
	}
	return out
}

func transportErrorToPB(e *TransportError) *pb.TransportError {
	return &pb.TransportError{Code: pb.TransportError_Code(e.Code), Message: e.Message, HttpStatus: int32(e.HTTPStatus), WwwAuthenticate: e.WWWAuthenticate}
}

func transportErrorFromPB(e *pb.TransportError) *TransportError {
	code := ErrorCode(e.GetCode())
	if code < CodeOther || code > CodeAuth {
		code = CodeOther
	}
	return &TransportError{Code: code, Message: e.GetMessage(), HTTPStatus: int(e.GetHttpStatus()), WWWAuthenticate: e.GetWwwAuthenticate()}
}

func serverRefToPB(s *ServerRef) *pb.ServerRef {
	return &pb.ServerRef{Scheme: s.Scheme, ServerName: s.ServerName, ServerUrl: s.ServerURL, ConfigJson: s.Config, IdpJson: s.IdP, SavedState: s.SavedState, Principal: principalToPB(s.Principal)}
}

func serverRefFromPB(s *pb.ServerRef) ServerRef {
	return ServerRef{Scheme: s.GetScheme(), ServerName: s.GetServerName(), ServerURL: s.GetServerUrl(), Config: s.GetConfigJson(), IdP: s.GetIdpJson(), SavedState: s.GetSavedState(), Principal: principalFromPB(s.GetPrincipal())}
}

// principalToPB and principalFromPB keep nil as nil (the host's own user)
// and copy Groups, so that neither side shares the other's slice.
func principalToPB(p *Principal) *pb.Principal {
	if p == nil {
		return nil
	}
	return &pb.Principal{Issuer: p.Issuer, Subject: p.Subject, Groups: slices.Clone(p.Groups), Token: p.Token}
}

func principalFromPB(p *pb.Principal) *Principal {
	if p == nil {
		return nil
	}
	return &Principal{Issuer: p.GetIssuer(), Subject: p.GetSubject(), Groups: slices.Clone(p.GetGroups()), Token: p.GetToken()}
}

func millisToTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func timeToMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// interceptRequestToPB never sends the principal's token: an interceptor
// decides on who calls, it does not act as them.
func interceptRequestToPB(r *InterceptRequest) *pb.Intercept_Request {
	out := &pb.Intercept_Request{Interceptor: r.Interceptor, Event: r.Event, Phase: pb.Intercept_Phase(r.Phase), PayloadJson: r.Payload, ConfigJson: r.Config, ServerName: r.ServerName, Name: r.Name, RequestJson: r.Request}
	if p := principalToPB(r.Principal); p != nil {
		p.Token = ""
		out.Principal = p
	}
	return out
}

func interceptRequestFromPB(r *pb.Intercept_Request) *InterceptRequest {
	out := &InterceptRequest{Interceptor: r.GetInterceptor(), Event: r.GetEvent(), Phase: InterceptPhase(r.GetPhase()), Payload: r.GetPayloadJson(), Config: r.GetConfigJson(), ServerName: r.GetServerName(), Name: r.GetName(), Request: r.GetRequestJson(), Principal: principalFromPB(r.GetPrincipal())}
	if out.Principal != nil {
		out.Principal.Token = ""
	}
	return out
}

// interceptResponseToPB sends a response without an action as PASS.
func interceptResponseToPB(r *InterceptResponse) *pb.Intercept_Response {
	a := r.Action
	if a == 0 {
		a = ActionPass
	}
	return &pb.Intercept_Response{Action: pb.Intercept_Action(a), Reason: r.Reason, PayloadJson: r.Payload, Diagnostics: diagsToPB(r.Diagnostics)}
}

// interceptResponseFromPB reads an unspecified action as ActionPass and
// keeps an unknown one as it is (the host treats it as a failure).
func interceptResponseFromPB(r *pb.Intercept_Response) *InterceptResponse {
	a := InterceptAction(r.GetAction())
	if a == 0 {
		a = ActionPass
	}
	return &InterceptResponse{Action: a, Reason: r.GetReason(), Payload: r.GetPayloadJson(), Diagnostics: diagsFromPB(r.GetDiagnostics())}
}
