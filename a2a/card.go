package a2a

// Agent cards (OpenWOP interop map, a2a.card; interop.md §Per-agent cards;
// RFC 0202): the public card at agentCardUrl, served by
// [Server.AgentCard], and GetExtendedAgentCard (extendedCard), which
// answers the caller's view of the host card or a per-agent card named by a
// routing value.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/admit"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// cardCacheControl lets clients and shared caches keep the public card
// briefly: it changes only when the host's configuration does, and the
// strong ETag makes revalidation cheap after it expires.
const cardCacheControl = "public, max-age=300"

// defaultModes are the card's default input and output modes when the
// configuration names none: the two kinds of Part the server reads and
// writes (text and data parts).
var defaultModes = [...]string{"text/plain", "application/json"}

// interfaceVersions lists the offered versions with the preferred one first
// and the rest in their advertised order (OpenWOP interop map, a2a.card).
func (s *Server) interfaceVersions() []string {
	offered := s.cfg.Policy.Offered()
	out := make([]string, 0, len(offered))
	out = append(out, s.cfg.Policy.Preferred())
	for _, v := range offered {
		if v != s.cfg.Policy.Preferred() {
			out = append(out, v)
		}
	}
	return out
}

// interfaces lists every interface the server routes: one entry per
// offered version per binding, the preferred version first, JSON-RPC before
// HTTP+JSON within a version. URLs come from the configuration, never from
// a request (OpenWOP interop map, a2a.card; interop.md §Isolation). tenant is set only on per-agent cards.
func (s *Server) interfaces(tenant string) []*wire.AgentInterface {
	versions := s.interfaceVersions()
	out := make([]*wire.AgentInterface, 0, 2*len(versions))
	for _, v := range versions {
		out = append(out, &wire.AgentInterface{
			URL:             s.cfg.JSONRPCURL,
			ProtocolBinding: wire.TransportProtocolJSONRPC,
			Tenant:          tenant,
			ProtocolVersion: wire.ProtocolVersion(v),
		})
		if s.cfg.HTTPJSONURL != "" {
			out = append(out, &wire.AgentInterface{
				URL:             s.cfg.HTTPJSONURL,
				ProtocolBinding: wire.TransportProtocolHTTPJSON,
				Tenant:          tenant,
				ProtocolVersion: wire.ProtocolVersion(v),
			})
		}
	}
	return out
}

// capabilities are the card's capabilities: the a2a facets served
// (OpenWOP interop map, a2a.card), the same facets that open the operation
// rows, so the card claims exactly what the gate serves, and the
// extensions the host implements (Options.Extensions).
// ExtendedAgentCard: GetExtendedAgentCard answers anything but -32007, the
// host card's extended view or per-agent cards (OpenWOP interop.md
// §Per-agent cards).
func (s *Server) capabilities() wire.AgentCapabilities {
	return wire.AgentCapabilities{
		Streaming:         s.served.Streaming,
		PushNotifications: s.served.PushNotifications,
		ExtendedAgentCard: s.served.ExtendedCard,
		Extensions:        s.cfg.Extensions,
	}
}

func modesOr(configured []string) []string {
	if len(configured) == 0 {
		return slices.Clone(defaultModes[:])
	}
	return slices.Clone(configured)
}

// skill is the A2A skill of a workflow (OpenWOP interop map, a2a.card): its id is the workflow
// id, and every required member is present (tags never null). The
// workflow's media types, when it names any, are the skill's inputModes and
// outputModes (A2A 1.0 AgentSkill: they override the card's defaults).
func skill(w interop.Workflow) wire.AgentSkill {
	name := w.Name
	if name == "" {
		name = w.ID
	}
	description := w.Description
	if description == "" {
		description = name
	}
	tags := slices.Clone(w.Tags)
	if tags == nil {
		tags = []string{}
	}
	return wire.AgentSkill{
		ID: w.ID, Name: name, Description: description, Tags: tags,
		InputModes: slices.Clone(w.InputModes), OutputModes: slices.Clone(w.OutputModes),
	}
}

// baseCard is the host card without skills: what the public card, the
// extended host card and every per-agent card share.
func (s *Server) baseCard() *wire.AgentCard {
	c := s.cfg.Card
	return &wire.AgentCard{
		Name:                 c.Name,
		Description:          c.Description,
		Version:              c.Version,
		Provider:             c.Provider,
		DocumentationURL:     c.DocumentationURL,
		IconURL:              c.IconURL,
		SupportedInterfaces:  s.interfaces(""),
		Capabilities:         s.capabilities(),
		DefaultInputModes:    modesOr(c.DefaultInputModes),
		DefaultOutputModes:   modesOr(c.DefaultOutputModes),
		SecuritySchemes:      c.SecuritySchemes,
		SecurityRequirements: c.SecurityRequirements,
		Skills:               []wire.AgentSkill{},
	}
}

