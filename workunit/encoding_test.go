package workunit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/workunit"
)

var activated = []string{workunit.ExtensionURI}

// The A2A part as a2a-go puts it on the wire (golden bytes), read back by
// a2a-go and opened byte for byte.
func TestA2APartGolden(t *testing.T) {
	e := mustSeal(t, sample)
	wireBytes, err := json.Marshal(e.A2APart())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "a2a-part.json", append(wireBytes, '\n'))
	var back wire.Part
	if err := json.Unmarshal(wireBytes, &back); err != nil {
		t.Fatal(err)
	}
	got, err := workunit.FromA2A([]*wire.Part{wire.NewTextPart("please review"), &back}, activated)
	if err != nil || !bytes.Equal(got.Canonical(), e.Canonical()) || got.Digest() != e.Digest() {
		t.Fatalf("FromA2A: %s %v", got.Canonical(), err)
	}
	host := e.InteropPart()
	got, err = workunit.FromMessage(&interop.Message{Parts: []interop.Part{interop.TextPart("hi"), host}, ActivatedExtensions: activated})
	if err != nil || !bytes.Equal(got.Canonical(), e.Canonical()) {
		t.Fatalf("FromMessage: %v", err)
	}
}

// Why a raw part, measured through a2a-go's JSON encoding: raw bytes and
// a text part come back byte for byte; a data part does not (a2a-go
// escapes <, > and U+2028 on the way out and decodes into maps and
// float64 on the way in), so its bytes no longer match the digest.
func TestOnlyRawAndTextPartsKeepTheBytes(t *testing.T) {
	e := mustSeal(t, sample)
	canonical := e.Canonical()
	through := func(p *wire.Part) *wire.Part {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back wire.Part
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		return &back
	}
	if raw := through(wire.NewRawPart(canonical)).Content.(wire.Raw); !bytes.Equal(raw, canonical) {
		t.Errorf("raw part changed the bytes: %s", raw)
	}
	if text := through(wire.NewTextPart(string(canonical))).Content.(wire.Text); string(text) != string(canonical) {
		t.Errorf("text part changed the bytes: %s", text)
	}
	data := through(wire.NewDataPart(json.RawMessage(canonical))).Content.(wire.Data)
	again, err := json.Marshal(data.Value)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(again, canonical) {
		t.Errorf("a data part kept the bytes; the measurement no longer holds")
	}
	if _, err := workunit.Open(again, e.Digest()); !errors.Is(err, workunit.ErrDigestMismatch) {
		t.Errorf("Open of a data part's bytes: %v", err)
	}
}

// Every refusal of FromA2A and FromMessage, whole error text.
func TestFromA2ARefusals(t *testing.T) {
	e := mustSeal(t, sample)
	other := mustSeal(t, workunit.Unit{Kind: "k", Body: json.RawMessage(`1`)})
	part := func(edit func(p *wire.Part)) []*wire.Part {
		p := e.A2APart()
		edit(p)
		return []*wire.Part{p}
	}
	meta := func(v any) func(p *wire.Part) {
		return func(p *wire.Part) { p.Metadata = map[string]any{workunit.ExtensionURI: v} }
	}
	for _, tc := range []struct {
		name      string
		parts     []*wire.Part
		activated []string
		is        error
		want      string
	}{
		{"not activated", []*wire.Part{e.A2APart()}, nil, workunit.ErrNotActivated, "workunit: extension not activated: the exchange did not activate " + workunit.ExtensionURI},
		{"another extension activated", []*wire.Part{e.A2APart()}, []string{"https://ext.example/v1"}, workunit.ErrNotActivated, "workunit: extension not activated: the exchange did not activate " + workunit.ExtensionURI},
		{"activated in another case", []*wire.Part{e.A2APart()}, []string{strings.ToUpper(workunit.ExtensionURI)}, workunit.ErrNotActivated, "workunit: extension not activated: the exchange did not activate " + workunit.ExtensionURI},
		{"no carrier", []*wire.Part{wire.NewRawPart(e.Canonical()), nil}, activated, workunit.ErrNoUnit, "workunit: no unit: no part carries a unit"},
		{"two carriers", []*wire.Part{e.A2APart(), other.A2APart()}, activated, workunit.ErrMalformed, "workunit: malformed envelope: more than one part carries a unit"},
		{"text carrier", part(func(p *wire.Part) { p.Content = wire.Text(e.Canonical()) }), activated, workunit.ErrMalformed, "workunit: malformed envelope: the unit's part is not a raw part"},
		{"media type", part(func(p *wire.Part) { p.MediaType = "application/json; charset=utf-8" }), activated, workunit.ErrMalformed, "workunit: malformed envelope: the unit's part is not application/json"},
		{"metadata not an object", part(meta(e.Digest())), activated, workunit.ErrMalformed, `workunit: malformed envelope: the unit's part metadata is not {"sha256": digest}`},
		{"metadata with more", part(meta(map[string]any{"sha256": e.Digest(), "alg": "sha256"})), activated, workunit.ErrMalformed, `workunit: malformed envelope: the unit's part metadata is not {"sha256": digest}`},
		{"digest not a string", part(meta(map[string]any{"sha256": 1.0})), activated, workunit.ErrMalformed, `workunit: malformed envelope: the unit's part metadata is not {"sha256": digest}`},
		{"digest of another unit", part(meta(map[string]any{"sha256": other.Digest()})), activated, workunit.ErrDigestMismatch, "workunit: digest mismatch: the unit's bytes do not hash to its digest"},
		{"bytes changed", part(func(p *wire.Part) { p.Content.(wire.Raw)[10] ^= 1 }), activated, workunit.ErrDigestMismatch, "workunit: digest mismatch: the unit's bytes do not hash to its digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workunit.FromA2A(tc.parts, tc.activated)
			if err == nil || err.Error() != tc.want || !errors.Is(err, tc.is) {
				t.Fatalf("FromA2A: %v\nwant %s", err, tc.want)
			}
			// The host's form of the same message is judged alike.
			msg := &interop.Message{ActivatedExtensions: tc.activated}
			for _, p := range tc.parts {
				if p == nil {
					continue
				}
				hp := interop.Part{Kind: interop.PartRaw, MediaType: p.MediaType, Metadata: p.Metadata}
				switch c := p.Content.(type) {
				case wire.Raw:
					hp.Raw = c
				case wire.Text:
					hp.Kind, hp.Text = interop.PartText, string(c)
				}
				msg.Parts = append(msg.Parts, hp)
			}
			if _, err := workunit.FromMessage(msg); err == nil || err.Error() != tc.want {
				t.Fatalf("FromMessage: %v\nwant %s", err, tc.want)
			}
		})
	}
	if _, err := workunit.FromMessage(nil); !errors.Is(err, workunit.ErrNotActivated) {
		t.Fatalf("FromMessage(nil): %v", err)
	}
}

