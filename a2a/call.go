package a2a

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/admit"
	"github.com/wopinterop/wopinterop/internal/routing"
	"github.com/wopinterop/wopinterop/internal/tracecontext"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// call is what every operation knows about its request once the binding has
// authenticated and negotiated it (prepare): nothing of it comes from the
// request body except the agent, which the operation resolves from the
// routing value (withAgent) only after authentication and which never
// selects the tenant (OpenWOP RFC 0202 §D.6; interop.md §Isolation).
type call struct {
	subject interop.Subject
	// version is the negotiated A2A version.
	version string
	// agent is the inventory entry a per-agent routing value named; nil on
	// the host interface.
	agent *interop.Agent
	// trace is the W3C trace context of the request's traceparent and
	// tracestate headers, empty when absent or malformed. A well-formed
	// value in Message.metadata.openwop wins over it (OpenWOP interop.md §Trace context).
	trace interop.TraceContext
	// waitUntil, when set, ends every wait of a blocking SendMessage: the
	// one deadline of a JSON-RPC batch.
	waitUntil time.Time
	// activated are the extensions the request's A2A-Extensions activated
	// among those the server declares (activatedExtensions); nil for none.
	activated []string
}

// versionParam is the header (or query parameter, A2A §3.6.1) naming the
// requested version.
const versionParam = "A2A-Version"

// canonicalVersionHeader is versionParam in net/http's canonical form.
const canonicalVersionHeader = "A2a-Version"

