package facets

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/mapping"
)

// Options configure a [Validator].
type Options struct {
	// Map is the interop map whose mcp.features rows say which feature ids
	// exist and which a profile requires. Nil means mapping.Builtin().
	Map *mapping.Map
}

// Validator checks declarations. It holds the compiled record schemas and
// the interop map; it is immutable and safe for concurrent use. Build one
// with [NewValidator] and keep it.
type Validator struct {
	schemas *schemas
	m       *interopmap.Map
}

// NewValidator compiles the embedded schemas.
func NewValidator(o Options) (*Validator, error) {
	s, err := compileSchemas()
	if err != nil {
		return nil, err
	}
	m := (*interopmap.Map)(o.Map)
	if m == nil {
		m = (*interopmap.Map)(mapping.Builtin())
	}
	return &Validator{schemas: s, m: m}, nil
}

// Declare copies d, fills its defaults (see the package doc), validates
// the copy and returns the advertisement built from it. On any problem it
// returns no advertisement and an error joining one [*FieldError] per
// problem, each wrapping [ErrInvalidFacet].
func (v *Validator) Declare(now time.Time, d Declaration, s Served) (*Advertisement, error) {
	d = d.Clone()
	d.normalize()
	if err := v.validate(now, d, s); err != nil {
		return nil, err
	}
	return newAdvertisement(d)
}

// validate checks d exactly as given (no defaults are filled) at time now
// against what s says is served. Each family's wire record is checked
// against this package's schema first, then the advertisement rules
// (OpenWOP interop.md §The facets; capabilities.md §2–§4) that a schema
// cannot state; every problem found is reported, joined, each a
// [*FieldError] wrapping [ErrInvalidFacet]. Where a rule check and a schema
// check fault the same field, the rule's message, being more specific, is
// the one kept.
func (v *Validator) validate(now time.Time, d Declaration, s Served) error {
	var all problems
	if d.A2A != nil {
		all = append(all, merge(checkRecord(v.schemas.a2a, "a2a", d.A2A), v.checkA2A(now, d.A2A, s))...)
	} else if s.A2A.JSONRPC || s.A2A.HTTPJSON {
		all.add("a2a", ruleFamilies, "is absent but the host serves A2A")
	}
	if d.MCP != nil {
		all = append(all, merge(checkRecord(v.schemas.mcp, "mcp", d.MCP), v.checkMCP(now, d.MCP, s))...)
	} else if s.MCP.Mount || s.MCP.Client {
		all.add("mcp", ruleFamilies, "is absent but the host serves MCP")
	}
	if he := hostEventsRecord(d); he != nil {
		all = append(all, merge(checkRecord(v.schemas.hostEvents, "hostEvents", he), checkHostEvents(now, he, s))...)
	}
	if d.Agents != nil {
		var rules problems
		checkLifecycle(&rules, "agents", d.Agents.Since, d.Agents.Until, now, s)
		all = append(all, merge(checkRecord(v.schemas.agents, "agents", d.Agents), rules)...)
	}
	// Per-agent cards are published from the agent-manifest inventory, so
	// a2a.agentCards needs agents.manifestRuntime advertised beside it
	// (OpenWOP interop §Per-agent cards, RFC 0202).
	if d.A2A != nil && d.A2A.AgentCards && (d.Agents == nil || d.Agents.ManifestRuntime == nil) {
		all.add("agents.manifestRuntime", ruleAgentCards, "is required by a2a.agentCards: advertise the agents family with manifestRuntime (an object, {} at least)")
	}
	return all.err()
}

// merge drops the schema problems of fields a rule check also faulted.
func merge(schema, rules problems) problems {
	out := slices.DeleteFunc(schema, func(e *FieldError) bool {
		return slices.ContainsFunc(rules, func(r *FieldError) bool { return r.Field == e.Field })
	})
	return append(out, rules...)
}