// publicCard is the card at agentCardUrl: one skill per routed workflow,
// in the configured order (OpenWOP interop map, a2a.card). It names no routing value (OpenWOP interop.md §Per-agent cards).
func (s *Server) publicCard() *wire.AgentCard {
	card := s.baseCard()
	for _, w := range s.cfg.Routed {
		card.Skills = append(card.Skills, skill(w))
	}
	return card
}

// encodedCard is a public card ready to serve: its bytes and strong ETag
// are computed once, so a request costs a header write and a copy.
type encodedCard struct {
	body []byte
	etag string
}

func encodeCard(card *wire.AgentCard) (*encodedCard, error) {
	body, err := json.Marshal(card)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	return &encodedCard{body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}, nil
}

// publicCards encodes the public card once per offered version. Every
// version this library serves is an A2A 1.x version whose card has one
// shape, so today the entries share their content; keying them by version
// keeps selection honest: a version that is not offered has no card.
func (s *Server) publicCards() (map[string]*encodedCard, error) {
	card := s.publicCard()
	if err := s.signCard(context.Background(), card); err != nil {
		return nil, err
	}
	enc, err := encodeCard(card)
	if err != nil {
		return nil, err
	}
	cards := make(map[string]*encodedCard, len(s.cfg.Policy.Offered()))
	for _, v := range s.cfg.Policy.Offered() {
		cards[v] = enc
	}
	return cards, nil
}

// AgentCard returns the handler of the public agent card (a2a.agentCardUrl;
// OpenWOP interop map, a2a.card; interop.md §Legacy profiles are absent,
// §Per-agent cards). Mount it at the path of Options.AgentCardURL,
// e.g. /.well-known/agent-card.json.
//
// The card is public: no credential is required. A credential, when
// present and valid, only decides how the negotiation is recorded and
// whether a downgrade may be granted (OpenWOP interop.md §Negotiation is a protocol, §The audit event; RFC 0242 §B). The version is
// negotiated from the A2A-Version header or query parameter exactly as on
// the interfaces:
//
//   - absent: the preferred version's card (OpenWOP interop.md §Legacy profiles are absent);
//   - an offered version: that version's card, except that an
//     unauthenticated request below preferred gets the preferred one (OpenWOP interop.md §Negotiation is a protocol);
//   - a version that is not offered, malformed or below the floor: 400
//     with a google.rpc.Status carrying ErrorInfo VERSION_NOT_SUPPORTED and
//     metadata.supportedVersions. Serving another version's card would
//     answer a question the client did not ask, and 404 would read as "no
//     agent here"; the refusal names the versions to ask for instead.
//     Clients that send no version (a2a-go's card resolver) never see it.
//
// Every request, refused or not, emits one negotiation.decided record.
// Responses carry a strong ETag, honour If-None-Match with 304, may be
// cached publicly for five minutes and vary by A2A-Version. GET and HEAD are
// served; other methods get 405 with Allow. Errors are google.rpc.Status
// bodies, the HTTP+JSON shape.
func (s *Server) AgentCard() http.Handler {
	cards, err := s.publicCards()
	if err != nil {
		// Only a host-supplied value (a security scheme of an unknown
		// type, the card signer) can fail here; say so once and answer
		// 500.
		s.log.Error("a2a: the agent card cannot be encoded", "error", err)
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			s.writeStatusError(w, internalError())
		})
	}
	return &cardHandler{s: s, cards: cards}
}

type cardHandler struct {
	s     *Server
	cards map[string]*encodedCard
}

func (h *cardHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.writeStatusError(w, methodNotAllowed())
		return
	}
	// What could panic here is recovered where it is called (decide);
	// anything else aborts the response rather than leave it cut short.
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				s.logPanic(r.Context(), "agent card", "", p)
			}
			panic(http.ErrAbortHandler)
		}
	}()
	d, err := h.decide(r)
	if err != nil {
		s.writeStatusError(w, asError(err))
		return
	}
	hdr := w.Header()
	hdr.Set("Vary", versionParam)
	if !d.Accepted() {
		s.writeStatusError(w, s.errs.versionNotSupported(strings.Join(d.Supported, ",")))
		return
	}
	card := h.cards[d.Version]
	hdr.Set("ETag", card.etag)
	hdr.Set("Cache-Control", cardCacheControl)
	if etagMatches(r.Header.Get("If-None-Match"), card.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(card.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(card.body)
	}
}