// headerValue is http.Header.Get for a name already in canonical form.
func headerValue(h http.Header, canonical string) string {
	if v := h[canonical]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// canonicalExtensionsHeader is the A2A-Extensions service parameter (A2A
// 1.0 §3.2.6) in net/http's canonical form.
const canonicalExtensionsHeader = "A2a-Extensions"

// activatedExtensions are the declared extensions h's A2A-Extensions
// requests, in the declared order: every value of the header is a
// comma-separated list of URIs, which compare exactly (service parameter
// values are case sensitive). An extension the server does not declare is
// ignored (A2A extensions §Extension Activation).
func activatedExtensions(h http.Header, declared []wire.AgentExtension) []string {
	values := h[canonicalExtensionsHeader]
	if len(values) == 0 || len(declared) == 0 {
		return nil
	}
	var out []string
	for _, e := range declared {
		if requestsExtension(values, e.URI) {
			out = append(out, e.URI)
		}
	}
	return out
}

// requestsExtension reports whether one of the comma-separated lists in
// values names uri.
func requestsExtension(values []string, uri string) bool {
	for _, v := range values {
		for name := range strings.SplitSeq(v, ",") {
			if strings.Trim(name, " \t") == uri {
				return true
			}
		}
	}
	return false
}

// echoExtensions answers the extensions c activated in the response's
// A2A-Extensions header (A2A extensions §Extension Activation: the
// response lists the extensions activated for the request). A request
// that activated none gets no header.
func echoExtensions(w http.ResponseWriter, c *call) {
	if c != nil && len(c.activated) > 0 {
		w.Header()[canonicalExtensionsHeader] = []string{strings.Join(c.activated, ", ")}
	}
}

// requestedVersion reads A2A-Version from the header, else the query.
func requestedVersion(r *http.Request) string {
	// Indexing the header map by the canonical key avoids canonicalising
	// the name on every request.
	if v := headerValue(r.Header, canonicalVersionHeader); v != "" {
		return strings.TrimSpace(v)
	}
	return r.URL.Query().Get(versionParam)
}

// prepare runs the steps every request takes before its method: refuse a
// request that arrives after Drain, then the admission step
// (internal/admit): resolve the Subject, decide the version and record the
// decision, refusing an unauthenticated or forbidden caller (recorded as
// one refused exchange, for no tenant) or an unserved version (recorded
// for the caller's tenant). An inbound request never writes to a run's
// log, so a refused request appends no event (OpenWOP interop.md §The
// audit event). A decision that cannot be recorded, like a panic in the
// resolver or the auditor, is an internal error.
//
// The call is returned with a refusal too when the SubjectResolver
// accepted the caller (a version it may not use): a binding may then read
// the request to answer it. A caller the resolver did not accept —
// unauthenticated, forbidden, or not asked (a drain, a failure) — gets no
// call, and its request body is never read.
func (s *Server) prepare(r *http.Request) (c *call, err error) {
	defer s.recoverInto(r.Context(), "prepare", "", &err)
	if s.draining() {
		// Nothing is resolved or recorded: the host is closing its
		// resolver and auditor behind the drain.
		return nil, unavailable()
	}
	ctx := r.Context()
	g := s.admission()
	requested := requestedVersion(r)
	sub, err := g.Authenticate(r, requested)
	if err != nil {
		return nil, s.admissionRefusal(ctx, err)
	}
	d, err := g.Negotiate(ctx, requested, negotiate.Peer{Authenticated: sub.Authenticated, Origin: r.Header.Get("Origin")}, admit.ScopeOf(sub))
	if err != nil {
		return nil, s.admissionRefusal(ctx, err)
	}
	c = &call{subject: sub, version: d.Version, trace: tracecontext.FromHeaders(r.Header), activated: activatedExtensions(r.Header, s.cfg.Extensions)}
	if !d.Accepted() {
		return c, s.errs.versionNotSupported(strings.Join(d.Supported, ","))
	}
	return c, nil
}

// admission is the server's admission step (internal/admit). An anonymous
// Subject is admitted: what it may do is each operation's to decide.
func (s *Server) admission() admit.Gate {
	return admit.Gate{Subjects: s.cfg.Subjects, Policy: s.cfg.Policy, Auditor: s.cfg.Auditor, AllowAnonymous: true}
}

// admissionRefusal is the binding-independent answer to a refusal of the
// admission step: 401, 403, or — for a decision that could not be
// recorded and for a resolver fault — the internal error, logged.
func (s *Server) admissionRefusal(ctx context.Context, err error) *Error {
	switch {
	case admit.IsAuditFailure(err):
		s.log.WarnContext(ctx, "a2a: negotiation record failed", "error", err)
		return internalError()
	case errors.Is(err, interop.ErrUnauthenticated):
		return unauthenticated()
	case errors.Is(err, interop.ErrForbidden):
		return forbidden()
	}
	s.log.ErrorContext(ctx, "a2a: subject resolver failed", "error", err)
	return internalError()
}

// withAgent resolves a per-agent routing value for c where the value
// selects what the request acts on: a new task (SendMessage without
// taskId) and GetExtendedAgentCard. An empty value is the host interface.
// A value outside the caller's inventory — another tenant's, never minted,
// malformed — is errUnknownRoutingValue, which each operation answers
// exactly like a never-minted value (OpenWOP interop.md §Non-disclosure).
// An inventory that fails is a server fault, logged and answered as an
// internal error: it is no statement about the value, and the inventory is
// read before the value is looked at, so the fault discloses nothing.
func (s *Server) withAgent(ctx context.Context, c *call, routingValue string) error {
	if routingValue == "" {
		return nil
	}
	// An unauthenticated request never resolves a routing value, so a real
	// one answers exactly like a never-minted one (OpenWOP RFC 0202 §D.6).
	if s.cfg.Routing == nil || !c.subject.Authenticated {
		return errUnknownRoutingValue
	}
	agent, err := (*routing.Keys)(s.cfg.Routing).ResolveFrom(ctx, s.cfg.Inventory, c.subject, routingValue)
	switch {
	case errors.Is(err, routing.ErrUnknownValue):
		return errUnknownRoutingValue
	case err != nil:
		return s.fault(ctx, "a2a: agent inventory failed", "error", err)
	}
	c.agent = &agent
	return nil
}

// routingHint reads the tenant of ListTasks, where it is only a hint: a
// routing value of one of the caller's agents narrows the list to that
// agent's tasks; any other value is ignored, so the answer is exactly the
// one without it. On a request to an existing task the tenant is not read
// at all: the task id alone names the run, and the caller's Subject alone
// decides whether it may read it (OpenWOP interop.md §Isolation; A2A
// 1.0.1 AgentInterface.tenant). An inventory that fails fails the list:
// ignoring the hint then would answer a narrowed question with the whole
// list.
func (s *Server) routingHint(ctx context.Context, c *call, tenant string) error {
	err := s.withAgent(ctx, c, tenant)
	if errors.Is(err, errUnknownRoutingValue) {
		c.agent = nil
		return nil
	}
	return err
}

// errUnknownRoutingValue marks a routing value that resolves to no agent of
// the caller; each operation answers it with its own never-minted answer.
var errUnknownRoutingValue = errors.New("a2a: unknown routing value")

// neverMinted is an operation's answer to a withAgent error: answer for a
// value that resolves to no agent of the caller, the error itself (a
// fault) otherwise.
func neverMinted(err error, answer *Error) error {
	if errors.Is(err, errUnknownRoutingValue) {
		return answer
	}
	return err
}

// authChallenge is the WWW-Authenticate value of a 401 on either binding:
// one challenge per HTTP-auth, OAuth 2 or OpenID Connect scheme on the
// card (the last two present bearer tokens), in name order, and Bearer
// when the card declares none of them (RFC 9110 §11.6.1).
func (s *Server) authChallenge() string {
	names := make([]string, 0, len(s.cfg.Card.SecuritySchemes))
	for name := range s.cfg.Card.SecuritySchemes {
		names = append(names, string(name))
	}
	slices.Sort(names)
	var challenges []string
	for _, name := range names {
		var c string
		switch v := s.cfg.Card.SecuritySchemes[wire.SecuritySchemeName(name)].(type) {
		case wire.HTTPAuthSecurityScheme:
			c = v.Scheme
		case wire.OAuth2SecurityScheme, wire.OpenIDConnectSecurityScheme:
			c = "Bearer"
		}
		if c != "" && !slices.ContainsFunc(challenges, func(x string) bool { return strings.EqualFold(x, c) }) {
			challenges = append(challenges, c)
		}
	}
	if len(challenges) == 0 {
		return "Bearer"
	}
	return strings.Join(challenges, ", ")
}
