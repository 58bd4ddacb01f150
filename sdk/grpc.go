package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/mcphost/mcphost/sdk/internal/pluginpb/v1"
)

// The go-plugin GRPCPlugin implementations, one per kind. On the plugin side
// they register the gRPC services over the author's implementation; on the
// host side they return clients that implement the SDK interfaces.

type infoPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	info *Info
}

func (p *infoPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterPluginServer(s, &infoServer{info: p.info})
	return nil
}

func (p *infoPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &infoClient{c: pb.NewPluginClient(c)}, nil
}

type infoServer struct {
	pb.UnimplementedPluginServer
	info *Info
}

func (s *infoServer) GetInfo(context.Context, *pb.GetInfo_Request) (*pb.GetInfo_Response, error) {
	return infoToPB(s.info), nil
}

// InfoClient is the host's view of a plugin's Plugin service.
type InfoClient interface {
	GetInfo(ctx context.Context) (*Info, error)
}

type infoClient struct{ c pb.PluginClient }

func (c *infoClient) GetInfo(ctx context.Context) (*Info, error) {
	r, err := c.c.GetInfo(ctx, &pb.GetInfo_Request{})
	if err != nil {
		return nil, err
	}
	return infoFromPB(r), nil
}

// Transport.

type transportPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl Transport
}

func (p *transportPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterTransportServer(s, &transportServer{impl: p.impl, data: &dataListener{}})
	return nil
}

func (p *transportPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &transportClient{c: pb.NewTransportClient(c)}, nil
}

// SetDataSocketDir implements DataSocketSetter.
func (c *transportClient) SetDataSocketDir(dir string) { c.dataDir = dir }

type transportServer struct {
	pb.UnimplementedTransportServer
	impl Transport
	data *dataListener
}

func (s *transportServer) Connect(stream pb.Transport_ConnectServer) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	open := first.GetOpen()
	if open == nil {
		return errors.New("the first frame of a connection must be Open")
	}
	conn, err := s.impl.Open(ctx, openFromPB(open))
	if err != nil {
		return stream.Send(&pb.Frame{Kind: &pb.Frame_Error{Error: transportErrorToPB(classify(err))}})
	}
	defer conn.Close()
	if open.GetAcceptDataSocket() && s.data.start() == nil {
		return s.serveData(stream, conn)
	}
	if err := stream.Send(&pb.Frame{Kind: &pb.Frame_Opened{Opened: &pb.Opened{}}}); err != nil {
		return err
	}
	// From the server to the host: the only goroutine that sends on stream.
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for {
			msg, err := conn.Recv(ctx)
			if err != nil {
				if !errors.Is(err, io.EOF) && ctx.Err() == nil {
					stream.Send(&pb.Frame{Kind: &pb.Frame_Error{Error: transportErrorToPB(classify(err))}})
				}
				return
			}
			if err := stream.Send(&pb.Frame{Kind: &pb.Frame_Message{Message: msg}}); err != nil {
				return
			}
		}
	}()
	// From the host to the server, until the host closes or the server ends.
	recvd := make(chan error, 1)
	go func() {
		for {
			f, err := stream.Recv()
			if err != nil {
				recvd <- err
				return
			}
			switch k := f.Kind.(type) {
			case *pb.Frame_Message:
				if err := conn.Send(ctx, k.Message); err != nil {
					recvd <- err
					return
				}
			case *pb.Frame_Close:
				recvd <- nil
				return
			}
		}
	}()
	select {
	case <-recvd:
		conn.Close()
		<-sent
	case <-sent:
	}
	return nil
}

