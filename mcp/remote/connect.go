package remote

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/internal/tracecontext"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/outbound"
)

// newestLegacyRevision stands for what a server without server/discover
// offers: revisions up to 2025-11-25, the last before the stateless
// protocol, all below the floor of a client that speaks only [Revision].
const newestLegacyRevision = "2025-11-25"

// WithTraceContext returns ctx carrying the W3C trace context of the run
// an exchange belongs to. Every request sent under ctx — discovery, lists,
// calls, their retries — carries it in params._meta (traceparent,
// tracestate) and in the traceparent/tracestate headers, so the server
// continues the run's trace (OpenWOP interop.md §Trace context). A
// malformed traceparent is dropped, and a tracestate travels only with a
// valid traceparent.
func WithTraceContext(ctx context.Context, tc interop.TraceContext) context.Context {
	return tracecontext.NewContext(ctx, tc)
}

// Connect opens a session with the server admitted under alias, on behalf
// of the run runID. In order:
//
//  1. the admission of alias (an unknown alias is [ErrUnknownServer]:
//     nothing outbound is ever chosen by content; admission-boundaries
//     §18.3);
//  2. the credential, resolved to know whether the exchange is
//     authenticated ([ErrCredential], [ErrCredentialExpired]);
//  3. a pinned Revision the policy would refuse whatever the server
//     offers — below the floor, not offered, below preferred for an
//     unauthenticated exchange — is refused here, recorded, and nothing is
//     sent;
//  4. server/discover at the revision asked for (the pinned one, else the
//     policy's preferred), over go-sdk's streamable client transport
//     through the egress guard, within ConnectTimeout. Whatever go-sdk
//     would send next on its own (its fallback to the legacy initialize
//     handshake) is refused before the network ([*RevisionError]);
//  5. the revision, decided by Policy.Outbound from the server's
//     supportedVersions (or the ones its -32022 names; a server without
//     server/discover offers only revisions before 2026-07-28), restricted
//     to the pinned revision, and recorded as exactly one
//     negotiation.decided on the run's log, accepted or refused (OpenWOP
//     interop.md §The audit event; requested is the revision asked for,
//     peerDigest the digest of the endpoint's origin, never its host). A
//     refusal is outbound.VersionUnsupported("mcp", runID,
//     *NegotiationError): the server then received server/discover at the
//     asked revision and nothing else.
//
// A server that never answered server/discover (unreachable, refused by
// the egress guard, an authentication challenge) ends Connect without a
// record: nothing was negotiated. [ProjectError] turns any error into the
// OpenWOP error the host renders. The caller closes the session.
//
// Unless Options.NoListChanges, a session whose server advertises
// listChanged listens for list changes from the first time it relies on
// a cached list until it is closed (see listen.go).
func (c *Client) Connect(ctx context.Context, runID, alias string) (*Session, error) {
	return c.connectRun(ctx, runID, alias, !c.opts.NoListChanges)
}

// connectRun is Connect; listen says whether the session listens for list
// changes. A session made for one call and closed after it (ToolCaller)
// does not: a stream opened and torn down per call would cost the server
// a request each time and could hear nothing the next call would use.
func (c *Client) connectRun(ctx context.Context, runID, alias string, listen bool) (*Session, error) {
	if runID == "" {
		// The record of an outbound negotiation belongs on a run's log
		// (OpenWOP interop.md §The audit event); without a run it would reach
		// no one.
		return nil, errors.New("remote: Connect needs the id of the run the exchange belongs to")
	}
	a, ok := c.Admission(alias)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownServer, alias)
	}
	return c.connect(ctx, negotiate.Scope{RunID: runID}, a, listen)
}

