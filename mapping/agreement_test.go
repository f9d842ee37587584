package mapping

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/internal/sharedspec"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/interop"
)

const (
	upstreamMapPath    = "openwop-v2/spec/v2/interop-map.json"
	upstreamSchemaPath = "openwop-v2/spec/v2/interop-map.schema.json"
)

// loadUpstream loads the published map with our Load: it must pass our
// schema and every consistency check.
func loadUpstream(t *testing.T) *Map {
	t.Helper()
	m, err := Load(sharedspec.Read(t, upstreamMapPath))
	if err != nil {
		t.Fatalf("Load(published map) = %v", err)
	}
	return m
}

// upstreamSchema compiles the published interop-map schema.
func upstreamSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw := sharedspec.Read(t, upstreamSchemaPath)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://openwop.dev/spec/v2/interop-map.schema.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateWith(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

func TestPublishedMapPassesBothSchemas(t *testing.T) {
	loadUpstream(t)
	if err := validateWith(t, upstreamSchema(t), sharedspec.Read(t, upstreamMapPath)); err != nil {
		t.Fatalf("published schema refuses the published map: %v", err)
	}
}

// Our map differs from the published schema's view only by the newer
// facts: drop every `reason` and point $schema at the published file, and
// the published schema accepts it.
func TestOurMapFitsPublishedSchemaButForReasons(t *testing.T) {
	s := upstreamSchema(t)
	if err := validateWith(t, s, []byte(builtinJSON)); err == nil {
		t.Fatal("published schema accepts our map as is; the reason rows should be new to it")
	}
	doc := builtinTree(t)
	doc["$schema"] = "./interop-map.schema.json"
	for _, r := range arr(doc, "a2a", "errors") {
		delete(r.(map[string]any), "reason")
	}
	if err := validateWith(t, s, encodeTree(t, doc)); err != nil {
		t.Errorf("published schema refuses our map for more than the reasons: %v", err)
	}
}

// Loading the published map and writing it back is stable.
func TestPublishedMapRoundTrips(t *testing.T) {
	m := loadUpstream(t)
	once, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Load(once)
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	twice, err := again.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(once, twice) {
		t.Error("JSON is not stable across a reload")
	}
}

