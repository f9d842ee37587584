package remote

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/admissions"
	"github.com/wopinterop/wopinterop/internal/version"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/outbound"
)

// Revision is the MCP revision the client speaks: the stateless revision,
// negotiated through server/discover (MCP 2026-07-28 §Lifecycle). The
// client has no legacy (initialize-era) handshake, so [New] refuses a
// policy offering any other revision, as the host's MCP mount does.
const Revision = "2026-07-28"

// Credentials resolves the admissions' credential references (the one
// interface both client directions share: see outbound.Credentials).
type Credentials = outbound.Credentials

// Deps are the collaborators of a [Client]; Policy, Events, Guard and
// MaxRounds are required.
type Deps struct {
	// Policy is the host's MCP version policy: Connect decides the
	// revision with Policy.Outbound (OpenWOP interop.md §Negotiation is a
	// protocol, §The floor). It must offer [Revision] only.
	Policy *negotiate.Policy
	// Events is the host's sink: the run's log receives the
	// negotiation.decided records (through Auditor) and the call path's
	// records.
	Events interop.EventSink
	// Auditor records negotiation.decided on the run's log. Nil means a
	// synchronous auditor over Events, so a record the sink refuses fails
	// Connect before anything but server/discover is sent; a host that
	// shares its (possibly asynchronous) auditor passes it here.
	Auditor *negotiate.Auditor
	// Guard is the egress guard every request to a server passes (package
	// egress). Local servers are reached only through its exact-origin
	// allowlist.
	Guard *egress.Guard
	// Credentials resolves the admissions' credential references; nil
	// when no admission names a credential.
	Credentials Credentials
	// Admissions are the servers the host admits at start; [Client.Admit]
	// adds or replaces one later.
	Admissions []Admission
	// MaxRounds is the host's ceiling on input_required rounds of one
	// call: its mcp facet's mrtr.maxRounds, 1 to 16 (OpenWOP
	// facets/mcp.schema.json; interop.md §The MCP round ceiling).
	MaxRounds int
}

// Defaults of [Options].
const (
	DefaultListTTL         = 5 * time.Minute
	DefaultCacheEntries    = 1024
	DefaultConnectTimeout  = 10 * time.Second
	maxRoundsCeiling       = 16 // facets/mcp.schema.json mrtr.maxRounds maximum
	implementationFallback = "(devel)"
)

// Options tune a [Client]; the zero value takes the documented defaults.
type Options struct {
	// Logger receives connection faults: the alias and what failed, never
	// a body, a credential or the server's host. Nil discards.
	Logger *slog.Logger
	// Now is the client's clock: list cache expiry, credential expiry and
	// the call path's records. Nil means time.Now. (The negotiation records
	// are stamped by the Policy's clock.)
	Now func() time.Time
	// Limits fill the zero fields of every admission's Limits before the
	// package defaults (DefaultMaxResultBytes, ...) fill what is left.
	Limits Limits
	// ListTTL caps how long a list result is cached, whatever the server's
	// ttlMs says (default 5 minutes); negative disables the cache.
	ListTTL time.Duration
	// CacheEntries bounds the list cache (default 1024 lists); when full,
	// the entry nearest its expiry is dropped.
	CacheEntries int
	// ConnectTimeout bounds the negotiation of Connect (server/discover),
	// unless its context ends sooner (default 10s), and the wait for a
	// subscriptions/listen stream's response headers.
	ConnectTimeout time.Duration
	// NoListChanges keeps sessions from opening a subscriptions/listen
	// stream to hear of list changes: cached lists then expire by their
	// ttlMs, or when the host calls InvalidateServer. By default a
	// session whose server advertises listChanged keeps one stream open
	// from the first time it relies on a cached list until it closes.
	NoListChanges bool
	// TLS configures https connections to servers (e.g. RootCAs of a
	// private CA); nil means the system roots.
	TLS *tls.Config
	// ClientInfo is the clientInfo every request's _meta carries
	// (self-reported, never an authorization input; OpenWOP interop map,
	// mcp.meta). Nil means {name: "wopinterop", version: the module's}.
	ClientInfo *mcp.Implementation
}

// Client connects a host's runs to the MCP servers it admitted (MCP
// 2026-07-28 as a client over go-sdk's mcp.Client and streamable HTTP
// transport; OpenWOP interop.md §Negotiation is a protocol;
// admission-boundaries §18.3). It is safe for concurrent use; its HTTP
// connections are pooled across all servers and runs, and its list cache
// is shared by every session, keyed by authorization.
type Client struct {
	policy    *negotiate.Policy
	auditor   *negotiate.Auditor
	events    interop.EventSink
	guard     *egress.Guard
	creds     Credentials
	http      *http.Client
	opts      Options
	log       *slog.Logger
	maxRounds int
	info      *mcp.Implementation
	caps      *mcp.ClientCapabilities
	cache     *listCache
	// authKey keys the fingerprint of a credential in the list cache's key:
	// a rotated credential is a different authorization context, and the
	// key never holds anything from which the credential could be guessed.
	authKey [32]byte
	// listenRetry bounds the delay before a list-change stream is opened
	// again (listen.go); tests shorten it.
	listenRetry [2]time.Duration

	admissions *admissions.Registry[Admission]
}