// connect is Connect for admission a, its record filed under scope: on
// scope.RunID's log, or as a host event of scope.Tenant for an exchange
// of no run (Review).
func (c *Client) connect(ctx context.Context, scope negotiate.Scope, a Admission, listen bool) (*Session, error) {
	alias, runID := a.Alias, scope.RunID
	a.Limits = c.limitsFor(a.Limits)
	auth, err := c.credential(ctx, &a)
	if err != nil {
		c.fault(ctx, alias, "credential", err)
		return nil, err
	}
	peer := negotiate.Peer{Authenticated: auth != nil, Origin: a.Endpoint}
	asked := c.policy.Preferred()
	if a.Revision != "" {
		asked = a.Revision
		if d := c.policy.Outbound([]string{a.Revision}, peer); !d.Accepted() {
			d.Requested = a.Revision
			return nil, c.settle(ctx, scope, alias, d, nil)
		}
	}
	dctx, slot := withFaultSlot(ctx)
	dctx, discovered := withResultSlot(dctx)
	l, connectErr := c.open(dctx, &a, asked, auth)
	offers, legacy, err := l.tap.outcome()
	if err != nil {
		l.close()
		err = slot.attach(exchangeError(alias, methodDiscover, err))
		c.fault(ctx, alias, "discover", err)
		return nil, err
	}
	if legacy {
		offers = []string{newestLegacyRevision}
	}
	if a.Revision != "" {
		offers = pinned(offers, a.Revision, c.policy.Floor())
	}
	d := c.policy.Outbound(offers, peer)
	// The host named the revision it asked for on the wire, in
	// server/discover, whatever the outcome (RFC 0242 §A.1: requested is
	// what the host asked for).
	d.Requested = asked
	if err := c.settle(ctx, scope, alias, d, l); err != nil {
		return nil, err
	}
	if connectErr != nil || l.cs.InitializeResult() == nil || l.cs.InitializeResult().ProtocolVersion != d.Version {
		// The server listed the revision, yet go-sdk did not settle on it
		// (e.g. the server's discover result was not usable). The record
		// stands; the connection does not.
		l.close()
		if connectErr == nil {
			connectErr = errors.New("remote: go-sdk did not settle on the negotiated revision")
		}
		err := exchangeError(alias, methodDiscover, connectErr)
		c.fault(ctx, alias, "discover", err)
		return nil, err
	}
	if listen {
		l.watch(alias, d.Version, l.cs.InitializeResult().Capabilities)
	}
	return &Session{
		RunID:     runID,
		Admission: a,
		Version:   d.Version,
		MaxRounds: c.maxRounds,
		call:      &sessionCaller{cs: l.cs, alias: alias},
		deps:      &sessionDeps{events: c.events, now: c.opts.Now, log: c.log},
		link:      l,
		// The last result of the connection's exchanges: server/discover
		// (a legacy server's initialize is not a discover result).
		discovered: discoveredResult(legacy, discovered),
	}, nil
}

func discoveredResult(legacy bool, slot *resultSlot) json.RawMessage {
	if legacy {
		return nil
	}
	return slot.get()
}

// settle records d under scope (on the run's log) and returns nil when it
// was accepted; a refusal closes l (when open) and is returned as
// outbound.VersionUnsupported. A record the log cannot hold fails the
// exchange: a decision that cannot be audited is not acted on.
func (c *Client) settle(ctx context.Context, scope negotiate.Scope, alias string, d negotiate.Decision, l *link) error {
	if err := c.auditor.Record(ctx, d, scope); err != nil {
		l.close()
		c.fault(ctx, alias, "negotiation record", err)
		return fmt.Errorf("remote: server %q: recording the negotiation: %w", alias, err)
	}
	if d.Accepted() {
		return nil
	}
	l.close()
	return outbound.VersionUnsupported("mcp", scope.RunID, &NegotiationError{Alias: alias, Reason: string(d.Reason)})
}

// pinned restricts a server's offers to the pinned revision: the pinned
// revision when offered, and the offers below the floor (so a server that
// offers only those is refused as below-floor, not as unsupported).
func pinned(offers []string, revision, floor string) []string {
	var out []string
	for _, v := range offers {
		if v == revision || v < floor {
			out = append(out, v)
		}
	}
	return out
}

// link is the connection side of a session: the go-sdk session, the
// session's HTTP client (its guarded transport), what the lists need to
// key the cache, and the session's list-change listener.
type link struct {
	client *Client
	cs     *mcp.ClientSession
	tap    *tap
	hc     *http.Client
	// endpoint is the server's endpoint as admitted (a cache key member).
	endpoint string
	// credential returns the Authorization value presented at every
	// request, nil when none.
	credential func(context.Context) (string, error)
	// plan is how the session listens for list changes, nil when it does
	// not (listen.go).
	plan *listenPlan

	// opened: listener is set (listening's fast path).
	opened atomic.Bool
	mu     sync.Mutex
	closed bool
	// listener is the subscriptions/listen stream, nil until one is open.
	listener *listener
}

// close stops the listener and closes the go-sdk session, if one was
// made; safe on a nil link.
func (l *link) close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	l.closed = true
	ln := l.listener
	l.mu.Unlock()
	ln.stop()
	if l.cs == nil {
		return nil
	}
	return l.cs.Close()
}

