package delegate

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/admissions"
	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/internal/version"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/outbound"
)

// Credentials resolves the admissions' credential references (the one
// interface both client directions share: see outbound.Credentials).
type Credentials = outbound.Credentials

// Deps are the collaborators of a [Client]; Policy, Events and Guard are
// required.
type Deps struct {
	// Policy is the host's A2A version policy: Connect decides the version
	// with Policy.Outbound (OpenWOP interop.md §Negotiation is a protocol,
	// §The floor).
	Policy *negotiate.Policy
	// Events is the host's sink: the run's log receives the
	// negotiation.decided records (through Auditor) and the delegation's
	// own records.
	Events interop.EventSink
	// Auditor records negotiation.decided on the run's log. Nil means a
	// synchronous auditor over Events, so a record the sink refuses fails
	// Connect before anything is sent; a host that shares its (possibly
	// asynchronous) auditor between directions passes it here.
	Auditor *negotiate.Auditor
	// Guard is the egress guard every card fetch and every request to an
	// agent passes (package egress). Local agents are reached only through
	// its exact-origin allowlist.
	Guard *egress.Guard
	// Credentials resolves the admissions' credential references; nil
	// when no admission names a credential.
	Credentials Credentials
	// Admissions are the agents the host admits at start; [Client.Admit]
	// adds or replaces one later.
	Admissions []Admission
	// Map is the interop map whose a2a.taskStateReverse rows project a
	// remote task's state onto the run's status (OpenWOP interop map; A2A
	// 1.0 §TaskState). Nil means [mapping.Builtin].
	Map *mapping.Map
}

// Default timeouts of [Options].
const (
	DefaultCardTimeout    = 10 * time.Second
	DefaultRequestTimeout = 3 * time.Minute
)

// Options tune a [Client]; the zero value takes the documented defaults.
type Options struct {
	// Logger receives connection faults: the alias and what failed, never
	// a card, a body, a credential or the peer's host. Nil discards.
	Logger *slog.Logger
	// Now stamps the delegation's records; nil means time.Now. (The
	// negotiation records are stamped by the Policy's clock.)
	Now func() time.Time
	// Limits fill the zero fields of every admission's Limits before the
	// package defaults (DefaultMaxArtifacts, ...) fill what is left.
	Limits Limits
	// CardTimeout bounds one card fetch (default 10s).
	CardTimeout time.Duration
	// RequestTimeout bounds one unary call to an agent — SendMessage,
	// GetTask, CancelTask — unless its context ends sooner (default 3
	// minutes, a2aclient's own). A blocking SendMessage answers only when
	// the task settles, so a delegation that may run longer sends with
	// returnImmediately or streams. Streams are bounded by their context
	// alone.
	RequestTimeout time.Duration
	// TLS configures https connections to agents (e.g. RootCAs of a
	// private CA); nil means the system roots.
	TLS *tls.Config
}

// Client connects a host's runs to the remote agents it admitted (A2A 1.0
// as a client; OpenWOP interop.md §Negotiation is a protocol;
// admission-boundaries §18.3). It is safe for concurrent use; its HTTP
// connections are pooled across all agents and runs.
type Client struct {
	policy  *negotiate.Policy
	auditor *negotiate.Auditor
	events  interop.EventSink
	guard   *egress.Guard
	creds   Credentials
	http    *http.Client
	opts    Options
	log     *slog.Logger
	reverse *interopmap.Map

	admissions *admissions.Registry[Admission]
}