// New validates deps and opts and returns a client. Every admission is
// checked (see [Client.Admit]); all problems are reported at once.
func New(deps Deps, opts Options) (*Client, error) {
	var problems []error
	switch {
	case deps.Policy == nil:
		problems = append(problems, errors.New("Deps.Policy is required"))
	case deps.Policy.Protocol() != negotiate.MCP:
		problems = append(problems, errors.New("Deps.Policy must be the MCP policy"))
	default:
		for _, v := range deps.Policy.Offered() {
			if v != Revision {
				problems = append(problems, fmt.Errorf("Deps.Policy offers revision %q; the client speaks %s only", v, Revision))
			}
		}
	}
	if deps.Events == nil {
		problems = append(problems, errors.New("Deps.Events is required"))
	}
	if deps.Guard == nil {
		problems = append(problems, errors.New("Deps.Guard is required"))
	}
	if deps.MaxRounds < 1 || deps.MaxRounds > maxRoundsCeiling {
		problems = append(problems, fmt.Errorf("Deps.MaxRounds must be the mcp facet's mrtr.maxRounds, 1 to %d", maxRoundsCeiling))
	}
	if opts.ConnectTimeout < 0 || opts.CacheEntries < 0 {
		problems = append(problems, errors.New("Options: ConnectTimeout and CacheEntries must not be negative"))
	}
	if l := opts.Limits; l.negative() {
		problems = append(problems, errors.New("Options.Limits must not be negative"))
	}
	c := &Client{
		policy:     deps.Policy,
		auditor:    deps.Auditor,
		events:     deps.Events,
		guard:      deps.Guard,
		creds:      deps.Credentials,
		opts:       opts,
		log:        opts.Logger,
		maxRounds:  deps.MaxRounds,
		info:       opts.ClientInfo,
		admissions: admissions.New(cloneAdmission),
	}
	for i, a := range deps.Admissions {
		if err := c.validate(&a); err != nil {
			problems = append(problems, fmt.Errorf("Deps.Admissions[%d]: %w", i, err))
			continue
		}
		if !c.admissions.Add(a.Alias, a) {
			problems = append(problems, fmt.Errorf("Deps.Admissions[%d]: alias %q is admitted twice", i, a.Alias))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("remote: invalid configuration: %w", errors.Join(problems...))
	}
	if c.auditor == nil {
		c.auditor = negotiate.NewAuditor(deps.Events, negotiate.AuditorOptions{Synchronous: true, Logger: opts.Logger})
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.opts.Now == nil {
		c.opts.Now = time.Now
	}
	if c.info == nil {
		c.info = &mcp.Implementation{Name: "wopinterop", Version: moduleVersion()}
	}
	if c.opts.ConnectTimeout == 0 {
		c.opts.ConnectTimeout = DefaultConnectTimeout
	}
	if c.opts.ListTTL == 0 {
		c.opts.ListTTL = DefaultListTTL
	}
	if c.opts.CacheEntries == 0 {
		c.opts.CacheEntries = DefaultCacheEntries
	}
	// The capabilities are stated, never inferred: go-sdk's default
	// advertises roots, deprecated as of 2026-07-28 (SEP-2577), and the
	// host answers elicitation in both modes through its own callback.
	c.caps = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
		Form: &mcp.FormElicitationCapabilities{},
		URL:  &mcp.URLElicitationCapabilities{},
	}}
	c.cache = newListCache(c.opts.Now, c.opts.ListTTL, c.opts.CacheEntries)
	c.listenRetry = [2]time.Duration{listenRetryMin, listenRetryMax}
	_, _ = rand.Read(c.authKey[:]) // crypto/rand.Read never fails (Go 1.24+)
	c.http = c.guard.NewClient(egress.ClientOptions{TLS: opts.TLS, RefuseRedirects: true})
	return c, nil
}

// moduleVersion is the version of this module in the running binary, for
// clientInfo.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return implementationFallback
	}
	const path = "github.com/wopinterop/wopinterop"
	if bi.Main.Path == path && bi.Main.Version != "" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return implementationFallback
}

// MaxRounds is the host's ceiling on input_required rounds of one call.
func (c *Client) MaxRounds() int { return c.maxRounds }

// Admit adds a, or replaces the admission of the same alias. Sessions
// already made keep the admission they were made under; the next Connect
// uses a. It refuses an admission that is not well formed: an empty alias,
// an endpoint that is not an absolute http(s) URL (without userinfo or
// fragment), a Revision that is not an MCP revision (YYYY-MM-DD), an item
// without a name (URI) or named twice, a digest that is not lowercase hex
// SHA-256, a credential without Deps.Credentials, negative limits.
//
// A Revision below the host's floor is well formed: Connect refuses it,
// records the refusal on the run's log and sends nothing.
func (c *Client) Admit(a Admission) error {
	if err := c.validate(&a); err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	c.admissions.Put(a.Alias, a)
	return nil
}