// THE AGREEMENT TEST: every row the published map has, ours has with the
// same facts; where ours is newer (the credential override row, the
// ErrorInfo reasons) exactly that differs.
func TestAgreesWithPublishedMap(t *testing.T) {
	up := index(loadUpstream(t))
	our := index(Builtin())

	t.Run("header and pins", func(t *testing.T) {
		if up.Version() != our.Version() {
			t.Errorf("version %d vs %d", up.Version(), our.Version())
		}
		if d := cmp.Diff(up.Pins(), our.Pins()); d != "" {
			t.Errorf("pins (-published +ours):\n%s", d)
		}
	})

	opFacts := func(ops []interopmap.Operation) []interopmap.Operation {
		out := make([]interopmap.Operation, len(ops))
		for i, o := range ops {
			o.Rule = "" // prose is ours
			out[i] = o
		}
		return out
	}
	t.Run("a2a.operations", func(t *testing.T) {
		if d := cmp.Diff(opFacts(up.A2AOperations()), opFacts(our.A2AOperations())); d != "" {
			t.Errorf("(-published +ours):\n%s", d)
		}
	})
	t.Run("mcp.methods", func(t *testing.T) {
		if d := cmp.Diff(opFacts(up.MCPMethods()), opFacts(our.MCPMethods())); d != "" {
			t.Errorf("(-published +ours):\n%s", d)
		}
	})
	t.Run("mcp.tasks.methods", func(t *testing.T) {
		if !up.HasMCPTasks() || !our.HasMCPTasks() {
			t.Fatalf("mcp.tasks present: published %v, ours %v", up.HasMCPTasks(), our.HasMCPTasks())
		}
		if d := cmp.Diff(opFacts(up.MCPTaskMethods()), opFacts(our.MCPTaskMethods())); d != "" {
			t.Errorf("(-published +ours):\n%s", d)
		}
	})

	t.Run("a2a.taskState", func(t *testing.T) {
		var ourDefaults, ourOverrides, upOverrides []interopmap.StateRow
		for _, r := range our.TaskStateRows() {
			if r.InterruptKind == "" {
				ourDefaults = append(ourDefaults, r)
			} else {
				ourOverrides = append(ourOverrides, r)
			}
		}
		var upDefaults []interopmap.StateRow
		for _, r := range up.TaskStateRows() {
			if r.InterruptKind == "" {
				upDefaults = append(upDefaults, r)
			} else {
				upOverrides = append(upOverrides, r)
			}
		}
		if d := cmp.Diff(upDefaults, ourDefaults); d != "" {
			t.Errorf("default rows (-published +ours):\n%s", d)
		}
		if len(upOverrides) != 0 {
			t.Errorf("the published map now has override rows %+v; compare them with ours", upOverrides)
		}
		wantNew := []interopmap.StateRow{{RunStatus: interop.StatusWaitingInput, InterruptKind: interop.InterruptCredential,
			Stored: interopmap.StoredAuthRequired, Wire: a2a.TaskStateAuthRequired}}
		if d := cmp.Diff(wantNew, ourOverrides); d != "" {
			t.Errorf("our override rows (-want +got):\n%s", d)
		}
		// Behaviour: the two projections agree on every (status, kind) pair
		// except the credential override.
		kinds := []interop.InterruptKind{"", interop.InterruptApproval, interop.InterruptClarification,
			interop.InterruptExternalEvent, interop.InterruptCredential}
		for _, s := range interop.AllStatuses() {
			for _, k := range kinds {
				u, uok := up.TaskState(s, k)
				o, ook := our.TaskState(s, k)
				if !uok || !ook {
					t.Fatalf("TaskState(%s, %q): published %v, ours %v", s, k, uok, ook)
				}
				newer := s == interop.StatusWaitingInput && k == interop.InterruptCredential
				if newer {
					if u.Wire != a2a.TaskStateInputRequired || o.Wire != a2a.TaskStateAuthRequired {
						t.Errorf("credential: published %s, ours %s", u.Wire, o.Wire)
					}
				} else if u != o {
					t.Errorf("TaskState(%s, %q): published %+v, ours %+v", s, k, u, o)
				}
			}
		}
	})

	t.Run("a2a.taskStateReverse", func(t *testing.T) {
		facts := func(rows []interopmap.ReverseRow) []interopmap.ReverseRow {
			for i := range rows {
				rows[i].Note = ""
			}
			return rows
		}
		if d := cmp.Diff(facts(up.ReverseRows()), facts(our.ReverseRows())); d != "" {
			t.Errorf("(-published +ours):\n%s", d)
		}
		for i, r := range up.ReverseRows() {
			if (r.Note == "") != (our.ReverseRows()[i].Note == "") {
				t.Errorf("row %s: note present published %v, ours %v", r.Wire, r.Note != "", our.ReverseRows()[i].Note != "")
			}
		}
	})

	t.Run("a2a.errors", func(t *testing.T) {
		wantReasons := map[int]string{
			-32001: "TASK_NOT_FOUND", -32002: "TASK_NOT_CANCELABLE", -32003: "PUSH_NOTIFICATION_NOT_SUPPORTED",
			-32004: "UNSUPPORTED_OPERATION", -32005: "CONTENT_TYPE_NOT_SUPPORTED", -32006: "INVALID_AGENT_RESPONSE",
			-32007: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", -32008: "EXTENSION_SUPPORT_REQUIRED",
			-32009: "VERSION_NOT_SUPPORTED", -32602: "",
		}
		type facts struct {
			Upstream         string
			JSONRPC          int
			GRPC             string
			HTTP             int
			ClientProjection string
			RaisedAsServer   bool
			HasNote          bool
		}
		project := func(rows []interopmap.ErrorRow) []facts {
			out := make([]facts, len(rows))
			for i, r := range rows {
				out[i] = facts{r.Upstream, r.JSONRPC, r.GRPC, r.HTTP, r.ClientProjection, r.ServerWhen != "", r.Note != ""}
			}
			return out
		}
		if d := cmp.Diff(project(up.A2AErrors()), project(our.A2AErrors())); d != "" {
			t.Errorf("(-published +ours):\n%s", d)
		}
		for _, r := range up.A2AErrors() {
			if r.Reason != "" {
				t.Errorf("the published map now has reason %q on %d; compare it with ours", r.Reason, r.JSONRPC)
			}
		}
		ours := our.A2AErrors()
		if len(ours) != len(wantReasons) {
			t.Fatalf("%d error rows, want %d", len(ours), len(wantReasons))
		}
		for _, r := range ours {
			want, ok := wantReasons[r.JSONRPC]
			if !ok || r.Reason != want {
				t.Errorf("%d: reason %q, want %q", r.JSONRPC, r.Reason, want)
			}
		}
	})

	t.Run("mcp.features", func(t *testing.T) {
		facts := func(fs []interopmap.Feature) []interopmap.Feature {
			for i := range fs {
				fs[i].Meaning = ""
			}
			return fs
		}
		if d := cmp.Diff(facts(up.Features()), facts(our.Features())); d != "" {
			t.Errorf("(-published +ours):\n%s", d)
		}
	})

	t.Run("mcp.tasks.status", func(t *testing.T) {
		facts := func(rows []interopmap.TaskStatusRow) []interopmap.TaskStatusRow {
			for i := range rows {
				rows[i].Note = ""
			}
			return rows
		}
		if d := cmp.Diff(facts(up.MCPTaskStatusRows()), facts(our.MCPTaskStatusRows())); d != "" {
			t.Errorf("(-published +ours):\n%s", d)
		}
		for _, s := range interop.AllStatuses() {
			u, _ := up.MCPTaskStatus(s)
			o, _ := our.MCPTaskStatus(s)
			if u != o {
				t.Errorf("MCPTaskStatus(%s): published %s, ours %s", s, u, o)
			}
		}
	})

	t.Run("element sections", func(t *testing.T) {
		for _, s := range []interopmap.Section{interopmap.SectionA2ACard, interopmap.SectionA2AFields, interopmap.SectionMCPHeaders, interopmap.SectionMCPMeta,
			interopmap.SectionMCPMRTR, interopmap.SectionMCPCache, interopmap.SectionMCPAuthorization, interopmap.SectionMCPTaskFields} {
			names := func(rows []interopmap.Element) []string {
				out := make([]string, len(rows))
				for i, r := range rows {
					out[i] = r.Element
				}
				return out
			}
			if d := cmp.Diff(names(up.Elements(s)), names(our.Elements(s))); d != "" {
				t.Errorf("%s elements (-published +ours):\n%s", s, d)
			}
		}
	})
}

// Our rule texts are our own: no rule, meaning or note of ours repeats the
// published wording.
func TestProseIsOurOwn(t *testing.T) {
	var up, our any
	if err := json.Unmarshal(sharedspec.Read(t, upstreamMapPath), &up); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(builtinJSON), &our); err != nil {
		t.Fatal(err)
	}
	prose := func(v any) map[string]bool {
		out := map[string]bool{}
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if s, ok := e.(string); ok && (k == "rule" || k == "meaning" || k == "note" || k == "serverWhen" || k == "$comment") {
						out[s] = true
					}
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
		return out
	}
	upProse := prose(up)
	for s := range prose(our) {
		if upProse[s] {
			t.Errorf("our text repeats the published text: %q", s)
		}
	}
}
