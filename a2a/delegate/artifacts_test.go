package delegate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

func sha(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func withDigest(a *wire.Artifact, digest any) *wire.Artifact {
	a.Metadata = map[string]any{MetadataSHA256: digest}
	return a
}

const secret = "s3cret-content"

func TestArtifactAdmissionRefusals(t *testing.T) {
	other := artifactEvent(textArtifact("a1", secret), false, true)
	other.TaskID = "task-2"
	image := &wire.Artifact{ID: "img", Parts: []*wire.Part{{Content: wire.Raw(secret), MediaType: "image/png"}}}
	for _, tc := range []struct {
		name   string
		limits func(*Limits)
		events []item
		want   *ArtifactError
	}{
		{"wrong task", nil,
			[]item{ev(other)},
			&ArtifactError{Refusal: RefusalWrongTask, ArtifactID: "a1", Part: -1}},
		{"media type", func(l *Limits) { l.MediaTypes = []string{"text/plain", "application/json"} },
			[]item{ev(artifactEvent(image, false, true))},
			&ArtifactError{Refusal: RefusalMediaType, ArtifactID: "img", Part: 0}},
		{"media type of a data part", func(l *Limits) { l.MediaTypes = []string{"text/plain"} },
			[]item{ev(artifactEvent(&wire.Artifact{ID: "d", Parts: []*wire.Part{wire.NewTextPart("ok"), wire.NewDataPart(map[string]any{"k": secret})}}, false, true))},
			&ArtifactError{Refusal: RefusalMediaType, ArtifactID: "d", Part: 1}},
		{"size", func(l *Limits) { l.MaxArtifactBytes = 10 },
			[]item{ev(artifactEvent(textArtifact("a1", "12345"), false, false)), ev(artifactEvent(textArtifact("a1", "678901"), true, true))},
			&ArtifactError{Refusal: RefusalSize, ArtifactID: "a1", Part: 1}},
		{"count", func(l *Limits) { l.MaxArtifacts = 1 },
			[]item{ev(artifactEvent(textArtifact("a1", "one"), false, true)), ev(artifactEvent(textArtifact("a2", secret), false, true))},
			&ArtifactError{Refusal: RefusalCount, ArtifactID: "a2", Part: -1}},
		{"count in a snapshot", func(l *Limits) { l.MaxArtifacts = 1 },
			[]item{ev(task(wire.TaskStateWorking, textArtifact("a1", "one"), textArtifact("a2", secret)))},
			&ArtifactError{Refusal: RefusalCount, Part: -1}},
		{"chunks never closed", nil,
			[]item{ev(artifactEvent(textArtifact("a1", "first"), false, false)), ev(artifactEvent(textArtifact("a1", secret), true, false))},
			&ArtifactError{Refusal: RefusalIncomplete, ArtifactID: "a1", Part: -1}},
		{"chunk appended to nothing", nil,
			[]item{ev(artifactEvent(textArtifact("a1", secret), true, true))},
			&ArtifactError{Refusal: RefusalIncomplete, ArtifactID: "a1", Part: -1}},
		{"chunk after the last chunk", nil,
			[]item{ev(artifactEvent(textArtifact("a1", "whole"), false, true)), ev(artifactEvent(textArtifact("a1", secret), true, true))},
			&ArtifactError{Refusal: RefusalIncomplete, ArtifactID: "a1", Part: -1}},
		{"digest mismatch", nil,
			[]item{ev(artifactEvent(withDigest(textArtifact("a1", secret), sha("something else")), false, true))},
			&ArtifactError{Refusal: RefusalDigest, ArtifactID: "a1", Part: -1}},
		{"digest not hex", nil,
			[]item{ev(artifactEvent(withDigest(textArtifact("a1", secret), "xyz"), false, true))},
			&ArtifactError{Refusal: RefusalDigest, ArtifactID: "a1", Part: -1}},
		{"digest not a string", nil,
			[]item{ev(artifactEvent(withDigest(textArtifact("a1", secret), 42.0), false, true))},
			&ArtifactError{Refusal: RefusalDigest, ArtifactID: "a1", Part: -1}},
		{"digest over a data part", nil,
			[]item{ev(artifactEvent(withDigest(&wire.Artifact{ID: "a1", Parts: []*wire.Part{wire.NewTextPart(secret), wire.NewDataPart(1)}}, sha(secret)), false, true))},
			&ArtifactError{Refusal: RefusalDigest, ArtifactID: "a1", Part: 1}},
		{"missing part", nil,
			[]item{ev(artifactEvent(&wire.Artifact{ID: "a1", Parts: []*wire.Part{nil}}, false, true))},
			&ArtifactError{Refusal: RefusalIncomplete, ArtifactID: "a1", Part: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := append([]item{ev(task(wire.TaskStateWorking))}, tc.events...)
			events = append(events, ev(statusEvent(wire.TaskStateCompleted, nil)))
			r := &fakeRemote{
				stream: streamOf(events...),
				cancel: func(context.Context, int, *wire.CancelTaskRequest) (*wire.Task, error) { return nil, nil },
				get:    getReturns(task(wire.TaskStateCanceled, textArtifact("a1", secret))),
			}
			c, _ := testConn(r, func(a *Admission) {
				if tc.limits != nil {
					tc.limits(&a.Limits)
				}
			})
			out, err := c.Delegate(t.Context(), testStep())
			var ae *ArtifactError
			if !errors.As(err, &ae) || !errors.Is(err, ErrArtifactRefused) {
				t.Fatalf("error %v, want an *ArtifactError", err)
			}
			if diff := cmp.Diff(tc.want, ae); diff != "" {
				t.Errorf("ArtifactError (-want +got):\n%s", diff)
			}
			if out.Status != interop.StatusFailed || out.Reason != ReasonArtifactRefused || out.Artifacts != nil || out.Acceptance != "" {
				t.Errorf("outcome %+v, want failed, artifact_refused, no artifacts", out)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(string(ae.ArtifactID), secret) {
				t.Errorf("refusal %q carries content", err)
			}
		})
	}
}

func TestArtifactRefusalMidStreamCancelsTheRemoteTask(t *testing.T) {
	r := &fakeRemote{
		stream: streamOf(ev(task(wire.TaskStateWorking)), ev(artifactEvent(textArtifact("a1", secret), false, true))),
		cancel: func(context.Context, int, *wire.CancelTaskRequest) (*wire.Task, error) { return nil, nil },
		get:    getReturns(task(wire.TaskStateCanceled)),
	}
	c, _ := testConn(r, func(a *Admission) { a.Limits.MaxArtifactBytes = 4 })
	out, err := c.Delegate(t.Context(), testStep())
	if !errors.Is(err, ErrArtifactRefused) {
		t.Fatalf("error %v", err)
	}
	if out.Reconciliation != outbound.RemoteCancelled || out.Status != interop.StatusFailed {
		t.Errorf("outcome %+v, want the task cancelled and the delegation failed", out)
	}
	if _, _, cancels, _ := r.counts(); cancels != 1 {
		t.Errorf("cancels = %d, want 1", cancels)
	}
}

func TestArtifactAdmissionAdmits(t *testing.T) {
	raw := &wire.Artifact{ID: "file", Parts: []*wire.Part{{Content: wire.Raw("PNG…"), MediaType: "Image/PNG"}}}
	for _, tc := range []struct {
		name   string
		limits func(*Limits)
		events []item
		want   []*wire.Artifact
	}{
		{"chunks assembled", nil,
			[]item{
				ev(artifactEvent(textArtifact("a1", "one "), false, false)),
				ev(artifactEvent(&wire.Artifact{ID: "a1", Parts: []*wire.Part{wire.NewTextPart("two")}, Metadata: map[string]any{"k": "v"}, Extensions: []string{"urn:x"}}, true, false)),
				ev(artifactEvent(withDigest(textArtifact("a1", " three"), sha("one ", "two", " three")), true, true)),
			},
			[]*wire.Artifact{{ID: "a1", Parts: []*wire.Part{wire.NewTextPart("one "), wire.NewTextPart("two"), wire.NewTextPart(" three")},
				Metadata: map[string]any{"k": "v", MetadataSHA256: sha("one ", "two", " three")}, Extensions: []string{"urn:x"}}}},
		{"a whole artifact without lastChunk", nil,
			[]item{ev(artifactEvent(textArtifact("a1", "whole"), false, false))},
			[]*wire.Artifact{textArtifact("a1", "whole")}},
		{"a replaced artifact", nil,
			[]item{ev(artifactEvent(textArtifact("a1", "draft"), false, false)), ev(artifactEvent(textArtifact("a1", "final"), false, true))},
			[]*wire.Artifact{textArtifact("a1", "final")}},
		{"media types with parameters and case", func(l *Limits) { l.MediaTypes = []string{"image/png", "text/plain; charset=utf-8"} },
			[]item{ev(artifactEvent(raw, false, true)), ev(artifactEvent(textArtifact("t", "x"), false, true))},
			[]*wire.Artifact{raw, textArtifact("t", "x")}},
		{"raw digest", nil,
			[]item{ev(artifactEvent(withDigest(&wire.Artifact{ID: "r", Parts: []*wire.Part{wire.NewRawPart([]byte{0, 1, 2})}}, sha("\x00\x01\x02")), false, true))},
			[]*wire.Artifact{withDigest(&wire.Artifact{ID: "r", Parts: []*wire.Part{wire.NewRawPart([]byte{0, 1, 2})}}, sha("\x00\x01\x02"))}},
		{"exactly at the limits", func(l *Limits) { l.MaxArtifacts = 2; l.MaxArtifactBytes = 5 },
			[]item{ev(artifactEvent(textArtifact("a", "12345"), false, true)), ev(artifactEvent(textArtifact("b", "1", "2345"), false, true))},
			[]*wire.Artifact{textArtifact("a", "12345"), textArtifact("b", "1", "2345")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := append([]item{ev(task(wire.TaskStateWorking))}, tc.events...)
			events = append(events, ev(statusEvent(wire.TaskStateCompleted, nil)))
			c, _ := testConn(&fakeRemote{stream: streamOf(events...)}, func(a *Admission) {
				if tc.limits != nil {
					tc.limits(&a.Limits)
				}
			})
			out, err := c.Delegate(t.Context(), testStep())
			if err != nil {
				t.Fatalf("Delegate: %v", err)
			}
			if diff := cmp.Diff(tc.want, out.Artifacts); diff != "" {
				t.Errorf("artifacts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssemblyNeverWritesIntoThePeersEvents(t *testing.T) {
	first := &wire.Artifact{ID: "a1", Parts: make([]*wire.Part, 1, 2)} // room to append in place
	first.Parts[0] = wire.NewTextPart("one")
	second := textArtifact("a1", "two")
	c, _ := testConn(&fakeRemote{stream: streamOf(ev(task(wire.TaskStateWorking)),
		ev(artifactEvent(first, false, false)), ev(artifactEvent(second, true, true)), ev(statusEvent(wire.TaskStateCompleted, nil)))})
	if _, err := c.Delegate(t.Context(), testStep()); err != nil {
		t.Fatal(err)
	}
	if len(first.Parts) != 1 || cap(first.Parts) != 2 || first.Parts[:2][1] != nil {
		t.Errorf("the first event's parts were written to: %v", first.Parts[:2])
	}
}

func TestReplyPartsPassAdmission(t *testing.T) {
	reply := &wire.Message{ID: "m", Role: wire.MessageRoleAgent, Parts: []*wire.Part{{Content: wire.Raw(secret), MediaType: "application/zip"}}}
	c, _ := testConn(&fakeRemote{stream: streamOf(ev(reply))}, func(a *Admission) { a.Limits.MediaTypes = []string{"text/plain"} })
	out, err := c.Delegate(t.Context(), testStep())
	var ae *ArtifactError
	if !errors.As(err, &ae) || ae.Refusal != RefusalMediaType {
		t.Fatalf("error %v, want a media-type refusal", err)
	}
	if out.Reply != nil || out.Status != interop.StatusFailed || out.Reason != ReasonArtifactRefused {
		t.Errorf("outcome %+v, want the reply withheld", out)
	}
}
