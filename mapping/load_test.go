package mapping

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/internal/interopmap"
)

// The embedded file passes the full Load, schema included; Builtin relies
// on this to skip the schema step.
func TestBuiltinPassesLoad(t *testing.T) {
	m, err := Load([]byte(builtinJSON))
	if err != nil {
		t.Fatalf("Load(builtin) = %v", err)
	}
	a, _ := m.JSON()
	b, _ := Builtin().JSON()
	if !bytes.Equal(a, b) {
		t.Error("Load and Builtin serve different maps")
	}
}

// Golden: data/interopmap.json is stored in the canonical form JSON
// writes, so what Builtin serves is the file byte for byte. The module's
// one -update switch (internal/golden) rewrites it in that form.
func TestBuiltinGolden(t *testing.T) {
	const path = "data/interopmap.json"
	file := readFile(t, path)
	if golden.Updating() {
		m, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.JSON()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skip("rewrote " + path + "; rebuild to embed it")
	}
	if !bytes.Equal(file, []byte(builtinJSON)) {
		t.Fatal("embedded bytes differ from the file (rebuild)")
	}
	got, err := Builtin().JSON()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(file), string(got)); d != "" {
		t.Errorf("Builtin().JSON() differs from %s (-file +served); run go test -update:\n%s", path, d)
	}
	compact, err := json.Marshal(Builtin())
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, file); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(compact, want.Bytes()) {
		t.Errorf("MarshalJSON is not the compact file:\n got %s\nwant %s", compact, want.Bytes())
	}
}

func TestBuiltinIsFresh(t *testing.T) {
	if Builtin() == Builtin() {
		t.Error("Builtin returned a shared *Map")
	}
}

func TestSchemaIsOurs(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal([]byte(schemaJSON), &s); err != nil {
		t.Fatal(err)
	}
	if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" || s["$id"] != schemaURL {
		t.Errorf("schema header: $schema %v $id %v", s["$schema"], s["$id"])
	}
}

// rowCase mutates our data and names the consistency problems Load must
// report, exactly.
type rowCase struct {
	name   string
	mutate func(doc map[string]any)
	want   []RowError
}