// open builds the session's transport and go-sdk client and connects:
// go-sdk sends server/discover at asked. The link is returned even when
// Connect failed, for what its tap saw.
func (c *Client) open(ctx context.Context, a *Admission, asked string, auth func(context.Context) (string, error)) (*link, error) {
	l := &link{client: c, tap: &tap{}, endpoint: a.Endpoint, credential: auth}
	l.hc = &http.Client{
		Transport: &transport{
			next:       c.http.Transport,
			revision:   asked,
			credential: auth,
			maxBytes:   a.Limits.MaxResultBytes,
		},
		CheckRedirect: c.http.CheckRedirect,
	}
	mc := mcp.NewClient(c.info, &mcp.ClientOptions{
		Capabilities: c.caps,
		// The call path answers input_required rounds itself, through the
		// host's callback and under the host's round ceiling.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	mc.AddSendingMiddleware(l.tap.middleware)
	cctx, cancel := context.WithTimeout(ctx, c.opts.ConnectTimeout)
	defer cancel()
	cs, err := mc.Connect(cctx, &mcp.StreamableClientTransport{
		Endpoint:   a.Endpoint,
		HTTPClient: l.hc,
		// A stateless server has no stream to listen on or resume: a
		// broken stream ends its call at once instead of being retried.
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: asked})
	l.cs = cs
	return l, err
}

// credential resolves the admission's credential once, to learn whether
// the exchange is authenticated (OpenWOP interop.md §Negotiation is a
// protocol: an unauthenticated exchange never goes below the preferred
// revision), and returns the function that resolves it again at every
// request; nil when the admission presents none.
func (c *Client) credential(ctx context.Context, a *Admission) (func(context.Context) (string, error), error) {
	if a.Credential.Name == "" {
		return nil, nil
	}
	ref := a.Credential
	resolve := func(ctx context.Context) (string, error) {
		if ref.Expired(c.opts.Now()) {
			return "", fmt.Errorf("%w (%q)", ErrCredentialExpired, ref.Name)
		}
		scheme, value, err := c.creds.Credential(ctx, ref)
		if err != nil {
			return "", fmt.Errorf("%w (%q): %w", ErrCredential, ref.Name, err)
		}
		if value == "" {
			return "", nil
		}
		if scheme == "" {
			return value, nil
		}
		return scheme + " " + value, nil
	}
	v, err := resolve(ctx)
	if err != nil {
		return nil, err
	}
	if v == "" {
		return nil, nil
	}
	return resolve, nil
}

// credentialIdentity is a credential's identity in the list cache's key:
// its reference, never its value.
func credentialIdentity(ref CredentialRef) string {
	if ref.Name == "" {
		return ""
	}
	return ref.Name + "\x00" + ref.Owner + "\x00" + ref.Scope
}

// fingerprint is the keyed digest of an Authorization value: two values
// are one authorization context exactly when their fingerprints are
// equal, and the fingerprint reveals nothing of the value to whoever reads
// the cache (HMAC-SHA-256, RFC 2104, under a key of the client's own).
func (c *Client) fingerprint(authorization string) string {
	if authorization == "" {
		return ""
	}
	m := hmac.New(sha256.New, c.authKey[:])
	m.Write([]byte(authorization))
	return hex.EncodeToString(m.Sum(nil))
}

// exchangeError is the error of a failed exchange with the server: a
// JSON-RPC error it answered becomes a [*PeerError] (its text dropped),
// anything else an [*ExchangeError] whose cause is stripped of net/http's
// *url.Error, which names the endpoint.
func exchangeError(alias, method string, err error) error {
	var pe *PeerError
	var ee *ExchangeError
	var oe *outbound.Error
	if errors.As(err, &pe) || errors.As(err, &ee) || errors.As(err, &oe) {
		return err
	}
	if code, supported, ok := rpcError(err); ok {
		return &PeerError{Alias: alias, Method: method, Code: code, SupportedVersions: supported}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &ExchangeError{Alias: alias, Method: method, Err: err}
}

// fault logs a failed step: the alias, the step and the error, whose text
// in this package never carries a server's body, a credential or the
// endpoint.
func (c *Client) fault(ctx context.Context, alias, step string, err error) {
	c.log.LogAttrs(ctx, slog.LevelWarn, "remote: MCP exchange refused",
		slog.String("server", alias), slog.String("step", step), slog.String("error", err.Error()))
}

// Close ends the session: its list-change stream (Close returns after the
// goroutine reading it), go-sdk's connection and whatever it holds. A
// stateless session has nothing else to end on the server.
func (s *Session) Close() error {
	if s == nil {
		return nil
	}
	return s.link.close()
}

// sessionCaller is the caller the call path drives: go-sdk's session, with
// the typed cause of a stream failure (see withFaultSlot) put back into
// the error and net/http's *url.Error (which names the endpoint) taken
// out. A JSON-RPC error the server answered stays go-sdk's *jsonrpc.Error.
type sessionCaller struct {
	cs    *mcp.ClientSession
	alias string
}

func (sc *sessionCaller) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	ctx, slot := withFaultSlot(ctx)
	res, err := sc.cs.CallTool(ctx, params)
	if err == nil {
		return res, nil
	}
	var ue *url.Error
	if _, _, isRPC := rpcError(err); !isRPC && errors.As(err, &ue) {
		err = &ExchangeError{Alias: sc.alias, Method: "tools/call", Err: ue.Err}
	}
	return nil, slot.attach(err)
}
