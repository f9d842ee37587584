package delegate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/internal/version"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/outbound"
)

// Connect opens a connection to the agent admitted under alias, on behalf
// of the run runID. In order, and sending nothing to the agent's
// interfaces until the last step:
//
//  1. the admission of alias (an unknown alias is [ErrUnknownAgent]:
//     nothing outbound is ever chosen by content);
//  2. the card, fetched through the egress guard within CardTimeout and
//     MaxCardBytes, and decoded strictly ([*CardError]);
//  3. its signature, when the admission requires one or the card is
//     signed and keys are configured ([*SignatureError]; fails closed);
//  4. re-admission: every admitted skill on the card with the digest it
//     was admitted with ([*ReadmissionError]);
//  5. the credential, resolved to know whether the exchange is
//     authenticated;
//  6. the version, decided by Policy.Outbound from the versions of the
//     card's JSON-RPC and HTTP+JSON interfaces (of Admission.Versions, when
//     set), and recorded as exactly one
//     negotiation.decided on the run's log, accepted or refused (OpenWOP
//     interop.md §The audit event; peerDigest of the interface's origin,
//     never its host). A refusal is outbound.VersionUnsupported("a2a",
//     runID, *NegotiationError): a peer that offers only versions below the
//     floor is never sent a request;
//  7. the interface of that version — JSON-RPC preferred, HTTP+JSON next,
//     in card order — and an a2aclient.Client over it whose every request
//     carries the negotiated A2A-Version, the credential and the
//     interface's tenant.
//
// A failed step returns its error; [ProjectError] turns any of them into
// the OpenWOP error the host renders.
func (c *Client) Connect(ctx context.Context, runID, alias string) (*Conn, error) {
	if runID == "" {
		// The record of an outbound negotiation belongs on a run's log
		// (OpenWOP interop.md §The audit event); without a run it would reach
		// no one.
		return nil, errors.New("delegate: Connect needs the id of the run the exchange belongs to")
	}
	a, ok := c.Admission(alias)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAgent, alias)
	}
	a.Limits = c.limitsFor(a.Limits)
	fc, err := c.fetchCard(ctx, &a)
	if err != nil {
		c.fault(ctx, alias, "card", err)
		return nil, err
	}
	if err := c.verifySignature(ctx, &a, fc); err != nil {
		c.fault(ctx, alias, "card signature", err)
		return nil, err
	}
	if err := readmit(&a, fc.card); err != nil {
		c.fault(ctx, alias, "re-admission", err)
		return nil, err
	}
	auth, err := c.credential(ctx, &a)
	if err != nil {
		c.fault(ctx, alias, "credential", err)
		return nil, err
	}
	offers, ifaces := offered(fc, a.Versions)
	peer := negotiate.Peer{Authenticated: auth != nil, Origin: a.CardURL}
	d := c.policy.Outbound(offers, peer)
	var iface *wire.AgentInterface
	if d.Accepted() {
		iface = chooseInterface(ifaces, d.Version)
		// The record names the interface the exchange goes to; the same
		// offers decide the same version.
		peer.Origin = iface.URL
		d = c.policy.Outbound(offers, peer)
	}
	if err := c.auditor.Record(ctx, d, negotiate.Scope{RunID: runID}); err != nil {
		// A decision the run's log cannot hold is not acted on.
		c.fault(ctx, alias, "negotiation record", err)
		return nil, fmt.Errorf("delegate: agent %q: recording the negotiation: %w", alias, err)
	}
	if !d.Accepted() {
		return nil, outbound.VersionUnsupported("a2a", runID, &NegotiationError{Alias: alias, Reason: string(d.Reason)})
	}
	if _, err := c.guard.Check(ctx, iface.URL); err != nil {
		c.fault(ctx, alias, "interface", err)
		return nil, &CardError{Alias: alias, Problem: "interface URL refused by the egress guard", Err: err}
	}
	tp := &target{
		url:        iface.URL,
		version:    d.Version,
		tenant:     iface.Tenant,
		http:       c.http,
		credential: auth,
		maxBytes:   a.Limits.MaxResponseBytes,
		timeout:    c.opts.RequestTimeout,
	}
	remote, err := newRemote(ctx, fc.card, iface, tp)
	if err != nil {
		return nil, err
	}
	return &Conn{
		RunID:     runID,
		Admission: a,
		Card:      fc.card,
		Version:   d.Version,
		Tenant:    iface.Tenant,
		Streaming: fc.card.Capabilities.Streaming,
		Interface: iface,
		remote:    remote,
		deps:      &connDeps{events: c.events, now: c.opts.Now, log: c.log, reverse: c.reverse},
	}, nil
}

