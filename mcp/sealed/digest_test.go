package sealed

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
)

// Pairs of arguments that are the same request.
func TestRequestDigestEquivalent(t *testing.T) {
	cases := []struct{ name, a, b string }{
		{"key order", `{"a":1,"b":2}`, `{"b":2,"a":1}`},
		{"whitespace", `{"a":1,"b":[1,2]}`, " {\n\t\"a\" : 1 ,\r\n \"b\" : [ 1 , 2 ] }\n "},
		{"nested key order", `{"x":{"b":{"d":1,"c":2},"a":[{"z":1,"y":2}]}}`, `{"x":{"a":[{"y":2,"z":1}],"b":{"c":2,"d":1}}}`},
		{"unicode escape of ASCII", `{"k":"\u0041"}`, `{"k":"A"}`},
		{"unicode escape in a name", `{"\u0061":1}`, `{"a":1}`},
		{"escaped slash", `{"k":"a\/b"}`, `{"k":"a/b"}`},
		{"escape of a non-ASCII rune", `{"k":"\u00e9"}`, `{"k":"é"}`},
		{"upper-case hex escape", `{"k":"\u00E9"}`, `{"k":"é"}`},
		{"surrogate pair", `{"k":"\ud83d\ude00"}`, `{"k":"😀"}`},
		{"control escape forms", `{"k":"\u000a\u0009"}`, `{"k":"\n\t"}`},
		{"absent arguments are {}", ``, `{}`},
		{"empty object with spaces", ``, ` { } `},
		{"lone surrogate decodes to U+FFFD", `{"k":"\ud800"}`, `{"k":"\ufffd"}`},
		{"invalid UTF-8 decodes to U+FFFD", "{\"k\":\"\xff\"}", `{"k":"\ufffd"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if da, db := mustDigest(t, "tool", tc.a), mustDigest(t, "tool", tc.b); da != db {
				t.Errorf("digests of %q and %q differ", tc.a, tc.b)
			}
		})
	}
}

// Pairs that are different requests.
func TestRequestDigestDistinct(t *testing.T) {
	cases := []struct{ name, toolA, a, toolB, b string }{
		{"value", "t", `{"a":1}`, "t", `{"a":2}`},
		{"number literal 1 vs 1.0", "t", `{"a":1}`, "t", `{"a":1.0}`},
		{"number literal 1e2 vs 100", "t", `{"a":1e2}`, "t", `{"a":100}`},
		{"number literal 1e2 vs 1E2", "t", `{"a":1e2}`, "t", `{"a":1E2}`},
		{"negative zero", "t", `{"a":0}`, "t", `{"a":-0}`},
		{"string vs number", "t", `{"a":"1"}`, "t", `{"a":1}`},
		{"array order", "t", `[1,2]`, "t", `[2,1]`},
		{"null vs absent member", "t", `{"a":null}`, "t", `{}`},
		{"null vs absent arguments", "t", `null`, "t", ``},
		{"nested", "t", `{"a":{"b":1}}`, "t", `{"a":{"b":"1"}}`},
		{"tool name", "deploy", `{}`, "deploy2", `{}`},
		{"tool name vs argument boundary", "t{", `{}`, "t", `{{}`[1:]},
		{"case of a name", "t", `{"a":1}`, "t", `{"A":1}`},
		{"empty tool name", "", `{}`, "x", `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if mustDigest(t, tc.toolA, tc.a) == mustDigest(t, tc.toolB, tc.b) {
				t.Errorf("(%q, %q) and (%q, %q) share a digest", tc.toolA, tc.a, tc.toolB, tc.b)
			}
		})
	}
}