func TestLoadRefusesInconsistentMaps(t *testing.T) {
	cases := []rowCase{
		{"forward projection not total", func(d map[string]any) {
			setArr(d, without(arr(d, "a2a", "taskState"), 9), "a2a", "taskState") // failed
		}, []RowError{{"a2a.taskState", -1, "failed", string(interopmap.ProblemMissingStatus)}}},
		{"second default row", func(d map[string]any) {
			rows := arr(d, "a2a", "taskState")
			setArr(d, append(rows, cloneRow(rows[1].(map[string]any))), "a2a", "taskState")
		}, []RowError{{"a2a.taskState", 11, "running", string(interopmap.ProblemDuplicateStatus)}}},
		{"duplicate override", func(d map[string]any) {
			rows := arr(d, "a2a", "taskState")
			setArr(d, append(rows, cloneRow(rows[6].(map[string]any))), "a2a", "taskState")
		}, []RowError{{"a2a.taskState", 11, "waiting-input/credential", string(interopmap.ProblemDuplicateOverride)}}},
		{"override kind that never yields its status", func(d map[string]any) {
			row(d, 6, "a2a", "taskState")["interruptKind"] = "approval"
		}, []RowError{{"a2a.taskState", 6, "waiting-input/approval", string(interopmap.ProblemOverrideKind)}}},
		{"unknown a2a facet in requires", func(d map[string]any) {
			row(d, 8, "a2a", "operations")["requires"] = []any{"a2a.streaming", "a2a.teleport"}
		}, []RowError{{"a2a.operations", 8, "a2a.teleport", string(interopmap.ProblemUnknownFacet)}}},
		{"facet of the other family", func(d map[string]any) {
			row(d, 4, "a2a", "operations")["requires"] = []any{"a2a.serverMount"}
		}, []RowError{{"a2a.operations", 4, "a2a.serverMount", string(interopmap.ProblemUnknownFacet)}}},
		{"unknown family in mcp.methods", func(d map[string]any) {
			row(d, 1, "mcp", "methods")["requires"] = []any{"rest.serverMount"}
		}, []RowError{{"mcp.methods", 1, "rest.serverMount", string(interopmap.ProblemUnknownFacet)}}},
		{"unknown facet in mcp.tasks.methods", func(d map[string]any) {
			row(d, 0, "mcp", "tasks", "methods")["requires"] = []any{"mcp.tasks"}
		}, []RowError{{"mcp.tasks.methods", 0, "mcp.tasks", string(interopmap.ProblemUnknownFacet)}}},
		{"duplicate JSON-RPC code", func(d map[string]any) {
			row(d, 1, "a2a", "errors")["jsonrpc"] = -32001
		}, []RowError{{"a2a.errors", 1, "-32001", string(interopmap.ProblemDuplicateCode)}}},
		{"duplicate reason", func(d map[string]any) {
			row(d, 1, "a2a", "errors")["reason"] = "TASK_NOT_FOUND"
		}, []RowError{{"a2a.errors", 1, "TASK_NOT_FOUND", string(interopmap.ProblemDuplicateReason)}}},
		{"duplicate error name", func(d map[string]any) {
			row(d, 9, "a2a", "errors")["upstream"] = "TaskNotFoundError"
		}, []RowError{{"a2a.errors", 9, "TaskNotFoundError", string(interopmap.ProblemDuplicateName)}}},
		{"duplicate reverse wire", func(d map[string]any) {
			row(d, 7, "a2a", "taskStateReverse")["wire"] = "TASK_STATE_FAILED"
		}, []RowError{{"a2a.taskStateReverse", 7, "TASK_STATE_FAILED", string(interopmap.ProblemDuplicateWire)}}},
		{"forward state that does not read back", func(d map[string]any) {
			setArr(d, without(arr(d, "a2a", "taskStateReverse"), 6), "a2a", "taskStateReverse") // CANCELED
		}, []RowError{{"a2a.taskState", 10, "TASK_STATE_CANCELED", string(interopmap.ProblemNoReverse)}}},
		{"mcp task status not total", func(d map[string]any) {
			setArr(d, without(arr(d, "mcp", "tasks", "status"), 4), "mcp", "tasks", "status") // waiting-external
		}, []RowError{{"mcp.tasks.status", -1, "waiting-external", string(interopmap.ProblemMissingStatus)}}},
		{"mcp task status twice, another missing", func(d map[string]any) {
			row(d, 0, "mcp", "tasks", "status")["runStatus"] = "running"
		}, []RowError{
			{"mcp.tasks.status", 1, "running", string(interopmap.ProblemDuplicateStatus)},
			{"mcp.tasks.status", -1, "pending", string(interopmap.ProblemMissingStatus)},
		}},
		{"duplicate feature", func(d map[string]any) {
			row(d, 3, "mcp", "features")["id"] = "mrtr"
		}, []RowError{{"mcp.features", 3, "mrtr", string(interopmap.ProblemDuplicateFeature)}}},
	}
	loader, err := newLoader()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := builtinTree(t)
			tc.mutate(doc)
			m, err := loader.load(encodeTree(t, doc))
			if m != nil {
				t.Fatal("Load returned a map")
			}
			if !errors.Is(err, ErrInconsistent) || errors.Is(err, ErrSchema) || errors.Is(err, ErrDecode) {
				t.Fatalf("Load = %v, want ErrInconsistent only", err)
			}
			var got []RowError
			for _, re := range rowErrors(err) {
				got = append(got, *re)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("row errors (-want +got):\n%s", d)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w.Section) || !strings.Contains(err.Error(), w.Key) {
					t.Errorf("message %q does not name %s %s", err, w.Section, w.Key)
				}
			}
		})
	}
}

