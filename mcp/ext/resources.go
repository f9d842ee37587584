package ext

// resources/list, resources/templates/list and resources/read over
// Config.Resources (OpenWOP interop map, mcp.methods; SEP-2164). Before the host sees a
// URI the mount normalizes it, refuses traversal and refuses any scheme
// outside Config.ResourceSchemes; a URI the host does not know is -32602
// "Resource not found" with data.uri, never an empty contents array.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// maxResourceURI bounds the URIs resources/read accepts.
const maxResourceURI = 2048

// resourcesList answers resources/list: the caller's resources sorted by
// URI, without ones lacking a URI or a name.
func (x *extension) resourcesList(ctx context.Context, env mount.Env, c *mount.Call) ([]byte, error) {
	if err := refuseCursor(c); err != nil {
		return nil, err
	}
	list, err := x.cfg.Resources.ListResources(ctx, c.Subject)
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	out := make([]resourceJSON, 0, len(list))
	for _, r := range list {
		if r != nil && r.URI != "" && r.Name != "" {
			out = append(out, newResourceJSON(r))
		}
	}
	slices.SortStableFunc(out, func(a, b resourceJSON) int { return strings.Compare(a.URI, b.URI) })
	out = slices.CompactFunc(out, func(a, b resourceJSON) bool { return a.URI == b.URI })
	return listResult(env, "resources", out)
}

// resourceTemplatesList answers resources/templates/list, sorted by URI
// template.
func (x *extension) resourceTemplatesList(ctx context.Context, env mount.Env, c *mount.Call) ([]byte, error) {
	if err := refuseCursor(c); err != nil {
		return nil, err
	}
	list, err := x.cfg.Resources.ListResourceTemplates(ctx, c.Subject)
	if err != nil {
		return nil, fmt.Errorf("list resource templates: %w", err)
	}
	out := make([]resourceTemplateJSON, 0, len(list))
	for _, t := range list {
		if t != nil && t.URITemplate != "" && t.Name != "" {
			out = append(out, newResourceTemplateJSON(t))
		}
	}
	slices.SortStableFunc(out, func(a, b resourceTemplateJSON) int { return strings.Compare(a.URITemplate, b.URITemplate) })
	out = slices.CompactFunc(out, func(a, b resourceTemplateJSON) bool { return a.URITemplate == b.URITemplate })
	return listResult(env, "resourceTemplates", out)
}

// uriError is a -32602 naming the URI the request asked for.
func uriError(message, uri string) error {
	return withData(invalidParams(message), struct {
		URI string `json:"uri"`
	}{uri})
}

// resourcesRead answers resources/read.
func (x *extension) resourcesRead(ctx context.Context, env mount.Env, c *mount.Call) ([]byte, error) {
	var uri string
	if raw, _ := c.Params.Get("uri"); json.Unmarshal(raw, &uri) != nil {
		return nil, invalidParams("Invalid params: uri must be a string")
	}
	norm, ok := x.normalizeURI(uri)
	if !ok {
		return nil, uriError("Invalid params: the resource URI is not allowed", uri)
	}
	rp, err := roundOf(c)
	if err != nil {
		return nil, err
	}
	digest, err := sealed.OperationDigest(mount.MethodResourcesRead, norm, nil)
	if err != nil {
		return nil, err // nil arguments always canonicalise
	}
	round, _, err := hostRound(ctx, env, c, rp, digest, false)
	if err != nil {
		return nil, err
	}
	notFound := uriError("Resource not found", uri)
	res, err := x.cfg.Resources.ReadResource(ctx, c.Subject, &ResourceRequest{URI: norm, InputRound: round})
	if err != nil {
		return nil, hostError(err, notFound)
	}
	if res.Input != nil {
		if len(res.Contents) > 0 {
			return nil, errors.New("mcp/ext: resource read returned both contents and an input request")
		}
		return inputRequired(env, c, digest, round.Round, res.Input)
	}
	if len(res.Contents) == 0 {
		return nil, notFound // never an empty contents array (SEP-2164)
	}
	scope := "private"
	if res.Public {
		scope = "public"
	}
	contents, err := contentsListJSON(res.Contents)
	if err != nil {
		return nil, err
	}
	return mount.Marshal(struct {
		ResultType string                 `json:"resultType"`
		TTLMs      int64                  `json:"ttlMs"`
		CacheScope string                 `json:"cacheScope"`
		Contents   []resourceContentsJSON `json:"contents"`
	}{"complete", max(res.TTL.Milliseconds(), 0), scope, contents})
}

