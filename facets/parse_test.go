package facets

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The golden advertisements are valid declarations: they parse back to
// what produced them.
func TestParseDeclarationRoundTrip(t *testing.T) {
	v := newTestValidator(t)
	for _, h := range hosts() {
		t.Run(h.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", h.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			d, err := ParseDeclaration(raw)
			if err != nil {
				t.Fatalf("ParseDeclaration: %v", err)
			}
			want, s := h.make()
			ad := mustDeclare(t, v, want, s)
			if diff := cmp.Diff(ad.A2A(), d.A2A); diff != "" {
				t.Errorf("a2a (-declared +parsed):\n%s", diff)
			}
			if diff := cmp.Diff(ad.MCP(), d.MCP); diff != "" {
				t.Errorf("mcp (-declared +parsed):\n%s", diff)
			}
			if diff := cmp.Diff(ad.HostEvents(), d.HostEvents); diff != "" {
				t.Errorf("hostEvents (-declared +parsed):\n%s", diff)
			}
			if diff := cmp.Diff(ad.Agents(), d.Agents); diff != "" {
				t.Errorf("agents (-declared +parsed):\n%s", diff)
			}
			if _, err := v.Declare(testNow, d, s); err != nil {
				t.Errorf("parsed declaration refused: %v", err)
			}
		})
	}
}

func TestParseA2AAndMCP(t *testing.T) {
	a, err := ParseA2A([]byte(`{"versions":["1.0"],"refreshedAt":"2026-11-20","streaming":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (&A2A{Versions: []string{"1.0"}, RefreshedAt: "2026-11-20", Streaming: true}); !cmp.Equal(a, want) {
		t.Errorf("ParseA2A = %+v", a)
	}
	m, err := ParseMCP([]byte(`{"revisions":["2026-07-28"],"serverMount":{"transports":["stdio"]},"mrtr":{"maxRounds":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.ServerMount == nil || m.ServerMount.Transports[0] != "stdio" || m.MRTR.MaxRounds != 3 {
		t.Errorf("ParseMCP = %+v", m)
	}
	// "false" decodes to the omitted facet.
	a, err = ParseA2A([]byte(`{"streaming":false}`))
	if err != nil || a.Streaming {
		t.Errorf("ParseA2A(streaming false) = %+v, %v", a, err)
	}
}

func TestParseRefusesLooseJSON(t *testing.T) {
	cases := []struct {
		name, doc, want string
		parse           func([]byte) error
	}{
		{"repeated member", `{"versions":["1.0"],"versions":["2.0"]}`, `member "versions" repeated`, parseA2A},
		{"repeated nested member", `{"serverMount":{"transports":[],"transports":["stdio"]}}`, `member "transports" repeated`, parseMCP},
		{"unknown member", `{"versions":["1.0"],"supportedTransports":["grpc"]}`, "supportedTransports", parseA2A},
		{"member of another record", `{"revisions":["2026-07-28"]}`, "revisions", parseA2A},
		{"case variant", `{"Versions":["1.0"]}`, `unknown member "Versions"`, parseA2A},
		{"nested case variant", `{"mrtr":{"MaxRounds":3}}`, `unknown member "MaxRounds"`, parseMCP},
		{"data after the document", `{} {}`, "data after the document", parseA2A},
		{"not an object", `["1.0"]`, "not an object", parseA2A},
		{"null", `null`, "not an object", parseA2A},
		{"empty", ``, "empty document", parseA2A},
		{"syntax", `{"versions":`, "unexpected EOF", parseA2A},
		{"wrong type", `{"versions":"1.0"}`, "cannot unmarshal", parseA2A},
		{"fractional rounds", `{"mrtr":{"maxRounds":1.5}}`, "cannot unmarshal", parseMCP},
		{"declaration unknown family", `{"grpc":{}}`, "grpc", parseDeclaration},
		{"declaration case variant", `{"A2A":{}}`, `unknown member "A2A"`, parseDeclaration},
		{"settings are not wire members", `{"RefreshWindow":1}`, "RefreshWindow", parseA2A},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.parse([]byte(c.doc))
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("parse(%s) = %v, want ErrMalformed mentioning %q", c.doc, err, c.want)
			}
		})
	}
}

func parseA2A(b []byte) error         { _, err := ParseA2A(b); return err }
func parseMCP(b []byte) error         { _, err := ParseMCP(b); return err }
func parseDeclaration(b []byte) error { _, err := ParseDeclaration(b); return err }

// FuzzParseDeclaration: whatever parses re-encodes to bytes that parse to
// the same declaration, and validating it never panics.
func FuzzParseDeclaration(f *testing.F) {
	for _, name := range []string{"full.golden", "mcp-server.golden", "client-only.golden"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"a2a":{"versions":["1.0"],"versions":[]}}`))
	f.Add([]byte(`{"mcp":{"mrtr":{"maxRounds":17},"serverMount":{"transports":["grpc"]}}}`))
	f.Add([]byte(`{"hostEvents":{"types":[{"type":"negotiation.decided","delivery":"ephemeral"}]}}`))
	f.Add([]byte(`{"a2a":{"Versions":["1.0"]}}`))
	f.Add([]byte(`{"a2a":null,"mcp":{}}`))
	v := newTestValidator(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDeclaration(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		again, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		d2, err := ParseDeclaration(again)
		if err != nil {
			t.Fatalf("re-parse %s: %v", again, err)
		}
		if !cmp.Equal(d, d2, cmp.Comparer(equalDecl)) {
			t.Fatalf("round trip changed the declaration:\n%s\n%s", data, again)
		}
		err = v.validate(testNow, d, Served{})
		for _, fe := range FieldErrors(err) {
			if fe.Field == "" || fe.Reason == "" {
				t.Fatalf("unnamed problem %#v", fe)
			}
		}
		if ad, err := v.Declare(testNow, d, Served{}); err == nil {
			if _, err := json.Marshal(ad); err != nil {
				t.Fatalf("advertisement does not encode: %v", err)
			}
		}
	})
}

// equalDecl compares declarations by their wire encoding, where a nil and
// an empty list are the same omitted facet.
func equalDecl(a, b Declaration) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