// credential resolves the admission's credential once, to learn whether
// the exchange is authenticated (OpenWOP interop.md §Negotiation is a
// protocol: an unauthenticated exchange never goes below the preferred
// version), and returns the function that resolves it again at every
// request; nil when the admission presents none.
func (c *Client) credential(ctx context.Context, a *Admission) (func(context.Context) (string, error), error) {
	if a.Credential.Name == "" {
		return nil, nil
	}
	ref := a.Credential
	resolve := func(ctx context.Context) (string, error) {
		if ref.Expired(c.opts.Now()) {
			return "", fmt.Errorf("%w (%q): expired", ErrCredential, ref.Name)
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

// offered returns the versions the card's usable interfaces offer and
// those interfaces: JSON-RPC and HTTP+JSON (A2A 1.0 §5), the bindings the
// library speaks, of a version the admission admits (Admission.Versions;
// empty admits any). A 0.3-shaped card offers its one version and no
// usable interface.
func offered(fc *fetchedCard, admitted []string) ([]string, []*wire.AgentInterface) {
	if fc.legacy != "" {
		if !admitsVersion(admitted, fc.legacy) {
			return nil, nil
		}
		return []string{fc.legacy}, nil
	}
	var offers []string
	var ifaces []*wire.AgentInterface
	for _, iface := range fc.card.SupportedInterfaces {
		if iface.ProtocolBinding != wire.TransportProtocolJSONRPC && iface.ProtocolBinding != wire.TransportProtocolHTTPJSON {
			continue
		}
		if !admitsVersion(admitted, string(iface.ProtocolVersion)) {
			continue
		}
		offers = append(offers, string(iface.ProtocolVersion))
		ifaces = append(ifaces, iface)
	}
	return offers, ifaces
}

// admitsVersion reports whether v is among the admitted versions,
// compared as major.minor; an empty list admits any version.
func admitsVersion(admitted []string, v string) bool {
	if len(admitted) == 0 {
		return true
	}
	n, ok := version.A2A(v)
	if !ok {
		return false
	}
	for _, a := range admitted {
		if an, _ := version.A2A(a); an == n {
			return true
		}
	}
	return false
}

// chooseInterface returns the interface of version v: the first JSON-RPC
// one in card order, else the first HTTP+JSON one. v was chosen from these
// interfaces' versions, so one exists.
func chooseInterface(ifaces []*wire.AgentInterface, v string) *wire.AgentInterface {
	var rest *wire.AgentInterface
	for _, iface := range ifaces {
		if iv, ok := version.A2A(string(iface.ProtocolVersion)); !ok || iv != v {
			continue
		}
		if iface.ProtocolBinding == wire.TransportProtocolJSONRPC {
			return iface
		}
		if rest == nil {
			rest = iface
		}
	}
	return rest
}

// newRemote builds the a2aclient.Client of one negotiated interface: our
// transport for its binding, registered for the negotiated version only,
// over that one endpoint, with tenant propagation from the context off
// (the interface's tenant is the only one sent; A2A 1.0 §AgentInterface).
func newRemote(ctx context.Context, card *wire.AgentCard, iface *wire.AgentInterface, p *target) (*a2aclient.Client, error) {
	var t a2aclient.Transport
	switch iface.ProtocolBinding {
	case wire.TransportProtocolJSONRPC:
		t = &rpcTransport{p: p}
	default:
		rt, err := newRESTTransport(p)
		if err != nil {
			return nil, err
		}
		t = rt
	}
	factory := a2aclient.TransportFactoryFn(func(context.Context, *wire.AgentCard, *wire.AgentInterface) (a2aclient.Transport, error) {
		return t, nil
	})
	cl, err := a2aclient.NewFromEndpoints(ctx, []*wire.AgentInterface{iface},
		a2aclient.WithDefaultsDisabled(),
		a2aclient.WithCompatTransport(wire.ProtocolVersion(p.version), iface.ProtocolBinding, factory),
		a2aclient.WithConfig(a2aclient.Config{DisableTenantPropagation: true}),
	)
	if err != nil {
		return nil, fmt.Errorf("delegate: building the client: %w", err)
	}
	// The card lets a2aclient apply what it declares (a non-streaming
	// agent is sent SendMessage for SendStreamingMessage).
	if err := cl.UpdateCard(card); err != nil {
		return nil, fmt.Errorf("delegate: building the client: %w", err)
	}
	return cl, nil
}

// fault logs a failed connection step: the alias, the step and the
// error, whose text in this package never carries a peer's body, a
// credential or a URL (transport errors are stripped of their *url.Error).
func (c *Client) fault(ctx context.Context, alias, step string, err error) {
	c.log.LogAttrs(ctx, slog.LevelWarn, "delegate: connection refused",
		slog.String("agent", alias), slog.String("step", step), slog.String("error", err.Error()))
}

// stripURL returns the error inside a *url.Error (net/http's, which names
// the URL, and so the peer's host) and any other error as it is.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
