package facets

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/internal/sharedspec"
)

// Upstream files (shared/spec/openwop-v2, CC BY 4.0, openwop/openwop).
const (
	upstreamA2AFacets = "openwop-v2/spec/v2/facets/a2a.schema.json"
	upstreamMCPFacets = "openwop-v2/spec/v2/facets/mcp.schema.json"
	upstreamFamilies  = "openwop-v2/extracts/capabilities.interop-records.json"
	upstreamHostEvent = "openwop-v2/schemas/v2/host-event.schema.json"
)

// facetSchema compiles a published facet file. The stored a2a file
// predates a2a.agentCards (RFC 0202) and the stored mcp file predates
// mcp.client (RFC 0204); both are in the newer generated family records
// as const true, so the test adds exactly that property before compiling.
func facetSchema(t *testing.T, rel, addProp string) *jsonschema.Schema {
	t.Helper()
	return sharedspec.Schema(t, rel, nil, func(doc map[string]any) {
		props, ok := doc["properties"].(map[string]any)
		if !ok {
			t.Fatalf("%s has no properties", rel)
		}
		if _, ok := props[addProp]; ok {
			t.Fatalf("%s now has %s: drop the patch", rel, addProp)
		}
		props[addProp] = map[string]any{"const": true}
	})
}

// familySchema compiles one generated family record from the extract.
func familySchema(t *testing.T, family string) *jsonschema.Schema {
	t.Helper()
	return sharedspec.Schema(t, upstreamFamilies, nil, func(doc map[string]any) {
		rec := upstreamFamily(t, doc, family)
		clear(doc)
		for k, v := range rec {
			doc[k] = v
		}
	})
}

func upstreamFamily(t *testing.T, doc map[string]any, family string) map[string]any {
	t.Helper()
	fams, _ := doc["families"].(map[string]any)
	rec, ok := fams[family].(map[string]any)
	if !ok {
		t.Fatalf("extract has no %s family", family)
	}
	return rec
}

func TestRecordsPassPublishedSchemas(t *testing.T) {
	v := newTestValidator(t)
	schemas := map[string][]*jsonschema.Schema{
		FamilyA2A: {facetSchema(t, upstreamA2AFacets, "agentCards"), familySchema(t, FamilyA2A)},
		FamilyMCP: {facetSchema(t, upstreamMCPFacets, "client"), familySchema(t, FamilyMCP)},
	}
	typeSchema := hostEventTypeSchema(t)
	for _, h := range hosts() {
		t.Run(h.name, func(t *testing.T) {
			d, s := h.make()
			recs := mustDeclare(t, v, d, s).Records()
			for fam, list := range schemas {
				rec, ok := recs[fam]
				if !ok {
					continue
				}
				for _, sch := range list {
					sharedspec.Validate(t, sch, rec)
				}
			}
			if he, ok := recs[FamilyHostEvents]; ok {
				var r struct{ Types []json.RawMessage }
				if err := json.Unmarshal(he, &r); err != nil {
					t.Fatal(err)
				}
				for _, ty := range r.Types {
					sharedspec.Validate(t, typeSchema, ty)
				}
			}
		})
	}
}

// hostEventTypeSchema checks a hostEvents.types[] entry with the type and
// delivery schemas of the published HostEvent.
func hostEventTypeSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return sharedspec.Schema(t, upstreamHostEvent, nil, func(doc map[string]any) {
		props := doc["properties"].(map[string]any)
		entry := map[string]any{
			"type":                 "object",
			"additionalProperties": false,
			"required":             []any{"type", "delivery"},
			"properties":           map[string]any{"type": props["type"], "delivery": props["delivery"]},
		}
		clear(doc)
		for k, v := range entry {
			doc[k] = v
		}
	})
}