// Activation reads every form A2A-Extensions takes (A2A 1.0 §3.2.6).
func TestActivation(t *testing.T) {
	for values, want := range map[string]bool{
		workunit.ExtensionURI:                                  true,
		"urn:a, " + workunit.ExtensionURI + "\t,urn:b":         true,
		"urn:a|\t" + workunit.ExtensionURI:                     true, // two header lines
		"urn:a," + workunit.ExtensionURI + "x":                 false,
		strings.TrimSuffix(workunit.ExtensionURI, "/v1") + "/": false,
		"": false,
	} {
		if got := workunit.Activated(strings.Split(values, "|")); got != want {
			t.Errorf("Activated(%q) = %v", values, got)
		}
	}
	h := http.Header{}
	h.Add("A2A-Extensions", "urn:other")
	workunit.ActivateHeader(h)
	workunit.ActivateHeader(h)
	if got := h.Values("A2A-Extensions"); len(got) != 2 || got[1] != workunit.ExtensionURI {
		t.Errorf("ActivateHeader: %q", got)
	}
	m := wire.NewMessage(wire.MessageRoleUser)
	workunit.Activate(m)
	workunit.Activate(m)
	if len(m.Extensions) != 1 || m.Extensions[0] != workunit.ExtensionURI {
		t.Errorf("Activate: %q", m.Extensions)
	}
	card := &wire.AgentCard{}
	if workunit.Declared(card) || workunit.Declared(nil) {
		t.Error("Declared without the extension")
	}
	card.Capabilities.Extensions = []wire.AgentExtension{{URI: "urn:x"}, workunit.AgentExtension()}
	if !workunit.Declared(card) || workunit.AgentExtension().Required {
		t.Errorf("Declared: %+v", card.Capabilities)
	}
}

// The MCP argument (golden bytes) opens from a tool's arguments byte for
// byte, also after a client re-encoded them.
func TestMCPArgumentGolden(t *testing.T) {
	e := mustSeal(t, sample)
	arg := e.MCPArgument()
	golden.Check(t, "mcp-argument.json", append(bytes.Clone(arg), '\n'))
	// A client holds the arguments as a map and re-encodes them (member
	// order, escapes): the unit travels as a string and is untouched.
	reencoded, err := json.Marshal(map[string]any{"note": "<b>", workunit.ArgumentName: arg})
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(reencoded, &decoded); err != nil {
		t.Fatal(err)
	}
	if reencoded, err = json.Marshal(decoded); err != nil {
		t.Fatal(err)
	}
	got, err := workunit.FromMCPArguments(reencoded, true)
	if err != nil || !bytes.Equal(got.Canonical(), e.Canonical()) || got.Digest() != e.Digest() {
		t.Fatalf("FromMCPArguments(%s): %v", reencoded, err)
	}
}

