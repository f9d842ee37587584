package remote

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listed is one item of a server's list, with the digest of its
// definition.
type listed struct {
	name string
	// digest is "" when the server listed the name more than once: an
	// ambiguous item matches no admission.
	digest string
	item   any // *mcp.Tool, *mcp.Resource or *mcp.Prompt
}

// listKind is one of the lists a session projects through its admission.
type listKind struct {
	method string
	kind   string // the item's kind in an *AdmissionError
	page   func(ctx context.Context, cs *mcp.ClientSession, cursor string) (items []listed, next string, err error)
}

var (
	toolsList = listKind{method: methodListTools, kind: "tool",
		page: func(ctx context.Context, cs *mcp.ClientSession, cursor string) ([]listed, string, error) {
			res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			out := make([]listed, 0, len(res.Tools))
			for _, t := range res.Tools {
				out = append(out, listed{name: t.Name, digest: ToolDigest(t), item: t})
			}
			return out, res.NextCursor, nil
		}}
	resourcesList = listKind{method: methodListResources, kind: "resource",
		page: func(ctx context.Context, cs *mcp.ClientSession, cursor string) ([]listed, string, error) {
			res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			out := make([]listed, 0, len(res.Resources))
			for _, r := range res.Resources {
				if r != nil {
					out = append(out, listed{name: r.URI, digest: ResourceDigest(r), item: r})
				}
			}
			return out, res.NextCursor, nil
		}}
	promptsList = listKind{method: methodListPrompts, kind: "prompt",
		page: func(ctx context.Context, cs *mcp.ClientSession, cursor string) ([]listed, string, error) {
			res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			out := make([]listed, 0, len(res.Prompts))
			for _, p := range res.Prompts {
				if p != nil {
					out = append(out, listed{name: p.Name, digest: PromptDigest(p), item: p})
				}
			}
			return out, res.NextCursor, nil
		}}
)

// Tools returns the tools the server lists that the admission admits with
// the digest they are listed with now, in the server's order. Discovery
// is not permission (admission-boundaries §18.3): a tool the admission
// does not name, or whose definition changed since it was admitted, is
// left out, and calling it is refused before anything is sent.
//
// The list follows the server's pagination up to the admission's MaxPages
// ([*ListError] past it) and is served from the client's cache while
// fresh (see [Client] and [Options].ListTTL). The tools returned are
// copies; their schemas are shared with the cache and must not be
// modified.
func (s *Session) Tools(ctx context.Context) ([]*mcp.Tool, error) {
	items, err := s.list(ctx, toolsList)
	if err != nil {
		return nil, err
	}
	want := make(map[string]string, len(s.Admission.Tools))
	for _, t := range s.Admission.Tools {
		want[t.Name] = t.Digest
	}
	return project[mcp.Tool](items, want), nil
}

// Resources is Tools for the server's resources (resources/list), each
// admitted by URI with its [ResourceDigest].
func (s *Session) Resources(ctx context.Context) ([]*mcp.Resource, error) {
	items, err := s.list(ctx, resourcesList)
	if err != nil {
		return nil, err
	}
	want := make(map[string]string, len(s.Admission.Resources))
	for _, r := range s.Admission.Resources {
		want[r.URI] = r.Digest
	}
	return project[mcp.Resource](items, want), nil
}

// Prompts is Tools for the server's prompts (prompts/list), each admitted
// by name with its [PromptDigest].
func (s *Session) Prompts(ctx context.Context) ([]*mcp.Prompt, error) {
	items, err := s.list(ctx, promptsList)
	if err != nil {
		return nil, err
	}
	want := make(map[string]string, len(s.Admission.Prompts))
	for _, p := range s.Admission.Prompts {
		want[p.Name] = p.Digest
	}
	return project[mcp.Prompt](items, want), nil
}

// project keeps the items admitted with the digest they are listed with,
// as shallow copies.
func project[T any](items []listed, want map[string]string) []*T {
	var out []*T
	for _, it := range items {
		if d, ok := want[it.name]; ok && it.digest != "" && d == it.digest {
			c := *it.item.(*T)
			out = append(out, &c)
		}
	}
	return out
}