// checkLifecycle checks since and until against the host's timeline and
// the clock (OpenWOP capabilities.md §2).
func checkLifecycle(p *problems, fam, since, until string, now time.Time, s Served) {
	if len(s.ProtocolVersions) > 0 && wellFormedMajorMinor(since) && !slices.Contains(s.ProtocolVersions, since) {
		p.add(fam+".since", ruleFamilies, "%q is not one of the host's protocolVersions %q", since, s.ProtocolVersions)
	}
	if until == "" {
		return
	}
	if strings.Contains(until, "-") {
		if !wellFormedRevision(until) {
			p.add(fam+".until", ruleStatus, "%q is not a calendar date", until)
			return
		}
		if until < string(DateOf(now)) {
			p.add(fam+".until", ruleStatus, "%q is in the past (until_in_past)", until)
		}
		return
	}
	if !wellFormedMajorMinor(until) {
		return // the schema names the shape problem
	}
	if wellFormedMajorMinor(since) && compareMajorMinor(until, since) < 0 {
		p.add(fam+".until", ruleStatus, "%q is before since %q (until_in_past)", until, since)
		return
	}
	if newest, ok := newestVersion(s.ProtocolVersions); ok && compareMajorMinor(until, newest) < 0 {
		p.add(fam+".until", ruleStatus, "%q is below the host's newest protocol version %q (until_in_past)", until, newest)
	}
}

func newestVersion(vs []string) (string, bool) {
	vs = slices.DeleteFunc(slices.Clone(vs), func(v string) bool { return !wellFormedMajorMinor(v) })
	if len(vs) == 0 {
		return "", false
	}
	return slices.MaxFunc(vs, compareMajorMinor), true
}

// checkRefresh applies the refresh SLA (OpenWOP interop.md §The refresh SLA): the window is at most
// 90 days, refreshedAt is not older than the window and not more than a
// day ahead of the clock.
func checkRefresh(p *problems, fam string, refreshedAt Date, window time.Duration, now time.Time) {
	if window < 0 || window > MaxRefreshWindow {
		p.add(fam+".RefreshWindow", ruleRefresh, "%v is not a window of at most 90 days (0 means 90 days)", window)
		return
	}
	t, err := refreshedAt.Time()
	if err != nil {
		return // the schema names the shape problem
	}
	w := effectiveWindow(window)
	if now.After(t.Add(w)) {
		p.add(fam+".refreshedAt", ruleRefresh, "%q is older than the %d-day refresh window", refreshedAt, int(w/(24*time.Hour)))
	}
	if t.After(now.Add(24 * time.Hour)) {
		p.add(fam+".refreshedAt", ruleRefresh, "%q is more than one day in the future", refreshedAt)
	}
}

// checkOffered checks a version list, its preferred member and its floor
// (OpenWOP facets/a2a.schema.json and facets/mcp.schema.json; interop.md §The refresh SLA, §The floor) and that the host speaks each version.
func checkOffered(p *problems, fam, listKey, prefKey, floorKey string, list []string, pref, floor string,
	wellFormed func(string) bool, cmp func(a, b string) int, served []string, what string) {
	for i, ver := range list {
		field := fmt.Sprintf("%s.%s[%d]", fam, listKey, i)
		switch {
		case !wellFormed(ver):
			p.add(field, ruleRequired, "%q is not a well-formed %s", ver, what)
		case len(served) == 0:
			p.add(field, ruleFamilies, "%q is not served (the host speaks no %s)", ver, what)
		case !slices.Contains(served, ver):
			p.add(field, ruleFamilies, "%q is not served (the host speaks %q)", ver, served)
		case wellFormed(floor) && cmp(ver, floor) < 0:
			p.add(field, ruleFloor, "%q is below %s.%s %q", ver, fam, floorKey, floor)
		}
	}
	if !slices.Contains(list, pref) {
		p.add(fam+"."+prefKey, ruleRefresh, "%q is not in %s.%s", pref, fam, listKey)
	}
	if !slices.Contains(list, floor) {
		p.add(fam+"."+floorKey, ruleRefresh, "%q is not in %s.%s", floor, fam, listKey)
	}
	if wellFormed(pref) && wellFormed(floor) && cmp(floor, pref) > 0 {
		p.add(fam+"."+floorKey, ruleRefresh, "%q is above %s.%s %q", floor, fam, prefKey, pref)
	}
}