// serveData runs a connection over the data socket: messages as frames on
// the socket, the stream only for Close and Error.
func (s *transportServer) serveData(stream pb.Transport_ConnectServer, conn Conn) error {
	ctx := stream.Context()
	token, arrived := s.data.expect()
	if err := stream.Send(&pb.Frame{Kind: &pb.Frame_Opened{Opened: &pb.Opened{DataSocket: s.data.path, DataToken: token}}}); err != nil {
		s.data.forget(token)
		return err
	}
	var dc net.Conn
	select {
	case dc = <-arrived:
	case <-ctx.Done():
		s.data.forget(token)
		return nil
	case <-time.After(10 * time.Second):
		s.data.forget(token)
		return stream.Send(&pb.Frame{Kind: &pb.Frame_Error{Error: &pb.TransportError{Code: pb.TransportError_OTHER, Message: "the host did not connect to the data socket"}}})
	}
	defer dc.Close()
	// Server to host, on the socket; a failure ends with an Error frame.
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for {
			msg, err := conn.Recv(ctx)
			if err != nil {
				if !errors.Is(err, io.EOF) && ctx.Err() == nil {
					stream.Send(&pb.Frame{Kind: &pb.Frame_Error{Error: transportErrorToPB(classify(err))}})
				}
				dc.Close()
				return
			}
			if err := writeFrame(dc, msg); err != nil {
				return
			}
		}
	}()
	// Host to server, from the socket.
	go func() {
		fr := newFrameReader(dc)
		for {
			msg, err := fr.read()
			if err != nil {
				conn.Close()
				return
			}
			if err := conn.Send(ctx, msg); err != nil {
				return
			}
		}
	}()
	// The stream carries the host's Close, or ends.
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for {
			f, err := stream.Recv()
			if err != nil || f.GetClose() != nil {
				return
			}
		}
	}()
	select {
	case <-closed:
		conn.Close()
		dc.Close()
		<-sent
	case <-sent:
	}
	return nil
}

// classify turns any error into a TransportError.
func classify(err error) *TransportError {
	var te *TransportError
	if errors.As(err, &te) {
		return te
	}
	return &TransportError{Code: CodeOther, Message: err.Error()}
}

type transportClient struct {
	c       pb.TransportClient
	dataDir string // where the plugin may put a data socket; "" disables it
}

func (c *transportClient) Open(ctx context.Context, req *OpenRequest) (Conn, error) {
	// The stream lives until Close; ctx only bounds the opening.
	sctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	stream, err := c.c.Connect(sctx)
	if err != nil {
		cancel()
		return nil, err
	}
	open := openToPB(req)
	open.AcceptDataSocket = c.dataDir != ""
	if err := stream.Send(&pb.Frame{Kind: &pb.Frame_Open{Open: open}}); err != nil {
		cancel()
		return nil, err
	}
	f, err := stream.Recv()
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	switch k := f.Kind.(type) {
	case *pb.Frame_Opened:
		if path := k.Opened.GetDataSocket(); path != "" {
			dc, err := dialData(c.dataDir, path, k.Opened.GetDataToken())
			if err != nil {
				stream.CloseSend()
				cancel()
				return nil, err
			}
			return &dataConn{clientConn: clientConn{stream: stream, cancel: cancel}, dc: dc, fr: newFrameReader(dc), fw: &frameWriter{w: dc}}, nil
		}
		return &clientConn{stream: stream, cancel: cancel}, nil
	case *pb.Frame_Error:
		cancel()
		return nil, transportErrorFromPB(k.Error)
	}
	cancel()
	return nil, errors.New("plugin answered Open with an unexpected frame")
}

// clientConn is the host's end of a plugin connection.
type clientConn struct {
	stream pb.Transport_ConnectClient
	cancel context.CancelFunc
	sendMu sync.Mutex
	once   sync.Once
}

func (c *clientConn) Recv(context.Context) ([]byte, error) {
	f, err := c.stream.Recv()
	if err != nil {
		return nil, err
	}
	switch k := f.Kind.(type) {
	case *pb.Frame_Message:
		return k.Message, nil
	case *pb.Frame_Error:
		return nil, transportErrorFromPB(k.Error)
	}
	return nil, io.EOF
}