// admitted is the check the call path makes before it sends tools/call:
// it returns the tool as the server lists it now when the admission
// admits it with that definition, and otherwise an [*AdmissionError] —
// NotAdmitted without anything sent, NotListed or Changed after a
// tools/list (or the cache). Nothing naming the tool is ever sent when it
// fails.
func (s *Session) admitted(ctx context.Context, name string) (*mcp.Tool, error) {
	want, ok := "", false
	for _, t := range s.Admission.Tools {
		if t.Name == name {
			want, ok = t.Digest, true
			break
		}
	}
	if !ok && name != "" && name == s.unlisted {
		return &mcp.Tool{Name: name}, nil // a server without tools/list: see AdmitUnlisted
	}
	if !ok {
		return nil, &AdmissionError{Alias: s.Admission.Alias, Kind: toolsList.kind, Name: name, Problem: NotAdmitted}
	}
	items, err := s.list(ctx, toolsList)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if it.name != name {
			continue
		}
		if it.digest == "" || it.digest != want {
			return nil, &AdmissionError{Alias: s.Admission.Alias, Kind: toolsList.kind, Name: name, Problem: Changed}
		}
		t := *it.item.(*mcp.Tool)
		return &t, nil
	}
	return nil, &AdmissionError{Alias: s.Admission.Alias, Kind: toolsList.kind, Name: name, Problem: NotListed}
}

// list returns the whole list of kind — from the cache while fresh, else
// fetched page by page — as the server lists it to this session's
// authorization context.
func (s *Session) list(ctx context.Context, kind listKind) ([]listed, error) {
	l := s.link
	key, err := s.cacheKey(ctx, kind.method)
	if err != nil {
		return nil, exchangeError(s.Admission.Alias, kind.method, err)
	}
	if items, ok := l.client.cache.get(key); ok {
		l.listening(ctx) // the session relies on a cached list: hear when it goes stale
		return items, nil
	}
	gen := l.client.cache.generation()
	ctx, cancel := context.WithTimeout(ctx, s.Admission.Limits.Timeout)
	defer cancel()
	ctx, hints := withListHints(ctx)
	ctx, slot := withFaultSlot(ctx)
	var items []listed
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == s.Admission.Limits.MaxPages {
			return nil, &ListError{Alias: s.Admission.Alias, Method: kind.method, Problem: "the list has more pages than the admission's MaxPages"}
		}
		got, next, err := kind.page(ctx, l.cs, cursor)
		if err != nil {
			return nil, slot.attach(exchangeError(s.Admission.Alias, kind.method, err))
		}
		if hints.inputRequired {
			// An interim result is never cached nor used (OpenWOP interop
			// map, mcp.mrtr); the host answers input only for a call.
			return nil, &ListError{Alias: s.Admission.Alias, Method: kind.method, Problem: "the server asked for input to complete the list", InputRequired: true}
		}
		items = append(items, got...)
		if next == "" {
			break
		}
		if seen[next] {
			return nil, &ListError{Alias: s.Admission.Alias, Method: kind.method, Problem: "the server repeated a pagination cursor"}
		}
		seen[next] = true
		cursor = next
	}
	items = markAmbiguous(items)
	if l.client.cache.putFetched(key, items, hints.minTTLMs, gen) {
		l.listening(ctx)
	}
	return items, nil
}

// markAmbiguous clears the digest of every name listed more than once, so
// that no admission matches either entry.
func markAmbiguous(items []listed) []listed {
	count := make(map[string]int, len(items))
	for _, it := range items {
		count[it.name]++
	}
	for i := range items {
		if count[items[i].name] > 1 {
			items[i].digest = ""
		}
	}
	return items
}

// cacheKey is the key of this session's list of method: the admission's
// tenant, workspace and principal, the server's endpoint, the negotiated
// revision, and the authorization context — the credential's reference
// and the fingerprint of the value presented now.
func (s *Session) cacheKey(ctx context.Context, method string) (cacheKey, error) {
	l := s.link
	fp := ""
	if l.credential != nil {
		v, err := l.credential(ctx)
		if err != nil {
			return cacheKey{}, err
		}
		fp = l.client.fingerprint(v)
	}
	a := &s.Admission
	return cacheKey{
		tenant: a.Tenant, workspace: a.Workspace, principal: a.Principal,
		server: l.endpoint, revision: s.Version,
		credential: credentialIdentity(a.Credential), fingerprint: fp,
		method: method,
	}, nil
}