func TestRowErrorMessage(t *testing.T) {
	tests := []struct {
		e    RowError
		want string
	}{
		{RowError{"a2a.taskState", -1, "failed", string(interopmap.ProblemMissingStatus)}, `mapping: a2a.taskState: no row for run status "failed"`},
		{RowError{"a2a.errors", 3, "-32001", string(interopmap.ProblemDuplicateCode)}, `mapping: a2a.errors[3]: duplicate JSON-RPC code "-32001"`},
	}
	for _, tc := range tests {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestLoadRefusesSchemaViolations(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(d map[string]any)
		location string
	}{
		{"unknown run status", func(d map[string]any) { row(d, 0, "a2a", "taskState")["runStatus"] = "sleeping" }, "/a2a/taskState/0/runStatus"},
		{"unknown reverse status", func(d map[string]any) { row(d, 2, "a2a", "taskStateReverse")["runStatus"] = "asleep" }, "/a2a/taskStateReverse/2/runStatus"},
		{"unknown mcp run status", func(d map[string]any) { row(d, 2, "mcp", "tasks", "status")["runStatus"] = "idle" }, "/mcp/tasks/status/2/runStatus"},
		{"unknown task status", func(d map[string]any) { row(d, 2, "mcp", "tasks", "status")["taskStatus"] = "paused" }, "/mcp/tasks/status/2/taskStatus"},
		{"unknown wire state", func(d map[string]any) { row(d, 1, "a2a", "taskState")["wire"] = "TASK_STATE_NAPPING" }, "/a2a/taskState/1/wire"},
		{"0.3 wire spelling", func(d map[string]any) { row(d, 1, "a2a", "taskStateReverse")["wire"] = "working" }, "/a2a/taskStateReverse/1/wire"},
		{"unknown interrupt kind", func(d map[string]any) { row(d, 6, "a2a", "taskState")["interruptKind"] = "telepathy" }, "/a2a/taskState/6/interruptKind"},
		{"unknown member", func(d map[string]any) { row(d, 0, "a2a", "errors")["retry"] = true }, "/a2a/errors/0"},
		{"http status not an error", func(d map[string]any) { row(d, 0, "a2a", "errors")["http"] = 200 }, "/a2a/errors/0/http"},
		{"fractional code", func(d map[string]any) { row(d, 0, "a2a", "errors")["jsonrpc"] = -32001.5 }, "/a2a/errors/0/jsonrpc"},
		{"unknown gRPC code", func(d map[string]any) { row(d, 0, "a2a", "errors")["grpc"] = "ABORTED" }, "/a2a/errors/0/grpc"},
		{"reason not UPPER_SNAKE", func(d map[string]any) { row(d, 0, "a2a", "errors")["reason"] = "task_not_found" }, "/a2a/errors/0/reason"},
		{"missing serverWhen", func(d map[string]any) { delete(row(d, 0, "a2a", "errors"), "serverWhen") }, "/a2a/errors/0"},
		{"requires without family", func(d map[string]any) { row(d, 4, "a2a", "operations")["requires"] = []any{"streaming"} }, "/a2a/operations/4/requires/0"},
		{"requires repeated", func(d map[string]any) {
			row(d, 8, "a2a", "operations")["requires"] = []any{"a2a.streaming", "a2a.streaming"}
		}, "/a2a/operations/8/requires"},
		{"no operations", func(d map[string]any) { obj(d, "a2a")["operations"] = []any{} }, "/a2a/operations"},
		{"missing section", func(d map[string]any) { delete(obj(d, "a2a"), "errors") }, "/a2a"},
		{"version 2", func(d map[string]any) { d["version"] = 2 }, "/version"},
		{"bad date", func(d map[string]any) { d["updated"] = "30 Nov 2026" }, "/updated"},
		{"feature id upper case", func(d map[string]any) { row(d, 0, "mcp", "features")["id"] = "MRTR" }, "/mcp/features/0/id"},
		{"profile not mcp", func(d map[string]any) { row(d, 0, "mcp", "features")["requiredFor"] = []any{"a2a-1.0"} }, "/mcp/features/0/requiredFor/0"},
		{"pin without spec", func(d map[string]any) { delete(obj(d, "pins", "a2a"), "spec") }, "/pins/a2a"},
		{"operation without rule", func(d map[string]any) { delete(row(d, 0, "mcp", "methods"), "rule") }, "/mcp/methods/0"},
	}
	loader, err := newLoader()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := builtinTree(t)
			tc.mutate(doc)
			m, err := loader.load(encodeTree(t, doc))
			if m != nil {
				t.Fatal("Load returned a map")
			}
			var se *SchemaError
			if !errors.As(err, &se) || !errors.Is(err, ErrSchema) || errors.Is(err, ErrInconsistent) {
				t.Fatalf("Load = %v, want a *SchemaError", err)
			}
			if !slices.Contains(se.Locations, tc.location) {
				t.Errorf("locations %q do not include %q", se.Locations, tc.location)
			}
			if !strings.Contains(err.Error(), tc.location) {
				t.Errorf("message %q does not name %s", err, tc.location)
			}
		})
	}
}