func (c *clientConn) Send(_ context.Context, msg []byte) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.stream.Send(&pb.Frame{Kind: &pb.Frame_Message{Message: msg}})
}

func (c *clientConn) Close() error {
	c.once.Do(func() {
		c.sendMu.Lock()
		c.stream.Send(&pb.Frame{Kind: &pb.Frame_Close{Close: &pb.Close{}}})
		c.stream.CloseSend()
		c.sendMu.Unlock()
		c.cancel()
	})
	return nil
}

// dataConn is the host's end of a connection on a data socket.
type dataConn struct {
	clientConn
	dc     net.Conn
	fr     *frameReader
	fw     *frameWriter
	dcOnce sync.Once
}

func (c *dataConn) Recv(context.Context) ([]byte, error) {
	msg, err := c.fr.read()
	if err == nil {
		return msg, nil
	}
	// The socket ended: the stream says why (an Error frame), or that it was clean.
	if f, serr := c.stream.Recv(); serr == nil {
		if e := f.GetError(); e != nil {
			return nil, transportErrorFromPB(e)
		}
	} else if !errors.Is(serr, io.EOF) {
		return nil, serr
	}
	return nil, io.EOF
}

func (c *dataConn) Send(_ context.Context, msg []byte) error { return c.fw.write(msg) }

func (c *dataConn) Close() error {
	c.clientConn.Close()
	c.dcOnce.Do(func() { c.dc.Close() })
	return nil
}

// Auth.

type authPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl Auth
}

func (p *authPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterAuthServer(s, &authServer{impl: p.impl})
	return nil
}

func (p *authPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &authClient{c: pb.NewAuthClient(c)}, nil
}

type authServer struct {
	pb.UnimplementedAuthServer
	impl Auth
}

func (s *authServer) Token(ctx context.Context, r *pb.Token_Request) (*pb.Token_Response, error) {
	resp, err := s.impl.Token(ctx, &TokenRequest{Server: serverRefFromPB(r.GetServer())})
	if err != nil {
		return nil, err
	}
	return &pb.Token_Response{AccessToken: resp.AccessToken, TokenType: resp.TokenType, ExpiryUnixMillis: timeToMillis(resp.Expiry), Diagnostics: diagsToPB(resp.Diagnostics), SavedState: resp.SavedState}, nil
}

func (s *authServer) Authorize(ctx context.Context, r *pb.Authorize_Request) (*pb.Authorize_Response, error) {
	resp, err := s.impl.Authorize(ctx, &AuthorizeRequest{Server: serverRefFromPB(r.GetServer()), RequestURL: r.GetRequestUrl(), Status: int(r.GetStatus()), WWWAuthenticate: r.GetWwwAuthenticate()})
	if err != nil {
		return nil, err
	}
	out := &pb.Authorize_Response{Diagnostics: diagsToPB(resp.Diagnostics)}
	if i := resp.Interaction; i != nil {
		out.Interaction = &pb.Interaction{Id: i.ID, OpenUrl: i.OpenURL, CallbackPath: i.CallbackPath, CallbackPort: int32(i.CallbackPort)}
	}
	return out, nil
}

func (s *authServer) CompleteInteraction(ctx context.Context, r *pb.CompleteInteraction_Request) (*pb.CompleteInteraction_Response, error) {
	ia, ok := s.impl.(Interactive)
	if !ok {
		return &pb.CompleteInteraction_Response{Diagnostics: diagsToPB(Diagnostics{Errorf("", "Not interactive", "this auth plugin does not drive interactions")})}, nil
	}
	resp, err := ia.CompleteInteraction(ctx, &CompleteInteractionRequest{Server: serverRefFromPB(r.GetServer()), ID: r.GetId(), CallbackQuery: r.GetCallbackQuery(), RedirectURI: r.GetRedirectUri()})
	if err != nil {
		return nil, err
	}
	return &pb.CompleteInteraction_Response{Diagnostics: diagsToPB(resp.Diagnostics)}, nil
}

