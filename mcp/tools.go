package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/internal/authcache"
	"github.com/wopinterop/wopinterop/internal/schemacheck"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// discover answers server/discover (OpenWOP interop map, mcp.methods): supportedVersions are the
// policy's offered revisions in the policy's order, capabilities.extensions
// exactly the extensions served, and the result is the same for every
// caller (cacheScope public).
func (s *Server) discover(_ context.Context, _ *call) (answer, error) {
	type capability struct{}
	result := struct {
		ResultType        string   `json:"resultType"`
		TTLMs             int64    `json:"ttlMs"`
		CacheScope        string   `json:"cacheScope"`
		SupportedVersions []string `json:"supportedVersions"`
		Capabilities      struct {
			Tools       capability                 `json:"tools"`
			Prompts     *capability                `json:"prompts,omitempty"`
			Resources   *capability                `json:"resources,omitempty"`
			Completions *capability                `json:"completions,omitempty"`
			Extensions  map[string]json.RawMessage `json:"extensions,omitempty"`
		} `json:"capabilities"`
	}{ResultType: "complete", TTLMs: s.listTTLMs(), CacheScope: "public", SupportedVersions: s.deps.Policy.Offered()}
	// A capability of the extension is advertised exactly when it is
	// served, so discovery never promises a method that answers -32601.
	if s.ext.Prompts {
		result.Capabilities.Prompts = &capability{}
	}
	if s.ext.Resources {
		result.Capabilities.Resources = &capability{}
	}
	if s.ext.Completions {
		result.Capabilities.Completions = &capability{}
	}
	for _, ext := range extensions(s.opts.Tasks) {
		if result.Capabilities.Extensions == nil {
			result.Capabilities.Extensions = map[string]json.RawMessage{}
		}
		result.Capabilities.Extensions[ext] = json.RawMessage(`{}`)
	}
	return answerOf(result)
}

// toolsPageSize is the longest tools/list page; a caller with more tools
// gets an opaque cursor.
const toolsPageSize = 100

// toolsList answers tools/list (OpenWOP interop map, mcp.methods): the workflows the caller may
// start, sorted by name, identical for every connection of the caller and
// cached per authorization context.
func (s *Server) toolsList(ctx context.Context, c *call) (answer, error) {
	set, err := s.tools.get(ctx, c.Subject)
	if err != nil {
		return answer{}, err
	}
	start := 0
	if raw, ok := c.Params.Get("cursor"); ok && string(raw) != "null" {
		var cursor string
		after, ok := "", json.Unmarshal(raw, &cursor) == nil
		if ok {
			after, ok = decodeCursor(cursor)
		}
		if !ok {
			return answer{}, errInvalidParams("Invalid params: unknown cursor")
		}
		start, _ = slices.BinarySearchFunc(set.sorted, after, func(t *tool, name string) int { return strings.Compare(t.name, name) })
		if start < len(set.sorted) && set.sorted[start].name == after {
			start++
		}
	}
	page := set.firstPage
	if start != 0 {
		page = s.encodeToolsPage(set.sorted, start)
	}
	return answer{body: page}, nil
}

// tool is one of the caller's tools: a workflow, or a native tool of the
// extension, with its compiled input schema, its effective
// execution.taskSupport and its encoded Tool object.
type tool struct {
	name string
	// workflowID is the workflow a call starts a run of ("" for a native
	// tool).
	workflowID string
	native     bool
	support    string
	schema     *jsonschema.Schema
	json       []byte
}

// toolSet is one authorization context's tools.
type toolSet struct {
	sorted    []*tool
	byName    map[string]*tool
	firstPage []byte
}

// toolCache keeps each authorization context's tool list for ListTTL. The
// key is tenant, workspace, principal, authentication, the sorted scopes
// and the forwarding actor: whatever the host could authorize on
// (OpenWOP interop map, mcp.methods and mcp.cache).
type toolCache struct {
	s    *Server
	sets *authcache.Cache[*toolSet]
}

// maxToolSets bounds the cache.
const maxToolSets = 4096

func newToolCache(s *Server) *toolCache {
	return &toolCache{s: s, sets: authcache.New[*toolSet](s.opts.ListTTL, maxToolSets)}
}

// get returns the caller's tools, from the cache while fresh.
func (tc *toolCache) get(ctx context.Context, sub interop.Subject) (*toolSet, error) {
	key := authcache.Key(sub)
	now := tc.s.now()
	if set, ok := tc.sets.Get(key, now); ok {
		return set, nil
	}
	set, err := tc.build(ctx, sub)
	if err != nil {
		return nil, err
	}
	tc.sets.Put(key, sub.Tenant, set, now)
	return set, nil
}

// InvalidateTools drops the cached tool lists of tenant ("" drops every
// tenant's), so the next tools/list or tools/call reads the workflows from
// the store again. Call it when a tenant's workflows or a caller's
// authorizations change; otherwise lists refresh after ListTTL.
func (s *Server) InvalidateTools(tenant string) { s.tools.sets.Invalidate(tenant) }

// build reads the caller's workflows and native tools and encodes them as
// tools.
func (tc *toolCache) build(ctx context.Context, sub interop.Subject) (*toolSet, error) {
	wfs, err := tc.s.deps.Store.ListWorkflows(ctx, sub)
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", err)
	}
	set := &toolSet{byName: make(map[string]*tool, len(wfs))}
	for _, wf := range wfs {
		if wf.ID == "" || set.byName[wf.ID] != nil {
			continue
		}
		t := &tool{name: wf.ID, workflowID: wf.ID, support: taskSupport(wf.TaskSupport, interop.TaskOptional)}
		tc.add(ctx, set, t, wf.Name, wf.Description, wf.InputSchema)
	}
	if err := tc.addNative(ctx, sub, set); err != nil {
		return nil, err
	}
	slices.SortFunc(set.sorted, func(a, b *tool) int { return strings.Compare(a.name, b.name) })
	set.firstPage = tc.s.encodeToolsPage(set.sorted, 0)
	return set, nil
}