// The OpenWOP conformance suite lets serverUrls[0] be a path joined to the
// base URL (interop.md §The facets); the published
// facet file types it format "uri", which a validator asserting formats
// refuses for a path. The difference is deliberate; this test shows it so
// a change upstream is noticed.
func TestServerURLPathIsADeliberateDifference(t *testing.T) {
	v := newTestValidator(t)
	d, s := mcpServerHost()
	d.MCP.ServerURLs = []string{"/mcp"}
	rec := mustDeclare(t, v, d, s).Records()[FamilyMCP]
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(rec)))
	if err != nil {
		t.Fatal(err)
	}
	if err := facetSchema(t, upstreamMCPFacets, "client").Validate(inst); err == nil {
		t.Fatal("the published mcp facet schema now accepts a path in serverUrls; drop uri-reference from ours")
	}
}

// Wire records both our schema and the published family record refuse,
// and one both accept: the two agree on the lifecycle rule (OpenWOP capabilities.md §2) and the
// bounds (OpenWOP interop.md §The facets, §The MCP round ceiling, §Legacy profiles are absent).
func TestSchemasAgreeOnBadRecords(t *testing.T) {
	v := newTestValidator(t)
	d, s := fullHost()
	ad := mustDeclare(t, v, d, s)
	cases := []struct {
		name   string
		family string
		edit   func(m map[string]any)
		valid  bool
	}{
		{"a2a as advertised", FamilyA2A, func(map[string]any) {}, true},
		{"a2a experimental with until", FamilyA2A, func(m map[string]any) { m["status"], m["until"] = "experimental", "2.3" }, true},
		{"a2a stable with until", FamilyA2A, func(m map[string]any) { m["until"] = "2.3" }, false},
		{"a2a deprecated without until", FamilyA2A, func(m map[string]any) { m["status"] = "deprecated" }, false},
		{"a2a legacy profile", FamilyA2A, func(m map[string]any) { m["profiles"] = []any{"a2a-0.3-legacy"} }, false},
		{"a2a agentCards false", FamilyA2A, func(m map[string]any) { m["agentCards"] = false }, false},
		{"a2a witness unknown", FamilyA2A, func(m map[string]any) { m["witness"] = "self" }, false},
		{"a2a supported flag", FamilyA2A, func(m map[string]any) { m["supported"] = true }, false},
		{"a2a no versions", FamilyA2A, func(m map[string]any) { m["versions"] = []any{} }, false},
		{"mcp as advertised", FamilyMCP, func(map[string]any) {}, true},
		{"mcp maxRounds 17", FamilyMCP, func(m map[string]any) { m["mrtr"] = map[string]any{"maxRounds": 17} }, false},
		{"mcp maxRounds 0", FamilyMCP, func(m map[string]any) { m["mrtr"] = map[string]any{"maxRounds": 0} }, false},
		{"mcp grpc transport", FamilyMCP, func(m map[string]any) { m["serverMount"] = map[string]any{"transports": []any{"grpc"}} }, false},
		{"mcp revision not a date", FamilyMCP, func(m map[string]any) { m["revisions"] = []any{"2026-02-30"} }, false},
		{"mcp legacy profile", FamilyMCP, func(m map[string]any) { m["profiles"] = []any{"mcp-2025-06-18-legacy"} }, false},
		{"mcp client false", FamilyMCP, func(m map[string]any) { m["client"] = false }, false},
		{"mcp missing refreshedAt", FamilyMCP, func(m map[string]any) { delete(m, "refreshedAt") }, false},
	}
	ours := map[string]*jsonschema.Schema{FamilyA2A: v.schemas.a2a, FamilyMCP: v.schemas.mcp}
	theirs := map[string]*jsonschema.Schema{FamilyA2A: familySchema(t, FamilyA2A), FamilyMCP: familySchema(t, FamilyMCP)}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(ad.Records()[c.family], &m); err != nil {
				t.Fatal(err)
			}
			c.edit(m)
			raw, _ := json.Marshal(m)
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
			if err != nil {
				t.Fatal(err)
			}
			for who, sch := range map[string]*jsonschema.Schema{"ours": ours[c.family], "published": theirs[c.family]} {
				if err := sch.Validate(inst); (err == nil) != c.valid {
					t.Errorf("%s schema: valid=%v, want %v (%v)\n%s", who, err == nil, c.valid, err, raw)
				}
			}
		})
	}
}