// Revoke removes the admission of alias; it reports whether there was
// one. Sessions already made are not affected.
func (c *Client) Revoke(alias string) bool {
	return c.admissions.Delete(alias)
}

// Admission returns a copy of the admission of alias.
func (c *Client) Admission(alias string) (Admission, bool) {
	return c.admissions.Get(alias)
}

// InvalidateCredential drops every cached list fetched under ref (the same
// Name, Owner and Scope), whatever its ttlMs: an authorization change
// stales what was listed under it (OpenWOP interop map, mcp.cache). A
// credential whose value rotates needs no call: its new value is a new
// authorization context and never meets the old entries.
func (c *Client) InvalidateCredential(ref CredentialRef) {
	c.cache.dropCredential(credentialIdentity(ref))
}

// InvalidateServer drops every cached list of the server admitted under
// alias — every method, revision and authorization context — so the next
// list is fetched. A session hears of most changes itself (a server's
// notifications/*/list_changed on its subscriptions/listen stream); a
// host that learns of a change otherwise, or whose server does not
// notify, calls this. An unknown alias drops nothing.
func (c *Client) InvalidateServer(alias string) {
	if a, ok := c.Admission(alias); ok {
		c.cache.dropServer(a.Endpoint, "", "")
	}
}

func (c *Client) validate(a *Admission) error {
	var problems []error
	if a.Alias == "" {
		problems = append(problems, errors.New("Alias is required"))
	}
	if err := checkEndpoint(a.Endpoint); err != nil {
		problems = append(problems, err)
	}
	if a.Revision != "" && !version.Date(a.Revision) {
		problems = append(problems, errors.New("Revision must be an MCP revision (YYYY-MM-DD)"))
	}
	problems = append(problems, checkItems("Tools", a.Tools, func(t AdmittedTool) (string, string) { return t.Name, t.Digest })...)
	problems = append(problems, checkItems("Resources", a.Resources, func(r AdmittedResource) (string, string) { return r.URI, r.Digest })...)
	problems = append(problems, checkItems("Prompts", a.Prompts, func(p AdmittedPrompt) (string, string) { return p.Name, p.Digest })...)
	if a.Credential.Name != "" && c.creds == nil {
		problems = append(problems, errors.New("Credential needs Deps.Credentials"))
	}
	if a.Limits.negative() {
		problems = append(problems, errors.New("Limits must not be negative"))
	}
	if len(problems) > 0 {
		return fmt.Errorf("admission %q: %w", a.Alias, errors.Join(problems...))
	}
	return nil
}

// checkItems checks one list of admitted items: each named once, each
// pinned by a well-formed digest.
func checkItems[T any](field string, items []T, key func(T) (name, digest string)) []error {
	var problems []error
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		name, digest := key(it)
		switch {
		case name == "":
			problems = append(problems, fmt.Errorf("%s[%d]: a name is required", field, i))
		case seen[name]:
			problems = append(problems, fmt.Errorf("%s[%d]: %q is admitted twice", field, i, name))
		}
		seen[name] = true
		if !validDigest(digest) {
			problems = append(problems, fmt.Errorf("%s[%d]: Digest must be a lowercase hex SHA-256 (ToolDigest, ResourceDigest, PromptDigest)", field, i))
		}
	}
	return problems
}

// checkEndpoint requires an absolute http(s) URL with a host, no userinfo
// and no fragment. Whether its destination may be reached is the egress
// guard's decision, at every request.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return errors.New("Endpoint is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return errors.New("Endpoint must be an absolute http or https URL")
	case u.User != nil:
		return errors.New("Endpoint must not carry userinfo")
	case u.Fragment != "" || u.RawFragment != "":
		return errors.New("Endpoint must not carry a fragment")
	}
	return nil
}

// cloneAdmission copies the slices of a, so that the caller's later
// changes never reach a registered admission.
func cloneAdmission(a Admission) Admission {
	a.Tools = slices.Clone(a.Tools)
	a.Resources = slices.Clone(a.Resources)
	a.Prompts = slices.Clone(a.Prompts)
	return a
}

// limitsFor fills the zero limits of l from the client's defaults, then
// from the package's.
func (c *Client) limitsFor(l Limits) Limits {
	d := c.opts.Limits
	if l.MaxArgumentBytes == 0 {
		l.MaxArgumentBytes = d.MaxArgumentBytes
	}
	if l.MaxResultBytes == 0 {
		l.MaxResultBytes = d.MaxResultBytes
	}
	if l.MaxPages == 0 {
		l.MaxPages = d.MaxPages
	}
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if !l.NoCancelOnTimeout {
		l.NoCancelOnTimeout = d.NoCancelOnTimeout
	}
	return l.withDefaults()
}

func (l Limits) negative() bool {
	return l.MaxArgumentBytes < 0 || l.MaxResultBytes < 0 || l.MaxPages < 0 || l.Timeout < 0
}

// validDigest reports whether d is a lowercase hex SHA-256.
func validDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