func (s *authServer) Forget(ctx context.Context, r *pb.Forget_Request) (*pb.Forget_Response, error) {
	f, ok := s.impl.(Forgetter)
	if !ok {
		return &pb.Forget_Response{}, nil // nothing held, nothing to drop
	}
	resp, err := f.Forget(ctx, &ForgetRequest{Server: serverRefFromPB(r.GetServer())})
	if err != nil {
		return nil, err
	}
	return &pb.Forget_Response{Diagnostics: diagsToPB(resp.Diagnostics)}, nil
}

// AuthClient is the host's view of an auth plugin: Auth, Interactive and
// Forgetter.
type AuthClient interface {
	Auth
	Interactive
	Forgetter
}

type authClient struct{ c pb.AuthClient }

func (c *authClient) Token(ctx context.Context, r *TokenRequest) (*TokenResponse, error) {
	resp, err := c.c.Token(ctx, &pb.Token_Request{Server: serverRefToPB(&r.Server)})
	if err != nil {
		return nil, err
	}
	return &TokenResponse{AccessToken: resp.GetAccessToken(), TokenType: resp.GetTokenType(), Expiry: millisToTime(resp.GetExpiryUnixMillis()), Diagnostics: diagsFromPB(resp.GetDiagnostics()), SavedState: resp.GetSavedState()}, nil
}

func (c *authClient) Authorize(ctx context.Context, r *AuthorizeRequest) (*AuthorizeResponse, error) {
	resp, err := c.c.Authorize(ctx, &pb.Authorize_Request{Server: serverRefToPB(&r.Server), RequestUrl: r.RequestURL, Status: int32(r.Status), WwwAuthenticate: r.WWWAuthenticate})
	if err != nil {
		return nil, err
	}
	out := &AuthorizeResponse{Diagnostics: diagsFromPB(resp.GetDiagnostics())}
	if i := resp.GetInteraction(); i != nil {
		out.Interaction = &Interaction{ID: i.GetId(), OpenURL: i.GetOpenUrl(), CallbackPath: i.GetCallbackPath(), CallbackPort: int(i.GetCallbackPort())}
	}
	return out, nil
}

func (c *authClient) Forget(ctx context.Context, r *ForgetRequest) (*ForgetResponse, error) {
	resp, err := c.c.Forget(ctx, &pb.Forget_Request{Server: serverRefToPB(&r.Server)})
	if err != nil {
		return nil, err
	}
	return &ForgetResponse{Diagnostics: diagsFromPB(resp.GetDiagnostics())}, nil
}

func (c *authClient) CompleteInteraction(ctx context.Context, r *CompleteInteractionRequest) (*CompleteInteractionResponse, error) {
	resp, err := c.c.CompleteInteraction(ctx, &pb.CompleteInteraction_Request{Server: serverRefToPB(&r.Server), Id: r.ID, CallbackQuery: r.CallbackQuery, RedirectUri: r.RedirectURI})
	if err != nil {
		return nil, err
	}
	return &CompleteInteractionResponse{Diagnostics: diagsFromPB(resp.GetDiagnostics())}, nil
}

// Headers.

type headersPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl Headers
}

func (p *headersPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterHeadersServer(s, &headersServer{impl: p.impl})
	return nil
}

func (p *headersPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &headersClient{c: pb.NewHeadersClient(c)}, nil
}

type headersServer struct {
	pb.UnimplementedHeadersServer
	impl Headers
}

func (s *headersServer) GetHeaders(ctx context.Context, r *pb.GetHeaders_Request) (*pb.GetHeaders_Response, error) {
	resp, err := s.impl.GetHeaders(ctx, &HeadersRequest{ServerName: r.GetServerName(), ServerURL: r.GetServerUrl(), Config: r.GetConfigJson()})
	if err != nil {
		return nil, err
	}
	return &pb.GetHeaders_Response{Headers: resp.Headers, Diagnostics: diagsToPB(resp.Diagnostics)}, nil
}

