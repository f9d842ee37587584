package facets

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Our own JSON Schemas (2020-12) of the records this package writes. The
// strings are immutable, so embedding them adds no mutable package state.
var (
	//go:embed schema/common.schema.json
	commonSchemaJSON string
	//go:embed schema/a2a.schema.json
	a2aSchemaJSON string
	//go:embed schema/mcp.schema.json
	mcpSchemaJSON string
	//go:embed schema/hostevents.schema.json
	hostEventsSchemaJSON string
	//go:embed schema/agents.schema.json
	agentsSchemaJSON string
)

const schemaBase = "https://github.com/wopinterop/wopinterop/facets/schema/"

// Schema returns the JSON Schema of a family record ("a2a", "mcp",
// "hostEvents" or "agents") and of the definitions they share ("common"), or nil for
// any other name.
func Schema(name string) []byte {
	switch name {
	case "a2a":
		return []byte(a2aSchemaJSON)
	case "mcp":
		return []byte(mcpSchemaJSON)
	case "hostEvents":
		return []byte(hostEventsSchemaJSON)
	case "agents":
		return []byte(agentsSchemaJSON)
	case "common":
		return []byte(commonSchemaJSON)
	}
	return nil
}

// schemas are the compiled record schemas.
type schemas struct {
	a2a, mcp, hostEvents, agents *jsonschema.Schema
}

func compileSchemas() (*schemas, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, r := range []struct{ file, text string }{
		{"common.schema.json", commonSchemaJSON},
		{"a2a.schema.json", a2aSchemaJSON},
		{"mcp.schema.json", mcpSchemaJSON},
		{"hostevents.schema.json", hostEventsSchemaJSON},
		{"agents.schema.json", agentsSchemaJSON},
	} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.text))
		if err != nil {
			return nil, fmt.Errorf("facets: embedded schema %s: %w", r.file, err)
		}
		if err := c.AddResource(schemaBase+r.file, doc); err != nil {
			return nil, fmt.Errorf("facets: embedded schema %s: %w", r.file, err)
		}
	}
	var s schemas
	for _, t := range []struct {
		file string
		dst  **jsonschema.Schema
	}{
		{"a2a.schema.json", &s.a2a},
		{"mcp.schema.json", &s.mcp},
		{"hostevents.schema.json", &s.hostEvents},
		{"agents.schema.json", &s.agents},
	} {
		sch, err := c.Compile(schemaBase + t.file)
		if err != nil {
			return nil, fmt.Errorf("facets: embedded schema %s: %w", t.file, err)
		}
		*t.dst = sch
	}
	return &s, nil
}

// checkRecord encodes record and validates the wire bytes against sch,
// reporting each violation as a FieldError under family.
func checkRecord(sch *jsonschema.Schema, family string, record any) problems {
	raw, err := json.Marshal(record)
	if err != nil {
		return problems{{Field: family, Reason: "cannot be encoded: " + err.Error()}}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return problems{{Field: family, Reason: "cannot be decoded: " + err.Error()}}
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return problems{{Field: family, Reason: err.Error()}}
	}
	var out problems
	for _, leaf := range leaves(ve) {
		out = append(out, leafProblems(family, leaf)...)
	}
	// The validator's cause order follows map iteration; sort for stable
	// messages.
	slices.SortStableFunc(out, func(a, b *FieldError) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	return slices.CompactFunc(out, func(a, b *FieldError) bool { return *a == *b })
}

func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// fieldName turns an instance location into "family.a.b[2]".
func fieldName(family string, loc []string) string {
	var sb strings.Builder
	sb.WriteString(family)
	for _, tok := range loc {
		if isIndex(tok) {
			sb.WriteString("[" + tok + "]")
		} else {
			sb.WriteString("." + tok)
		}
	}
	return sb.String()
}

// isIndex reports whether a location token is an array index; no record
// key is numeric.
func isIndex(tok string) bool {
	if tok == "" {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return false
		}
	}
	return true
}

// leafProblems words one schema violation. The lifecycle rule (OpenWOP capabilities.md §2) and the
// true-only booleans (OpenWOP interop.md §REST is the wire; capabilities.md §2–§4) get their own wording; everything else keeps the
// validator's message.
func leafProblems(family string, leaf *jsonschema.ValidationError) problems {
	at := fieldName(family, leaf.InstanceLocation)
	lifecycle := strings.Contains(leaf.SchemaURL, "/$defs/lifecycle")
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		var out problems
		for _, m := range k.Missing {
			if lifecycle {
				out.add(at+"."+m, ruleStatus, "is required when status is experimental or deprecated")
			} else {
				out.add(at+"."+m, "", "is required")
			}
		}
		return out
	case *kind.Not:
		if lifecycle {
			var out problems
			out.add(at+".until", ruleStatus, "must be absent when status is stable")
			return out
		}
	case *kind.AdditionalProperties:
		var out problems
		for _, p := range k.Properties {
			out.add(at+"."+p, rulePresence, "is not a field of the %s record", family)
		}
		return out
	case *kind.Const:
		if k.Want == true {
			var out problems
			out.add(at, rulePresence, "may only be true; omit a facet that is not offered")
			return out
		}
	}
	var out problems
	out.add(at, "", "%s", leafMessage(leaf))
	return out
}

// leafMessage is the validator's text for one violation without its
// location prefix.
func leafMessage(leaf *jsonschema.ValidationError) string {
	bare := &jsonschema.ValidationError{SchemaURL: leaf.SchemaURL, ErrorKind: leaf.ErrorKind}
	return strings.TrimPrefix(bare.Error(), "at '': ")
}