// decide negotiates the card's version for the request and records the
// decision. A panic in the resolver or the auditor is an internal error.
func (h *cardHandler) decide(r *http.Request) (d negotiate.Decision, err error) {
	s := h.s
	ctx := r.Context()
	defer s.recoverInto(ctx, "agent card", "", &err)
	sub, err := s.cfg.Subjects.ResolveSubject(r)
	if err != nil {
		if !errors.Is(err, interop.ErrUnauthenticated) && !errors.Is(err, interop.ErrForbidden) {
			s.log.WarnContext(ctx, "a2a: subject resolver failed on a card request", "error", err)
		}
		sub = interop.Subject{}
	}
	// An anonymous card fetch is recorded without a tenant (OpenWOP RFC 0242 §B.4),
	// even when the resolver placed the anonymous caller in one.
	scope := negotiate.Scope{}
	if sub.Authenticated {
		scope = admit.ScopeOf(sub)
	}
	g := s.admission()
	d, err = g.Negotiate(ctx, requestedVersion(r), negotiate.Peer{Authenticated: sub.Authenticated, Origin: r.Header.Get("Origin")}, scope)
	if err != nil {
		return d, s.admissionRefusal(ctx, err)
	}
	return d, nil
}

// etagMatches applies If-None-Match: "*" or any listed tag equal to etag
// under the weak comparison RFC 9110 §13.1.2 prescribes for it.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}

// getExtendedAgentCard serves GetExtendedAgentCard (OpenWOP interop map, a2a.operations; RFC 0202 §B, §C, §D.6; interop.md §Per-agent cards).
//
// With a routing value (req.Tenant, resolved after authentication; one
// outside the caller's inventory is -32007, as never minted) it answers that agent's card (OpenWOP RFC 0202 §C): name = persona,
// version = packVersion, description = description else label, the host
// card's interfaces each with tenant R, the host card's capabilities,
// security and default modes, and one skill per workflow routed to the
// agent that the caller may start. An agent left with no such workflow, and
// an unauthenticated caller, are answered as a never-minted value: -32007
// (OpenWOP RFC 0202 §D.6; interop.md §Per-agent cards).
//
// Without one it answers the caller's view of the host card when
// Options.ExtendedCard is set: the public card with only the skills the
// caller may start (OpenWOP interop map, a2a.operations). Otherwise -32007.
func (s *Server) getExtendedAgentCard(ctx context.Context, c *call, req *wire.GetExtendedAgentCardRequest) (*wire.AgentCard, error) {
	if err := s.withAgent(ctx, c, req.Tenant); err != nil {
		return nil, neverMinted(err, s.errs.extendedCardNotConfigured())
	}
	if c.agent != nil {
		card, err := s.agentCard(ctx, c)
		if err != nil {
			return nil, err
		}
		return s.signed(ctx, card)
	}
	if !s.cfg.ExtendedCard {
		return nil, s.errs.extendedCardNotConfigured()
	}
	startable, err := s.startable(ctx, c.subject)
	if err != nil {
		return nil, err
	}
	card := s.baseCard()
	for _, w := range s.cfg.Routed {
		if _, ok := startable[w.ID]; ok {
			card.Skills = append(card.Skills, skill(w))
		}
	}
	return s.signed(ctx, card)
}

// agentCard is the per-agent card of c.agent (OpenWOP RFC 0202 §C). It carries
// only inventory fields and workflow descriptions: never a prompt, a
// schema or a credential.
func (s *Server) agentCard(ctx context.Context, c *call) (*wire.AgentCard, error) {
	agent := c.agent
	r, ok := s.cfg.Routing.ForAgent(*agent)
	if !ok || !c.subject.Authenticated {
		return nil, s.errs.extendedCardNotConfigured()
	}
	startable, err := s.startable(ctx, c.subject)
	if err != nil {
		return nil, err
	}
	var skills []wire.AgentSkill
	for _, id := range agent.Workflows {
		if w, ok := startable[id]; ok && !slices.ContainsFunc(skills, func(k wire.AgentSkill) bool { return k.ID == id }) {
			skills = append(skills, skill(w))
		}
	}
	if len(skills) == 0 {
		return nil, s.errs.extendedCardNotConfigured()
	}
	description := agent.Description
	if description == "" {
		description = agent.Label
	}
	host := s.cfg.Card
	return &wire.AgentCard{
		Name:                 agent.Persona,
		Description:          description,
		Version:              agent.PackVersion,
		Provider:             host.Provider,
		SupportedInterfaces:  s.interfaces(r),
		Capabilities:         s.capabilities(),
		DefaultInputModes:    modesOr(host.DefaultInputModes),
		DefaultOutputModes:   modesOr(host.DefaultOutputModes),
		SecuritySchemes:      host.SecuritySchemes,
		SecurityRequirements: host.SecurityRequirements,
		Skills:               skills,
	}, nil
}

// startable indexes the workflows the Subject may start by id
// (callerWorkflows).
func (s *Server) startable(ctx context.Context, sub interop.Subject) (map[string]interop.Workflow, error) {
	list, err := s.callerWorkflows(ctx, sub)
	if err != nil {
		return nil, s.fault(ctx, "a2a: list workflows failed", "error", err)
	}
	out := make(map[string]interop.Workflow, len(list))
	for _, w := range list {
		out[w.ID] = w
	}
	return out, nil
}
