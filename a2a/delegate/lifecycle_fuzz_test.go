package delegate

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// FuzzPeerEvents feeds what a peer may stream — any sequence of A2A
// StreamResponses a2a-go decodes — through a delegation's reading side:
// state tracking, the reverse projection, the input-request view and
// artifact admission. Nothing may panic, and whatever is admitted keeps
// every limit: count, per-artifact size, media types, complete transfer
// and digest.
func FuzzPeerEvents(f *testing.F) {
	for _, seed := range []string{
		`[{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}},{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"hi"}]},"lastChunk":true}},{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}]`,
		`[{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}},{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"one"}]}}},{"artifactUpdate":{"taskId":"t","contextId":"c","append":true,"artifact":{"artifactId":"a","parts":[{"raw":"AAE="}],"metadata":{"sha256":"00"}}}},{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}]`,
		`[{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"q":[1,2]},"metadata":{"k":1}}]}},"artifacts":[{"artifactId":"x","parts":[{"url":"https://x.test/f","mediaType":"image/png"}]}]}}]`,
		`[{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"direct"}]}}]`,
		`[{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_MADE_UP"}}},{"task":{"id":"u","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}]`,
	} {
		f.Add([]byte(seed))
	}
	limits := Limits{MaxArtifacts: 2, MaxArtifactBytes: 64, MediaTypes: []string{"text/plain", "application/json"}}.withDefaults()
	f.Fuzz(func(t *testing.T, data []byte) {
		var stream []wire.StreamResponse
		if json.Unmarshal(data, &stream) != nil {
			return
		}
		c, _ := testConn(&fakeRemote{})
		d := c.newDelegation(testStep(), limits, "att_fuzz")
		for _, sr := range stream {
			if err := d.apply(sr.Event); err != nil {
				var ae *ArtifactError
				if !errors.As(err, &ae) && !errors.Is(err, wire.ErrInvalidAgentResponse) {
					t.Fatalf("apply: %v is neither an artifact refusal nor an invalid response", err)
				}
				return
			}
			if d.settled() {
				break
			}
		}
		if d.haveState {
			if status, _, _ := c.project(d.state); status == "" || (status == "completed" && d.state != wire.TaskStateCompleted) {
				t.Fatalf("state %q projected to %q", d.state, status)
			}
		}
		for _, p := range d.loss.requestView(d.status.Message) {
			if p.Metadata != nil {
				t.Fatal("the input-request view kept part metadata")
			}
		}
		arts, err := d.artifacts.admit()
		if err != nil {
			return
		}
		if len(arts) > limits.MaxArtifacts {
			t.Fatalf("%d artifacts admitted, limit %d", len(arts), limits.MaxArtifacts)
		}
		for _, a := range arts {
			var size int64
			for _, p := range a.Parts {
				size += partSize(p)
				if mt, ok := normalMediaType(mediaTypeOf(p)); !ok || !slices.Contains(limits.MediaTypes, mt) {
					t.Fatalf("admitted media type %q", mediaTypeOf(p))
				}
			}
			if size > limits.MaxArtifactBytes {
				t.Fatalf("admitted an artifact of %d bytes, limit %d", size, limits.MaxArtifactBytes)
			}
			if _, ok := digestMatches(a); !ok {
				t.Fatal("admitted an artifact whose digest does not match")
			}
		}
	})
}