// The member's schema accepts what MCPArgument writes and refuses a
// malformed envelope, so a server that validates arguments refuses it
// before any run; Declares reads a tool's schema.
func TestMCPInputSchema(t *testing.T) {
	schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(workunit.InputSchema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://workunit.json", schema); err != nil {
		t.Fatal(err)
	}
	compiled, err := c.Compile("mem://workunit.json")
	if err != nil {
		t.Fatal(err)
	}
	e := mustSeal(t, sample)
	for doc, valid := range map[string]bool{
		string(e.MCPArgument()):                             true,
		`{"sha256":"` + e.Digest() + `"}`:                   false,
		`{"sha256":"xyz","unit":"{}"}`:                      false,
		`{"sha256":"` + e.Digest() + `","unit":{"body":1}}`: false,
		`{"sha256":"` + e.Digest() + `","unit":"{}","x":1}`: false,
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := compiled.Validate(v); (err == nil) != valid {
			t.Errorf("%s: valid %v, got %v", doc, valid, err)
		}
	}
	declaring := json.RawMessage(`{"type":"object","properties":{"x":{},"` + workunit.ArgumentName + `":` + string(workunit.InputSchema()) + `}}`)
	if !workunit.Declares(declaring) || workunit.Declares(json.RawMessage(`{"type":"object","properties":{"x":{}}}`)) ||
		workunit.Declares(json.RawMessage(`{"type":"object","additionalProperties":true}`)) || workunit.Declares(json.RawMessage(`not json`)) {
		t.Error("Declares")
	}
}

// Every refusal of FromMCPArguments, whole error text.
func TestFromMCPArgumentsRefusals(t *testing.T) {
	e := mustSeal(t, sample)
	arg := string(e.MCPArgument())
	name := `"` + workunit.ArgumentName + `"`
	malformed := func(what string) string { return "workunit: malformed envelope: " + what }
	for _, tc := range []struct {
		name      string
		args      string
		activated bool
		is        error
		want      string
	}{
		{"not activated", `{` + name + `:` + arg + `}`, false, workunit.ErrNotActivated, "workunit: extension not activated: the tool does not declare " + workunit.ArgumentName},
		{"arguments not JSON", `{` + name + `:`, true, workunit.ErrMalformed, malformed("the arguments must be a JSON object")},
		{"arguments an array", `[` + arg + `]`, true, workunit.ErrMalformed, malformed("the arguments must be a JSON object")},
		{"no member", `{"x":1}`, true, workunit.ErrNoUnit, "workunit: no unit: the arguments have no " + workunit.ArgumentName},
		{"member in another case", `{` + strings.ToUpper(name) + `:` + arg + `}`, true, workunit.ErrNoUnit, "workunit: no unit: the arguments have no " + workunit.ArgumentName},
		{"member repeated", `{` + name + `:` + arg + `,` + name + `:` + arg + `}`, true, workunit.ErrMalformed, malformed(workunit.ArgumentName + " is repeated")},
		{"value a string", `{` + name + `:"x"}`, true, workunit.ErrMalformed, malformed(workunit.ArgumentName + " must be a JSON object")},
		{"value with more", `{` + name + `:{"sha256":"` + e.Digest() + `","unit":"{}","v":1}}`, true, workunit.ErrMalformed, malformed(workunit.ArgumentName + " has a member other than sha256 and unit")},
		{"digest repeated", `{` + name + `:{"sha256":"` + e.Digest() + `","sha256":"` + e.Digest() + `","unit":"{}"}}`, true, workunit.ErrMalformed, malformed("a member of " + workunit.ArgumentName + " is repeated")},
		{"unit missing", `{` + name + `:{"sha256":"` + e.Digest() + `"}}`, true, workunit.ErrMalformed, malformed(workunit.ArgumentName + ".unit is not a string")},
		{"unit an object", `{` + name + `:{"sha256":"` + e.Digest() + `","unit":{"body":1,"kind":"k"}}}`, true, workunit.ErrMalformed, malformed(workunit.ArgumentName + ".unit is not a string")},
		{"digest a number", `{` + name + `:{"sha256":1,"unit":"{}"}}`, true, workunit.ErrMalformed, malformed(workunit.ArgumentName + ".sha256 is not a string")},
		{"digest of another unit", `{` + name + `:{"sha256":"` + hexSHA256([]byte("x")) + `","unit":` + strings.SplitN(arg, `"unit":`, 2)[1] + "}", true, workunit.ErrDigestMismatch, "workunit: digest mismatch: the unit's bytes do not hash to its digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workunit.FromMCPArguments(json.RawMessage(tc.args), tc.activated)
			if err == nil || err.Error() != tc.want || !errors.Is(err, tc.is) {
				t.Fatalf("FromMCPArguments: %v\nwant %s", err, tc.want)
			}
		})
	}
}