func (v *Validator) checkA2A(now time.Time, a *A2A, s Served) problems {
	var p problems
	checkLifecycle(&p, "a2a", a.Since, a.Until, now, s)
	checkOffered(&p, "a2a", "versions", "preferredVersion", "minimumVersion", a.Versions, a.PreferredVersion,
		a.MinimumVersion, wellFormedMajorMinor, compareMajorMinor, s.A2A.Versions, "major.minor version")
	checkRefresh(&p, "a2a", a.RefreshedAt, a.RefreshWindow, now)

	hasCard := a.AgentCardURL != ""
	for i, pr := range a.Profiles {
		field := fmt.Sprintf("a2a.profiles[%d]", i)
		ver, ok := strings.CutPrefix(pr, "a2a-")
		switch {
		case strings.HasSuffix(pr, "-legacy"):
			p.add(field, ruleProfiles, "%q is a legacy profile, which is never advertised", pr)
		case !ok || !wellFormedMajorMinor(ver):
			p.add(field, ruleProfiles, "%q is not a profile id a2a-<major>.<minor>", pr)
		case !slices.Contains(a.Versions, ver):
			p.add(field, ruleA2AProfile, "%q claims version %s, which a2a.versions does not offer", pr, ver)
		}
		if ok && !hasCard {
			p.add("a2a.agentCardUrl", ruleA2AProfile, "is required by profile %q", pr)
		}
	}

	served := s.A2A.JSONRPC || s.A2A.HTTPJSON
	switch {
	case hasCard && !absoluteHTTPURL(a.AgentCardURL):
		p.add("a2a.agentCardUrl", ruleA2AProfile, "%q is not an absolute http(s) URL", a.AgentCardURL)
	case hasCard && !s.A2A.JSONRPC:
		p.add("a2a.agentCardUrl", ruleA2AProfile, "is advertised but no A2A JSON-RPC interface is served")
	case !hasCard && served:
		p.add("a2a.agentCardUrl", ruleFamilies, "is absent but an A2A interface is served; peers find it only through the card")
	}

	for _, c := range []struct {
		key            string
		claimed, backs bool
	}{
		{"streaming", a.Streaming, s.A2A.Streaming},
		{"pushNotifications", a.PushNotifications, s.A2A.PushNotifications},
		{"durableTasks", a.DurableTasks, s.A2A.DurableTasks},
	} {
		switch {
		case c.claimed && !c.backs:
			p.add("a2a."+c.key, ruleServed, "is claimed but not served")
		case c.claimed && !hasCard:
			p.add("a2a."+c.key, ruleServed, "is claimed without a2a.agentCardUrl, so nothing inbound offers it")
		}
	}

	if a.AgentCards {
		if !slices.Contains(a.Profiles, ProfileA2A10) {
			p.add("a2a.agentCards", ruleAgentCards, "requires profile %q in a2a.profiles", ProfileA2A10)
		}
		if !s.A2A.ExtendedCard {
			p.add("a2a.agentCards", ruleAgentCards, "requires GetExtendedAgentCard to be served")
		}
		if !s.A2A.AgentCards {
			p.add("a2a.agentCards", ruleAgentCards, "requires per-agent cards from the agent inventory to be served")
		}
	}
	return p
}

// featureBacked reports whether what s serves backs map feature id, and
// whether this package knows how to tell. A feature it cannot verify is
// refused rather than trusted.
func featureBacked(id string, s ServedMCP) (backed, known bool) {
	switch id {
	case "server-discover":
		return s.Mount && s.Discover, true
	case "mrtr":
		return s.Mount && s.MRTR, true
	case "cacheable-lists":
		return s.Mount && s.CacheableLists, true
	case "extensions":
		return s.Mount && len(s.Extensions) > 0, true
	}
	return false, false
}

