package delegate

import (
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// BenchmarkDelegate is one delegation through the scripted peer: the send,
// a task that completes with one artifact, and the artifact's admission
// (media type, size, count, completeness, digest).
func BenchmarkDelegate(b *testing.B) {
	art := withDigest(textArtifact("a1", "the summary"), sha("the summary"))
	r := &fakeRemote{stream: streamOf(
		ev(task(wire.TaskStateSubmitted)),
		ev(artifactEvent(art, false, true)),
		ev(statusEvent(wire.TaskStateCompleted, nil)),
	)}
	c, _ := testConn(r, func(a *Admission) { a.Limits.MediaTypes = []string{"text/plain"} })
	step := testStep()
	b.ReportAllocs()
	for b.Loop() {
		r.sends, r.streamed = r.sends[:0], r.streamed[:0]
		out, err := c.Delegate(b.Context(), step)
		if err != nil || len(out.Artifacts) != 1 {
			b.Fatalf("Delegate = %+v, %v", out, err)
		}
	}
}
