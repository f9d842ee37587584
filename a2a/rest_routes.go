package a2a

// HTTP+JSON routing (A2A 1.0.1 §11): an escaped path is parsed into its
// route pattern and the values in it, and the pattern and the verb pick a
// row of the operation table. A known path with a verb no row takes is
// 405 with the verbs its rows do take.

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Route patterns, relative to the mount and to a /{tenant} segment.
const (
	routeSend      = "message:send"
	routeStream    = "message:stream"
	routeCard      = "extendedAgentCard"
	routeTasks     = "tasks"
	routeTask      = "tasks/{id}"
	routeCancel    = "tasks/{id}:cancel"
	routeSubscribe = "tasks/{id}:subscribe"
	routeConfigs   = "tasks/{id}/pushNotificationConfigs"
	routeConfig    = "tasks/{id}/pushNotificationConfigs/{configId}"
)

// Path segments. A routing value this library mints is always 24
// characters (isolation.RoutingValueLen), so it can never be a top-level
// one.
const (
	segTasks     = "tasks"
	segPush      = "pushNotificationConfigs"
	actionCancel = "cancel"
	actionSub    = "subscribe"
)

// restRoute is a matched HTTP+JSON request.
type restRoute struct {
	op *operation
	// tenant is the percent-decoded /{tenant} segment; "" on the host
	// interface.
	tenant string
	// task is the task id as it arrived (still to be parsed).
	task string
	// config is the percent-decoded push config id.
	config string
}

// restRefusal is an unmatched request: its error and, for a wrong verb, the
// Allow header.
type restRefusal struct {
	err   *Error
	allow string
}

// matchREST maps a verb and an escaped path to a row of the operation
// table.
func matchREST(verb, path string) (restRoute, *restRefusal) {
	rt, pattern, ok := parseRESTPath(path)
	if !ok {
		return rt, &restRefusal{err: routeNotFound()}
	}
	for i := range operationTable {
		op := &operationTable[i]
		if op.route == pattern && slices.Contains(op.verbs, verb) {
			rt.op = op
			return rt, nil
		}
	}
	return rt, &restRefusal{err: methodNotAllowed(), allow: allowed(pattern)}
}

// allowed lists the verbs of the rows of pattern for an Allow header.
func allowed(pattern string) string {
	var verbs []string
	for _, verb := range [...]string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		for i := range operationTable {
			if op := &operationTable[i]; op.route == pattern && slices.Contains(op.verbs, verb) {
				verbs = append(verbs, verb)
				break
			}
		}
	}
	return strings.Join(verbs, ", ")
}

// parseRESTPath parses an escaped path into its route pattern and values.
func parseRESTPath(path string) (rt restRoute, pattern string, ok bool) {
	path = strings.TrimPrefix(path, "/")
	first, rest, more := strings.Cut(path, "/")
	switch first {
	case routeSend, routeStream, segTasks, routeCard:
	case "":
		return rt, "", false
	default:
		tenant, err := url.PathUnescape(first)
		if err != nil {
			// Kept as sent: it resolves to nothing and is answered like any
			// never-minted value.
			tenant = first
		}
		rt.tenant = tenant
		first, rest, more = strings.Cut(rest, "/")
	}
	switch {
	case !more && (first == routeSend || first == routeStream || first == routeCard || first == segTasks):
		return rt, first, true
	case first == segTasks:
		return parseTaskPath(rt, rest)
	}
	return rt, "", false
}

// parseTaskPath parses what follows /tasks/: {id}, {id}:cancel,
// {id}:subscribe, {id}/pushNotificationConfigs[/{cid}], where {id} is one
// segment or the two segments of an unescaped bound id.
func parseTaskPath(rt restRoute, rest string) (restRoute, string, bool) {
	var buf [4]string
	segs, ok := splitSegments(&buf, rest)
	if !ok {
		return rt, "", false
	}
	if push := slices.Index(segs[1:], segPush) + 1; push > 0 {
		// {id} is one or two segments; a config id at most one.
		if push > 2 || len(segs)-push > 2 {
			return rt, "", false
		}
		rt.task = joinIDSegments(segs[:push])
		if len(segs) == push+1 {
			return rt, routeConfigs, true
		}
		cid, err := url.PathUnescape(segs[push+1])
		if err != nil {
			cid = segs[push+1]
		}
		rt.config = cid
		return rt, routeConfig, true
	}
	if len(segs) > 2 {
		return rt, "", false
	}
	last := segs[len(segs)-1]
	pattern := routeTask
	if i := strings.LastIndexByte(last, ':'); i >= 0 {
		switch last[i+1:] {
		case actionCancel:
			pattern, segs[len(segs)-1] = routeCancel, last[:i]
		case actionSub:
			pattern, segs[len(segs)-1] = routeSubscribe, last[:i]
		}
	}
	rt.task = joinIDSegments(segs)
	return rt, pattern, true
}

// splitSegments splits the rest of a task path into its at most four
// non-empty segments, held in segs.
func splitSegments(segs *[4]string, rest string) ([]string, bool) {
	n := 0
	for {
		seg, tail, more := strings.Cut(rest, "/")
		if seg == "" || n == len(segs) {
			return nil, false
		}
		segs[n] = seg
		n++
		if !more {
			return segs[:n], true
		}
		rest = tail
	}
}

// joinIDSegments returns the task id of one segment as sent (ParseID
// decodes it), or of two segments percent-decoded and joined with '/'. A
// segment that does not decode yields an id that does not parse.
func joinIDSegments(segs []string) string {
	if len(segs) == 1 {
		return segs[0]
	}
	t, err1 := url.PathUnescape(segs[0])
	o, err2 := url.PathUnescape(segs[1])
	if err1 != nil || err2 != nil {
		return ""
	}
	return t + "/" + o
}
