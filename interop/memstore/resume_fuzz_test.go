package memstore

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// FuzzResumeValue feeds arbitrary outcomes and values to the resume-value
// decoder of the conformance approval interrupt. It must never panic, and
// what it accepts must honour the approval rules: a JSON object whose
// action is offered, decline turned into reject, cancel without a value.
func FuzzResumeValue(f *testing.F) {
	sch, err := compileSchema("mem://interrupt/resume.json", json.RawMessage(approvalSchema))
	if err != nil {
		f.Fatal(err)
	}
	p := &pending{
		spec:   interop.Interrupt{Kind: interop.InterruptApproval, Key: "approval", Actions: []string{"accept", "reject"}},
		schema: sch,
	}
	for _, seed := range []struct{ outcome, value string }{
		{"accept", `{"action":"accept"}`},
		{"", `{"action":"reject","note":"x"}`},
		{"decline", ``},
		{"cancel", `garbage`},
		{"accept", `{"action":"ask"}`},
		{"accept", `{"action":"accept","action":"ask"}`},
		{"accept", `["accept"]`},
		{"accept", ` {"action" : "accept"} `},
		{"maybe", `{}`},
	} {
		f.Add(seed.outcome, []byte(seed.value))
	}
	f.Fuzz(func(t *testing.T, outcome string, value []byte) {
		got, v, err := p.resumeValue(interop.ResolveOutcome(outcome), value)
		if err != nil {
			return
		}
		switch got {
		case interop.OutcomeCancel:
			if v != nil {
				t.Fatalf("cancel carried value %s", v)
			}
		case interop.OutcomeDecline:
			if string(v) != `{"action":"reject"}` {
				t.Fatalf("decline gave %s", v)
			}
		case interop.OutcomeAccept:
			// Member names are exact: decode into a map, not a struct
			// (encoding/json matches struct fields case-insensitively).
			var obj map[string]any
			if err := json.Unmarshal(v, &obj); err != nil {
				t.Fatalf("accepted %q: %v", v, err)
			}
			action, _ := obj["action"].(string)
			if !slices.Contains(p.spec.Actions, action) {
				t.Fatalf("accepted %q with action %q", v, action)
			}
		default:
			t.Fatalf("accepted outcome %q", got)
		}
	})
}