// validScheme reports whether sc is an RFC 3986 scheme.
func validScheme(sc string) bool {
	if sc == "" || !isAlpha(sc[0]) {
		return false
	}
	for i := 1; i < len(sc); i++ {
		if c := sc[i]; !isAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// normalizeURI returns the normalized form of a resource URI, or false
// when the URI is refused (OpenWOP interop map, mcp.methods): not absolute, a scheme outside
// the allowlist, user info, a fragment, control characters or
// backslashes, malformed percent-encoding, or a path segment that is "."
// or ".." or hides a separator once percent-decoded. Normalizing
// lowercases the scheme and the authority, decodes percent-encoded
// unreserved characters and uppercases the remaining escapes (RFC 3986
// §6.2.2), so equivalent spellings reach the host as one string.
func (x *extension) normalizeURI(raw string) (string, bool) {
	if raw == "" || len(raw) > maxResourceURI || !utf8.ValidString(raw) {
		return "", false
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f || c == '\\' || c == '#' {
			return "", false
		}
	}
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok || !validScheme(scheme) || !x.schemes[strings.ToLower(scheme)] {
		return "", false
	}
	var b strings.Builder
	b.WriteString(strings.ToLower(scheme))
	b.WriteByte(':')
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		end := strings.IndexAny(after, "/?")
		if end < 0 {
			end = len(after)
		}
		authority := after[:end]
		if strings.Contains(authority, "@") {
			return "", false
		}
		authority, ok := normalizePercent(authority)
		if !ok || !safeSegment(authority) {
			return "", false
		}
		authority = lowerOutsideEscapes(authority)
		b.WriteString("//")
		b.WriteString(authority)
		rest = after[end:]
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	path, ok = normalizePercent(path)
	if !ok {
		return "", false
	}
	for _, seg := range strings.Split(path, "/") {
		if !safeSegment(seg) {
			return "", false
		}
	}
	b.WriteString(path)
	if hasQuery {
		if query, ok = normalizePercent(query); !ok {
			return "", false
		}
		b.WriteByte('?')
		b.WriteString(query)
	}
	return b.String(), true
}

// lowerOutsideEscapes lowercases ASCII letters except the hex digits of
// percent escapes, which normalizePercent left uppercase.
func lowerOutsideEscapes(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '%':
			i += 2 // normalizePercent guarantees two hex digits follow
		case 'A' <= c && c <= 'Z':
			b[i] = c | 0x20
		}
	}
	return string(b)
}

// safeSegment reports whether a path segment (or an authority), once
// percent-decoded, is neither "." nor ".." and hides no separator or NUL.
func safeSegment(seg string) bool {
	dec, err := url.PathUnescape(seg)
	return err == nil && dec != "." && dec != ".." && !strings.ContainsAny(dec, "/\\\x00")
}

// normalizePercent decodes percent-encoded unreserved characters and
// uppercases every other escape; a malformed escape is false.
func normalizePercent(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", false
		}
		v := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isAlpha(v) || '0' <= v && v <= '9' || v == '-' || v == '.' || v == '_' || v == '~' {
			b.WriteByte(v)
		} else {
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(s[i+1 : i+3]))
		}
		i += 2
	}
	return b.String(), true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}