func (v *Validator) checkMCP(now time.Time, m *MCP, s Served) problems {
	var p problems
	checkLifecycle(&p, "mcp", m.Since, m.Until, now, s)
	checkOffered(&p, "mcp", "revisions", "preferredVersion", "minimumRevision", m.Revisions, m.PreferredVersion,
		m.MinimumRevision, wellFormedRevision, compareRevision, s.MCP.Revisions, "revision date")
	checkRefresh(&p, "mcp", m.RefreshedAt, m.RefreshWindow, now)

	for i, pr := range m.Profiles {
		field := fmt.Sprintf("mcp.profiles[%d]", i)
		rev, ok := strings.CutPrefix(pr, "mcp-")
		switch {
		case strings.HasSuffix(pr, "-legacy"):
			p.add(field, ruleProfiles, "%q is a legacy profile, which is never advertised", pr)
			continue
		case !ok || !wellFormedRevision(rev):
			p.add(field, ruleProfiles, "%q is not a profile id mcp-<YYYY-MM-DD>", pr)
			continue
		case !slices.Contains(m.Revisions, rev):
			p.add(field, ruleMCPProfile, "%q claims revision %s, which mcp.revisions does not offer", pr, rev)
		}
		for _, f := range v.m.RequiredFeatures(pr) {
			if !slices.Contains(m.Features, f) {
				p.add("mcp.features", ruleMCPProfile, "lacks %q, which profile %q requires", f, pr)
			}
		}
	}

	for i, f := range m.Features {
		field := fmt.Sprintf("mcp.features[%d]", i)
		if _, ok := v.m.Feature(f); !ok {
			p.add(field, ruleMCPProfile, "%q is not a feature of the interop map", f)
			continue
		}
		backed, known := featureBacked(f, s.MCP)
		switch {
		case !known:
			p.add(field, ruleMCPProfile, "%q cannot be verified as served by this library", f)
		case !backed:
			p.add(field, ruleMCPProfile, "%q is claimed but not served", f)
		}
	}
	if len(s.MCP.Extensions) > 0 && !slices.Contains(m.Features, "extensions") {
		p.add("mcp.features", ruleMCPProfile, "lacks \"extensions\" although server/discover lists %q", s.MCP.Extensions)
	}

	for i, u := range m.ServerURLs {
		if !absoluteHTTPURL(u) && !absolutePath(u) {
			p.add(fmt.Sprintf("mcp.serverUrls[%d]", i), ruleServerMount, "%q is neither an absolute http(s) URL nor an absolute path", u)
		}
	}
	switch {
	case len(m.ServerURLs) > 0 && !s.MCP.Mount:
		p.add("mcp.serverUrls", ruleServerMount, "is advertised but no MCP server is mounted")
	case len(m.ServerURLs) == 0 && m.ServerMount != nil:
		p.add("mcp.serverUrls", ruleServerMount, "needs an entry [0] addressing mcp.serverMount")
	case len(m.ServerURLs) == 0 && s.MCP.Mount:
		p.add("mcp.serverUrls", ruleServerMount, "is absent but an MCP server is mounted")
	}
	if m.ServerMount == nil && s.MCP.Mount {
		p.add("mcp.serverMount", ruleServerMount, "is absent but an MCP server is mounted; the map gates tools, prompts and resources on it")
	}
	if sm := m.ServerMount; sm != nil {
		if !s.MCP.Mount {
			p.add("mcp.serverMount", ruleServerMount, "is advertised but no MCP server is mounted")
		}
		for i, t := range sm.Transports {
			if (t == TransportStdio || t == TransportStreamableHTTP) && !slices.Contains(s.MCP.Transports, t) {
				p.add(fmt.Sprintf("mcp.serverMount.transports[%d]", i), ruleServerMount, "%q is not served", t)
			}
		}
	}
	if m.Client && !s.MCP.Client {
		p.add("mcp.client", ruleMCPClient, "is claimed but the MCP client is not exposed to pack code")
	}
	return p
}

// protocolDelivery is the fixed delivery class of a protocol host-event
// type, or "" for a type this package does not know.
func protocolDelivery(typ string) Delivery {
	switch typ {
	case negotiationDecided, "host-test.durable-triggered":
		return Durable
	case "channel.presence", "host-test.ephemeral-triggered":
		return Ephemeral
	}
	return ""
}

func checkHostEvents(now time.Time, h *HostEvents, s Served) problems {
	var p problems
	checkLifecycle(&p, "hostEvents", h.Since, h.Until, now, s)
	for i, t := range h.Types {
		field := fmt.Sprintf("hostEvents.types[%d]", i)
		if slices.ContainsFunc(h.Types[:i], func(o HostEventType) bool { return o.Type == t.Type }) {
			p.add(field, ruleEventTypes, "%q is listed twice; a type has one delivery class", t.Type)
			continue
		}
		if want := protocolDelivery(t.Type); want != "" && t.Delivery != want {
			p.add(field+".delivery", ruleHostEventDoc, "%q of %q must be %q", t.Delivery, t.Type, want)
		}
	}
	return p
}

// hostEventsRecord is the hostEvents record the declaration advertises, or
// nil for none: the host's own record, plus {negotiation.decided, durable}
// whenever an inbound surface is advertised (OpenWOP RFC 0242 §B.3). Without a host
// record, an inbound declaration gets a default one.
func hostEventsRecord(d Declaration) *HostEvents {
	inbound := d.inbound()
	if d.HostEvents == nil && !inbound {
		return nil
	}
	h := d.HostEvents.Clone()
	if h == nil {
		h = &HostEvents{}
		h.normalize()
	}
	if inbound && !slices.ContainsFunc(h.Types, func(t HostEventType) bool { return t.Type == negotiationDecided }) {
		h.Types = append(h.Types, HostEventType{Type: negotiationDecided, Delivery: Durable})
	}
	return h
}

func absoluteHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}

func absolutePath(s string) bool {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "" && u.Host == ""
}