func TestRequestDigestRefuses(t *testing.T) {
	deep := strings.Repeat("[", MaxArgumentDepth+1) + strings.Repeat("]", MaxArgumentDepth+1)
	cases := []struct {
		name, args string
		reason     error
	}{
		{"duplicate name", `{"a":1,"a":1}`, errDuplicateMember},
		{"duplicate name via escape", `{"a":1,"\u0061":2}`, errDuplicateMember},
		{"nested duplicate", `{"x":[{"b":1,"c":2,"b":3}]}`, errDuplicateMember},
		{"too deep", deep, errTooDeep},
		{"whitespace only", "  ", nil},
		{"two values", `{} {}`, nil},
		{"trailing garbage", `{"a":1}x`, nil},
		{"trailing comma", `{"a":1,}`, nil},
		{"unterminated object", `{"a":1`, nil},
		{"unterminated array", `[1,2`, nil},
		{"unterminated string", `{"a":"x`, nil},
		{"bare word", `nope`, nil},
		{"single quotes", `{'a':1}`, nil},
		{"name not a string", `{1:2}`, nil},
		{"missing colon", `{"a" 1}`, nil},
		{"leading zero", `{"a":01}`, nil},
		{"raw control character", "{\"a\":\"\x01\"}", nil},
		{"mismatched close", `[1}`, nil},
		{"bad escape", `{"a":"\x"}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := RequestDigest("tool", []byte(tc.args))
			if !errors.Is(err, ErrArguments) {
				t.Fatalf("err %v, want ErrArguments", err)
			}
			if tc.reason != nil && !errors.Is(err, tc.reason) {
				t.Errorf("err %v, want reason %v", err, tc.reason)
			}
			if d != ([32]byte{}) {
				t.Error("refusal returned a digest")
			}
		})
	}
	// The depth limit itself is accepted.
	ok := strings.Repeat("[", MaxArgumentDepth) + strings.Repeat("]", MaxArgumentDepth)
	if _, err := RequestDigest("tool", []byte(ok)); err != nil {
		t.Errorf("nesting of exactly MaxArgumentDepth: %v", err)
	}
}

// canonicalInputs feed the canonical-form golden file; each shows one rule.
var canonicalInputs = []string{
	``,
	`{}`,
	`[]`,
	`null`,
	`true`,
	` false `,
	`"text"`,
	`{"b":1,"a":2,"c":{"z":[3,2,1],"y":null}}`,
	`{"k":"\u0041\/\u00e9\ud83d\ude00"}`,
	`{"k":"quote\" backslash\\ slash/ tab\t nl\n cr\r bs\b ff\f nul\u0000 us\u001f del` + "\x7f" + `"}`,
	`{"k":"\u2028\u2029<>&"}`,
	`{"n":[0,-0,1.0,1e2,1E+2,-3.25e-10,12345678901234567890123]}`,
	`{"é":1,"e":2,"z":3,"Z":4,"":5,"😀":6,"ｅ":7}`,
	"{\"k\":\"\xff\xfe\"}",
	`{"k":"\ud800x"}`,
}

func TestCanonicalGolden(t *testing.T) {
	var b strings.Builder
	for _, in := range canonicalInputs {
		out, err := appendCanonicalJSON(nil, []byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		// The canonical form is a fixed point and valid JSON.
		again, err := appendCanonicalJSON(nil, out)
		if err != nil || string(again) != string(out) {
			t.Errorf("canonical form %q is not a fixed point: %q, %v", out, again, err)
		}
		if !json.Valid(out) {
			t.Errorf("canonical form %q is not valid JSON", out)
		}
		fmt.Fprintf(&b, "%q\n\t%s\n", in, out)
	}
	golden.Check(t, "canonical.golden", []byte(b.String()))
}

// requestDigestVectors are cross-checked against an independent
// implementation (Python: json.dumps(sort_keys=True, separators=(",", ":"),
// ensure_ascii=False) over the same domain-separated, length-prefixed
// input); they use no number whose literal Python would rewrite.
var requestDigestVectors = []struct{ tool, args string }{
	{"deploy", `{"env":"prod","replicas":3}`},
	{"deploy", `{"replicas":3,"env":"prod"}`},
	{"approve-expense", `{"amount":125,"currency":"EUR","notes":["a","b"],"meta":{"z":true,"a":null}}`},
	{"t", ``},
	{"t", `{"k":"\u00e9\n\"x\"\u0001"}`},
	{"", `[]`},
	{"tool with spaces", `{"😀":"ok","é":1,"e":2}`},
}

func TestRequestDigestGolden(t *testing.T) {
	var b strings.Builder
	for _, v := range requestDigestVectors {
		d := mustDigest(t, v.tool, v.args)
		fmt.Fprintf(&b, "%q %q\n\t%s\n", v.tool, v.args, hex.EncodeToString(d[:]))
	}
	golden.Check(t, "request_digest.golden", []byte(b.String()))
}

func TestPrincipalDigest(t *testing.T) {
	base := interop.Subject{Tenant: "acme", Workspace: "w", Principal: "alice", Authenticated: true}
	distinct := map[string]interop.Subject{
		"base":                 base,
		"tenant":               {Tenant: "acme2", Workspace: "w", Principal: "alice", Authenticated: true},
		"workspace":            {Tenant: "acme", Workspace: "", Principal: "alice", Authenticated: true},
		"principal":            {Tenant: "acme", Workspace: "w", Principal: "bob", Authenticated: true},
		"anonymous":            {Tenant: "acme", Workspace: "w", Principal: "alice"},
		"boundary moved left":  {Tenant: "acm", Workspace: "ew", Principal: "alice", Authenticated: true},
		"boundary moved right": {Tenant: "acme", Workspace: "wa", Principal: "lice", Authenticated: true},
		"zero":                 {},
	}
	seen := map[[32]byte]string{}
	for name, s := range distinct {
		d := principalDigest(s)
		if other, dup := seen[d]; dup {
			t.Errorf("%s and %s share a principal digest", name, other)
		}
		seen[d] = name
	}
	// Scopes and the Actor do not bind: the same caller may hold a
	// refreshed token with other scopes.
	withScopes := base
	withScopes.Scopes = []string{"approvals:respond"}
	withScopes.Actor = &interop.Subject{Principal: "peer"}
	if principalDigest(withScopes) != principalDigest(base) {
		t.Error("scopes or actor changed the principal digest")
	}
}