// addNative adds the extension's native tools to set. A name that is
// empty, repeated or already a workflow's leaves the tool out (logged).
func (tc *toolCache) addNative(ctx context.Context, sub interop.Subject, set *toolSet) error {
	if tc.s.opts.Extension == nil {
		return nil
	}
	natives, err := tc.s.opts.Extension.ListTools(ctx, sub)
	if err != nil {
		return fmt.Errorf("list native tools: %w", err)
	}
	for _, nt := range natives {
		if nt.Name == "" || set.byName[nt.Name] != nil {
			tc.s.log.WarnContext(ctx, "mcp: native tool left out of tools/list: empty or duplicate name", "tool", nt.Name)
			continue
		}
		t := &tool{name: nt.Name, native: true, support: taskSupport(nt.TaskSupport, interop.TaskForbidden)}
		tc.add(ctx, set, t, nt.Title, nt.Description, nt.InputSchema)
	}
	return nil
}

// add compiles t's input schema ({"type":"object"} when empty), encodes t
// and adds it to set. A tool whose schema is not a JSON object or does not
// compile cannot be validated, so it is left out (and logged) rather than
// served unchecked; so is one that cannot be encoded.
func (tc *toolCache) add(ctx context.Context, set *toolSet, t *tool, title, description string, schema json.RawMessage) {
	s := tc.s
	what, key := "workflow", "workflow"
	if t.native {
		what, key = "native tool", "tool"
	}
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	var err error
	if t.schema, err = s.schemas.Compile(schema); err != nil {
		s.log.WarnContext(ctx, "mcp: "+what+" left out of tools/list: input schema unusable", key, t.name, "error", err)
		return
	}
	if t.json, err = s.encodeTool(t.name, title, description, schema, t.support); err != nil {
		s.log.WarnContext(ctx, "mcp: "+what+" left out of tools/list: not encodable", key, t.name, "error", err)
		return
	}
	set.byName[t.name] = t
	set.sorted = append(set.sorted, t)
}

// encodeTool encodes one Tool object: for a workflow name = workflow id
// and title = workflow name; inputSchema verbatim; execution.taskSupport
// when the tasks extension is served.
func (s *Server) encodeTool(name, title, description string, inputSchema json.RawMessage, support string) ([]byte, error) {
	type execution struct {
		TaskSupport string `json:"taskSupport"`
	}
	t := struct {
		Name        string          `json:"name"`
		Title       string          `json:"title,omitempty"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Execution   *execution      `json:"execution,omitempty"`
	}{Name: name, Title: title, Description: description, InputSchema: inputSchema}
	if s.opts.Tasks {
		t.Execution = &execution{TaskSupport: support}
	}
	return mount.Marshal(t)
}

// taskSupport is a tool's execution.taskSupport: "" reads as unset (optional
// for a workflow, forbidden for a native tool) and an unknown value as
// forbidden (the safe reading).
func taskSupport(declared, unset string) string {
	switch declared {
	case "":
		return unset
	case interop.TaskOptional, interop.TaskRequired:
		return declared
	}
	return interop.TaskForbidden
}

// encodeToolsPage encodes the ListToolsResult holding tools[start:] up to
// one page, with nextCursor when more follow.
func (s *Server) encodeToolsPage(tools []*tool, start int) []byte {
	end := min(start+toolsPageSize, len(tools))
	b := []byte(`{"resultType":"complete","ttlMs":`)
	b = strconv.AppendInt(b, s.listTTLMs(), 10)
	b = append(b, `,"cacheScope":"private","tools":[`...)
	for i, t := range tools[start:end] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t.json...)
	}
	b = append(b, ']')
	if end < len(tools) {
		b = append(b, `,"nextCursor":`...)
		b = mount.AppendString(b, encodeCursor(tools[end-1].name))
	}
	return append(b, '}')
}

// A cursor names the last tool of the previous page, so it stays
// meaningful when the list changes between pages.
const cursorPrefix = "after:"

func encodeCursor(lastName string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + lastName))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !bytes.HasPrefix(b, []byte(cursorPrefix)) {
		return "", false
	}
	return string(b[len(cursorPrefix):]), true
}

// lookupTool finds the caller's tool by name.
func (s *Server) lookupTool(ctx context.Context, sub interop.Subject, name string) (*tool, error) {
	set, err := s.tools.get(ctx, sub)
	if err != nil {
		return nil, err
	}
	if t := set.byName[name]; t != nil {
		return t, nil
	}
	return nil, errInvalidParams("Invalid params: unknown tool")
}

// schemaCache compiles each input schema once (shared with the A2A
// surface, which validates SendMessage inputs the same way).
type schemaCache = schemacheck.Cache

func newSchemaCache() *schemaCache { return schemacheck.NewCache() }

// validateArguments checks arguments against a tool's schema before any
// run exists (OpenWOP interop map, mcp.methods). The refusal names the first failing location
// and keyword, never a schema URL.
func validateArguments(sch *jsonschema.Schema, args json.RawMessage) *Error {
	f := schemacheck.Check(sch, args)
	switch {
	case f == nil:
		return nil
	case f.Malformed:
		return errInvalidParams("Invalid params: arguments are not valid JSON")
	}
	reason := f.Reason
	if reason == "" {
		reason = "does not match the input schema"
	}
	return errInvalidParams("Invalid params: arguments do not match the tool's input schema").withData(struct {
		Field  string `json:"field"`
		Reason string `json:"reason"`
	}{"arguments" + f.Pointer, reason})
}