type headersClient struct{ c pb.HeadersClient }

func (c *headersClient) GetHeaders(ctx context.Context, r *HeadersRequest) (*HeadersResponse, error) {
	resp, err := c.c.GetHeaders(ctx, &pb.GetHeaders_Request{ServerName: r.ServerName, ServerUrl: r.ServerURL, ConfigJson: r.Config})
	if err != nil {
		return nil, err
	}
	return &HeadersResponse{Headers: resp.GetHeaders(), Diagnostics: diagsFromPB(resp.GetDiagnostics())}, nil
}

// Interceptor.

type interceptorPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl Interceptor
}

func (p *interceptorPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterInterceptorServer(s, &interceptorServer{impl: p.impl})
	return nil
}

func (p *interceptorPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &interceptorClient{c: pb.NewInterceptorClient(c)}, nil
}

type interceptorServer struct {
	pb.UnimplementedInterceptorServer
	impl Interceptor
}

func (s *interceptorServer) Intercept(ctx context.Context, r *pb.Intercept_Request) (*pb.Intercept_Response, error) {
	resp, err := s.impl.Intercept(ctx, interceptRequestFromPB(r))
	if err != nil {
		return nil, err
	}
	if resp == nil {
		resp = &InterceptResponse{}
	}
	return interceptResponseToPB(resp), nil
}

// Scope answers UNIMPLEMENTED for an Interceptor without InterceptScoper:
// the host then calls it in every phase.
func (s *interceptorServer) Scope(ctx context.Context, r *pb.Scope_Request) (*pb.Scope_Response, error) {
	sc, ok := s.impl.(InterceptScoper)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this interceptor does not scope its phases")
	}
	req, resp, diags := sc.Scope(ctx, r.GetConfigJson())
	return &pb.Scope_Response{Request: req, Response: resp, Diagnostics: diagsToPB(diags)}, nil
}

// InterceptorClient is the host's view of a plugin's Interceptor service.
type InterceptorClient interface {
	Interceptor
	InterceptScoper
	// InterceptScope is Scope with the RPC's error: err is set when the
	// plugin could not answer (it broke, or ctx ended), so that the host
	// does not keep that answer. A plugin without Scope answers every
	// phase.
	InterceptScope(ctx context.Context, config json.RawMessage) (request, response bool, diags Diagnostics, err error)
}

type interceptorClient struct{ c pb.InterceptorClient }

func (c *interceptorClient) Intercept(ctx context.Context, r *InterceptRequest) (*InterceptResponse, error) {
	resp, err := c.c.Intercept(ctx, interceptRequestToPB(r))
	if err != nil {
		return nil, err
	}
	return interceptResponseFromPB(resp), nil
}

func (c *interceptorClient) InterceptScope(ctx context.Context, config json.RawMessage) (bool, bool, Diagnostics, error) {
	resp, err := c.c.Scope(ctx, &pb.Scope_Request{ConfigJson: config})
	if status.Code(err) == codes.Unimplemented {
		return true, true, nil, nil
	}
	if err != nil {
		return false, false, nil, err
	}
	return resp.GetRequest(), resp.GetResponse(), diagsFromPB(resp.GetDiagnostics()), nil
}

// Scope implements InterceptScoper; a failed RPC answers every phase.
func (c *interceptorClient) Scope(ctx context.Context, config json.RawMessage) (bool, bool, Diagnostics) {
	req, resp, diags, err := c.InterceptScope(ctx, config)
	if err != nil {
		return true, true, nil
	}
	return req, resp, diags
}

var (
	_ InterceptorClient = (*interceptorClient)(nil)
	_ Transport         = (*transportClient)(nil)
	_ AuthClient        = (*authClient)(nil)
	_ Headers           = (*headersClient)(nil)
	_ InfoClient        = (*infoClient)(nil)
	_ Conn              = (*clientConn)(nil)
	_ plugin.GRPCPlugin = (*transportPlugin)(nil)
)
