package interop_test

import (
	"encoding/json"
	"testing"

	"github.com/wopinterop/wopinterop/internal/sharedspec"
	"github.com/wopinterop/wopinterop/interop"
)

// TestRegisteredEventTypesAgreeWithUpstream: every type of the upstream
// RunEventDoc enum is Registered, and the library's own lifecycle types are
// among them.
func TestRegisteredEventTypesAgreeWithUpstream(t *testing.T) {
	var doc struct {
		Properties struct {
			Type struct {
				OneOf []struct {
					Enum []string `json:"enum"`
				} `json:"oneOf"`
			} `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(sharedspec.Read(t, "openwop-v2/schemas/v2/run-event.schema.json"), &doc); err != nil {
		t.Fatal(err)
	}
	upstream := doc.Properties.Type.OneOf[0].Enum
	if len(upstream) < 100 {
		t.Fatalf("upstream enum has only %d types: the schema's shape changed", len(upstream))
	}
	for _, typ := range upstream {
		if !interop.EventType(typ).Registered() {
			t.Errorf("upstream type %q is not Registered", typ)
		}
	}
	for _, typ := range []interop.EventType{
		interop.EventRunStarted, interop.EventNodeSuspended, interop.EventInterruptResolved,
		interop.EventArtifactCreated, interop.EventRunCompleted, interop.EventRunFailed, interop.EventRunCancelled,
	} {
		found := false
		for _, u := range upstream {
			found = found || u == string(typ)
		}
		if !found {
			t.Errorf("library type %q is not in the upstream enum", typ)
		}
	}
}