// New validates deps and opts and returns a client. Every admission is
// checked (see [Client.Admit]); all problems are reported at once.
func New(deps Deps, opts Options) (*Client, error) {
	var problems []error
	if deps.Policy == nil {
		problems = append(problems, errors.New("Deps.Policy is required"))
	} else if deps.Policy.Protocol() != negotiate.A2A {
		problems = append(problems, errors.New("Deps.Policy must be the A2A policy"))
	}
	if deps.Events == nil {
		problems = append(problems, errors.New("Deps.Events is required"))
	}
	if deps.Guard == nil {
		problems = append(problems, errors.New("Deps.Guard is required"))
	}
	if opts.CardTimeout < 0 || opts.RequestTimeout < 0 {
		problems = append(problems, errors.New("Options: timeouts must not be negative"))
	}
	c := &Client{
		policy:     deps.Policy,
		auditor:    deps.Auditor,
		events:     deps.Events,
		guard:      deps.Guard,
		creds:      deps.Credentials,
		opts:       opts,
		log:        opts.Logger,
		admissions: admissions.New(cloneAdmission),
		reverse:    (*interopmap.Map)(deps.Map),
	}
	if c.reverse == nil {
		c.reverse = (*interopmap.Map)(mapping.Builtin())
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
		return nil, fmt.Errorf("delegate: invalid configuration: %w", errors.Join(problems...))
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
	c.opts.CardTimeout = orDefault(c.opts.CardTimeout, DefaultCardTimeout)
	c.opts.RequestTimeout = orDefault(c.opts.RequestTimeout, DefaultRequestTimeout)
	c.http = c.guard.NewClient(egress.ClientOptions{TLS: opts.TLS, RefuseRedirects: true})
	return c, nil
}

func orDefault(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// Admit adds a, or replaces the admission of the same alias. Connections
// already made keep the admission they were made under; the next Connect
// uses a. It refuses an admission that is not well formed: an empty alias,
// a card URL that is not an absolute http(s) URL (without userinfo or
// fragment), a skill without an id or named twice, a digest that is not
// lowercase hex SHA-256, RequireSignature without CardKeys, a credential
// without Deps.Credentials, negative limits.
func (c *Client) Admit(a Admission) error {
	if err := c.validate(&a); err != nil {
		return fmt.Errorf("delegate: %w", err)
	}
	c.admissions.Put(a.Alias, a)
	return nil
}

// Revoke removes the admission of alias; it reports whether there was
// one. Connections already made are not affected.
func (c *Client) Revoke(alias string) bool {
	return c.admissions.Delete(alias)
}

// Admission returns a copy of the admission of alias.
func (c *Client) Admission(alias string) (Admission, bool) {
	return c.admissions.Get(alias)
}

func (c *Client) validate(a *Admission) error {
	var problems []error
	if a.Alias == "" {
		problems = append(problems, errors.New("Alias is required"))
	}
	if err := checkCardURL(a.CardURL); err != nil {
		problems = append(problems, err)
	}
	for i, s := range a.Skills {
		switch {
		case s.ID == "":
			problems = append(problems, fmt.Errorf("Skills[%d]: ID is required", i))
		case slices.ContainsFunc(a.Skills[:i], func(p AdmittedSkill) bool { return p.ID == s.ID }):
			problems = append(problems, fmt.Errorf("Skills[%d]: skill %q is admitted twice", i, s.ID))
		}
		if !validDigest(s.Digest) {
			problems = append(problems, fmt.Errorf("Skills[%d]: Digest must be the lowercase hex SHA-256 of the skill (SkillDigest)", i))
		}
	}
	for i, v := range a.Versions {
		if _, ok := version.A2A(v); !ok {
			problems = append(problems, fmt.Errorf("Versions[%d]: %q is not an A2A version (major.minor)", i, v))
		}
	}
	if a.RequireSignature && a.CardKeys == nil {
		problems = append(problems, errors.New("RequireSignature needs CardKeys"))
	}
	if a.Credential.Name != "" && c.creds == nil {
		problems = append(problems, errors.New("Credential needs Deps.Credentials"))
	}
	l := a.Limits
	if l.MaxArtifacts < 0 || l.MaxArtifactBytes < 0 || l.Deadline < 0 || l.Attempts < 0 || l.MaxCardBytes < 0 || l.MaxResponseBytes < 0 {
		problems = append(problems, errors.New("Limits must not be negative"))
	}
	if len(problems) > 0 {
		return fmt.Errorf("admission %q: %w", a.Alias, errors.Join(problems...))
	}
	return nil
}

// checkCardURL requires an absolute http(s) URL with a host, no userinfo
// and no fragment. Whether its destination may be reached is the egress
// guard's decision, at every fetch.
func checkCardURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return errors.New("CardURL is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return errors.New("CardURL must be an absolute http or https URL")
	case u.User != nil:
		return errors.New("CardURL must not carry userinfo")
	case u.Fragment != "" || u.RawFragment != "":
		return errors.New("CardURL must not carry a fragment")
	}
	return nil
}

// cloneAdmission copies the slices of a, so that the caller's later
// changes never reach a registered admission.
func cloneAdmission(a Admission) Admission {
	a.Skills = slices.Clone(a.Skills)
	a.DataClasses = slices.Clone(a.DataClasses)
	a.Versions = slices.Clone(a.Versions)
	a.Limits.MediaTypes = slices.Clone(a.Limits.MediaTypes)
	return a
}

// limitsFor fills the zero limits of l from the client's defaults, then
// from the package's.
func (c *Client) limitsFor(l Limits) Limits {
	d := c.opts.Limits
	if l.MaxArtifacts == 0 {
		l.MaxArtifacts = d.MaxArtifacts
	}
	if l.MaxArtifactBytes == 0 {
		l.MaxArtifactBytes = d.MaxArtifactBytes
	}
	if l.MediaTypes == nil {
		l.MediaTypes = slices.Clone(d.MediaTypes)
	}
	if l.Deadline == 0 {
		l.Deadline = d.Deadline
	}
	if l.Attempts == 0 {
		l.Attempts = d.Attempts
	}
	if l.MaxCardBytes == 0 {
		l.MaxCardBytes = d.MaxCardBytes
	}
	if l.MaxResponseBytes == 0 {
		l.MaxResponseBytes = d.MaxResponseBytes
	}
	return l.withDefaults()
}
