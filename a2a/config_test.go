package a2a

import (
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// New names every missing dependency and every bad option at once.
func TestNewNamesEveryProblem(t *testing.T) {
	_, err := New(Deps{Routed: []interop.Workflow{{ID: "a"}, {ID: "a"}, {}}}, Options{
		HTTPJSONURL: "/relative", AgentCardURL: "ftp://card.example",
	})
	if err == nil {
		t.Fatal("New accepted empty Deps")
	}
	for _, want := range []string{
		"Store is required", "Subjects is required", "Policy must be an A2A negotiate.Policy", "Auditor is required",
		"Map is required", `JSONRPCURL "" is not an absolute http(s) URL`, `workflow "a" routed twice`, "a routed workflow has no ID",
		`HTTPJSONURL "/relative" is not an absolute http(s) URL`, `AgentCardURL "ftp://card.example" is not an absolute http(s) URL`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nsays nothing of %q", err, want)
		}
	}
	if _, err := New(Deps{}, Options{}); err == nil || !strings.Contains(err.Error(), "Routed must name at least one workflow") {
		t.Errorf("no routed workflow: %v", err)
	}
	cfg := testConfigOf(newRPCEnv(t).srv)
	cfg.Routing = nil
	if _, err := New(cfg.Deps, cfg.Options); err == nil || !strings.Contains(err.Error(), "Inventory and Routing go together") {
		t.Errorf("Inventory without Routing: %v", err)
	}
}

// The zero Options serve with the documented defaults.
func TestOptionsDefaults(t *testing.T) {
	cfg := testConfigOf(newCoreEnv(t).srv)
	cfg.Options = Options{}
	s, err := New(cfg.Deps, cfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	o := s.cfg.Options
	if o.BlockTimeout != 30*time.Second || o.MaxBodyBytes != 4<<20 || o.BodyTimeout != defaultBodyTimeout ||
		o.StreamWriteTimeout != defaultStreamWriteTimeout || o.MaxBatch != defaultMaxBatch ||
		o.BatchConcurrency != defaultBatchConcurrency || o.Logger == nil || o.Now == nil {
		t.Errorf("defaults %+v", o)
	}
	if s.workflows == nil || s.push != nil || s.Served().Streaming || s.Served().HTTPJSON || !s.Served().JSONRPC {
		t.Errorf("the zero Options serve %+v", s.Served())
	}
}
