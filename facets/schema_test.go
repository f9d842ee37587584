package facets

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Wire shapes the Go types cannot produce, but a record handed around as
// JSON can: each is refused with a message naming the field.
func TestSchemaWording(t *testing.T) {
	v := newTestValidator(t)
	base := func() map[string]any {
		d, _ := fullHost()
		d.normalize()
		raw, _ := json.Marshal(d.A2A)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return m
	}
	cases := []struct {
		name          string
		edit          func(m map[string]any)
		field, rule   string
		reasonContain string
	}{
		{"unknown key", func(m map[string]any) { m["supportedTransports"] = []any{"grpc"} },
			"a2a.supportedTransports", rulePresence, "is not a field of the a2a record"},
		{"false facet", func(m map[string]any) { m["streaming"] = false },
			"a2a.streaming", rulePresence, "may only be true"},
		{"missing required", func(m map[string]any) { delete(m, "refreshedAt") },
			"a2a.refreshedAt", "", "is required"},
		{"stable with until", func(m map[string]any) { m["until"] = "2.1" },
			"a2a.until", ruleStatus, "must be absent when status is stable"},
		{"wrong type", func(m map[string]any) { m["versions"] = "1.0" },
			"a2a.versions", "", "want array"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := base()
			c.edit(m)
			ps := checkRecord(v.schemas.a2a, "a2a", m)
			for _, p := range ps {
				if p.Field == c.field && p.Rule == c.rule && strings.Contains(p.Reason, c.reasonContain) {
					return
				}
			}
			t.Fatalf("no %s/%s ~ %q in %v", c.field, c.rule, c.reasonContain, ps.err())
		})
	}
}

func TestSchemaAccessor(t *testing.T) {
	for _, name := range []string{"a2a", "mcp", "hostEvents", "common"} {
		b := Schema(name)
		if _, err := jsonschema.UnmarshalJSON(bytes.NewReader(b)); err != nil {
			t.Errorf("Schema(%q) is not JSON: %v", name, err)
		}
	}
	if Schema("grpc") != nil {
		t.Error("Schema of an unknown family is not nil")
	}
	// The accessor hands out copies.
	Schema("a2a")[0] = 'X'
	if Schema("a2a")[0] != '{' {
		t.Error("Schema shares the embedded bytes")
	}
}
