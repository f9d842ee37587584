package wopinterop

import (
	"net/http"
	"path"
	"slices"
	"strings"
)

// Route is one handler of the host's surfaces and the requests it answers
// (the (path, handler) pair connect-go hands out), so any router can mount
// it.
type Route struct {
	// Pattern is a URL path, without method or host. A Pattern ending in
	// "/" is a prefix: it matches every path that begins with it
	// (http.ServeMux's subtree pattern, chi's "/*", gorilla/mux's
	// PathPrefix); only the HTTP+JSON subtree, A2AConfig.Path+"/rest/", is
	// one. Every other Pattern matches exactly that path. A route takes
	// every method: its surface answers a wrong one in its protocol's
	// shape, so a router must not answer it first with a 405 of its own.
	Pattern string
	// Handler serves what Pattern matches. It reads the request's URL path
	// as the client sent it (the HTTP+JSON handler strips its own prefix),
	// so mount it where the router leaves r.URL.Path alone.
	Handler http.Handler
}

// Routes are the configured surfaces' routes, in this order: the public
// agent card at A2A.CardPath, JSON-RPC at A2A.Path, and with HTTPJSON the
// HTTP+JSON interface at A2A.Path+"/rest" and the prefix
// A2A.Path+"/rest/"; then the MCP server at MCP.Path. The slice is the
// caller's; wrap any handler in per-route middleware. A server of
// [Host.NewMCP] is not listed: mount the Route it returned.
func (h *Host) Routes() []Route { return slices.Clone(h.routes) }

// Mount registers [Host.Routes] on mux. Like any ServeMux registration it
// panics when a pattern is already taken; mount once per mux.
func (h *Host) Mount(mux *http.ServeMux) {
	for _, rt := range h.routes {
		mux.Handle(rt.Pattern, rt.Handler)
	}
}

// basePaths are the paths of the host's routes, a prefix without its
// trailing "/".
func (h *Host) basePaths() []string {
	paths := make([]string, 0, len(h.routes))
	for _, rt := range h.routes {
		paths = append(paths, strings.TrimSuffix(rt.Pattern, "/"))
	}
	return paths
}

// mountPath cleans a configured mount path: "" is def, the result is
// absolute, clean, not "/" (which would swallow the host's own routes), and
// free of the characters ServeMux patterns give meaning to.
func mountPath(p, def string) (string, bool) {
	if p == "" {
		return def, true
	}
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "{}% \t\r\n?#") {
		return p, false
	}
	p = path.Clean(p)
	return p, p != "/"
}