// Our schemas state the published facts: every keyword value of the
// published family record (after resolving our $refs) is in ours, save
// the listed deliberate differences, each stricter or allowed by a rule.
func TestSchemasStateThePublishedFacts(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(sharedspec.Read(t, upstreamFamilies), &doc); err != nil {
		t.Fatal(err)
	}
	var common map[string]any
	if err := json.Unmarshal(Schema("common"), &common); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]string{
		"/properties/streaming/type":          "ours: const true (OpenWOP capabilities.md §2–§4)",
		"/properties/pushNotifications/type":  "ours: const true (OpenWOP capabilities.md §2–§4)",
		"/properties/durableTasks/type":       "ours: const true (OpenWOP capabilities.md §2–§4)",
		"/properties/serverUrls/items/format": "ours: uri-reference, the OpenWOP conformance suite allows a path",
	}
	for _, fam := range []string{FamilyA2A, FamilyMCP} {
		t.Run(fam, func(t *testing.T) {
			var ours map[string]any
			if err := json.Unmarshal(Schema(fam), &ours); err != nil {
				t.Fatal(err)
			}
			want := facts(upstreamFamily(t, doc, fam), common)
			got := facts(ours, common)
			for path, w := range want {
				if why, ok := allowed[path]; ok {
					t.Logf("%s differs on purpose: %s", path, why)
					continue
				}
				if g, ok := got[path]; !ok || g != w {
					t.Errorf("%s: published %s, ours %s", path, w, g)
				}
			}
		})
	}
	t.Run("hostEvents", func(t *testing.T) {
		var he, ours map[string]any
		if err := json.Unmarshal(sharedspec.Read(t, upstreamHostEvent), &he); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(Schema("hostEvents"), &ours); err != nil {
			t.Fatal(err)
		}
		want := facts(map[string]any{"properties": map[string]any{
			"type": he["properties"].(map[string]any)["type"], "delivery": he["properties"].(map[string]any)["delivery"],
		}}, common)
		got := facts(ours["properties"].(map[string]any)["types"].(map[string]any)["items"].(map[string]any), common)
		for path, w := range want {
			if g := got[path]; g != w {
				t.Errorf("types[]%s: published %s, ours %s", path, w, g)
			}
		}
	})
}

// facts flattens a schema to JSON-pointer → keyword value, resolving our
// references into common and leaving out prose and the allOf lifecycle
// rule (checked by behaviour in TestSchemasAgreeOnBadRecords).
func facts(schema, common map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(node map[string]any, path string)
	walk = func(node map[string]any, path string) {
		if ref, ok := node["$ref"].(string); ok {
			name, found := strings.CutPrefix(ref, "common.schema.json#/$defs/")
			if def, isMap := common["$defs"].(map[string]any)[name].(map[string]any); found && isMap {
				walk(def, path)
			}
		}
		for k, v := range node {
			switch k {
			case "$ref", "$schema", "$id", "$comment", "title", "description", "allOf", "x-openwop-facets-from":
				continue
			}
			p := path + "/" + k
			switch x := v.(type) {
			case map[string]any:
				walk(x, p)
			case []any:
				if k == "enum" || k == "required" {
					strs := make([]string, 0, len(x))
					for _, e := range x {
						strs = append(strs, fmt.Sprint(e))
					}
					slices.Sort(strs)
					out[p] = strings.Join(strs, ",")
					continue
				}
				b, _ := json.Marshal(x)
				out[p] = string(b)
			default:
				b, _ := json.Marshal(x)
				out[p] = string(b)
			}
		}
	}
	walk(schema, "")
	return out
}