func TestLoadRefusesMalformedJSON(t *testing.T) {
	dupVersion := strings.Replace(builtinJSON, `"version": 1,`, `"version": 1,
  "version": 1,`, 1)
	dupNested := strings.Replace(builtinJSON, `"jsonrpc": -32001,`, `"jsonrpc": -32001,
          "jsonrpc": -32009,`, 1)
	cases := []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"whitespace", " \n"},
		{"truncated", builtinJSON[:len(builtinJSON)/2]},
		{"trailing document", builtinJSON + "{}"},
		{"trailing garbage", builtinJSON + "x"},
		{"repeated top-level member", dupVersion},
		{"repeated nested member", dupNested},
		{"not JSON", "version: 1"},
	}
	if dupVersion == builtinJSON || dupNested == builtinJSON {
		t.Fatal("fixture edit did not apply")
	}
	loader, err := newLoader()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := loader.load([]byte(tc.data))
			if m != nil || !errors.Is(err, ErrDecode) || errors.Is(err, ErrSchema) || errors.Is(err, ErrInconsistent) {
				t.Errorf("Load = %v, %v; want ErrDecode only", m, err)
			}
		})
	}
	// Well-formed JSON of the wrong shape is the schema's business.
	for _, data := range []string{"null", "[]", `"map"`, "{}"} {
		if _, err := loader.load([]byte(data)); !errors.Is(err, ErrSchema) {
			t.Errorf("Load(%s) = %v, want ErrSchema", data, err)
		}
	}
}

// The strictness scan counts members per object, not per document.
func TestStrictJSONAllowsSameNameInSiblings(t *testing.T) {
	for _, data := range []string{
		`{"a":{"x":1},"b":{"x":2}}`,
		`[{"x":1},{"x":2}]`,
		`{"a":[1,{"a":2}],"b":{"a":{"a":3}}}`,
	} {
		if err := checkStrictJSON([]byte(data)); err != nil {
			t.Errorf("checkStrictJSON(%s) = %v", data, err)
		}
	}
	for _, data := range []string{`{"a":1,"b":{"x":1,"x":2}}`, `[{"x":1,"x":1}]`, `{"a":[],"a":[]}`} {
		if err := checkStrictJSON([]byte(data)); !errors.Is(err, ErrDecode) {
			t.Errorf("checkStrictJSON(%s) = %v, want ErrDecode", data, err)
		}
	}
}

// A map without the optional mcp.tasks section loads; the Tasks lookups
// then report absence instead of guessing.
func TestLoadWithoutMCPTasks(t *testing.T) {
	doc := builtinTree(t)
	delete(obj(doc, "mcp"), "tasks")
	delete(obj(doc, "pins"), "mcpTasks")
	m, err := Load(encodeTree(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	if index(m).HasMCPTasks() {
		t.Error("HasMCPTasks = true")
	}
	if s, ok := index(m).MCPTaskStatus("running"); ok || s != "" {
		t.Errorf("MCPTaskStatus = %q, %v", s, ok)
	}
	if _, ok := index(m).MCPTaskMethod("tasks/get"); ok {
		t.Error("MCPTaskMethod found a row")
	}
	if index(m).Elements(interopmap.SectionMCPTaskFields) != nil || index(m).Pins().MCPTasks != (interopmap.Pin{}) {
		t.Error("tasks fields or pin present")
	}
	if err := index(m).MCPGate("tasks/get", allFacets); !errors.Is(err, interopmap.ErrUnknownOperation) {
		t.Errorf("MCPGate(tasks/get) = %v", err)
	}
}

func TestLoaderIsSafeForConcurrentUse(t *testing.T) {
	loader, err := newLoader()
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(builtinJSON)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			m, err := loader.load(data)
			if err == nil {
				if _, ok := index(m).TaskState("running", ""); !ok {
					err = errors.New("no row")
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
