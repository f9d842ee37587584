package negotiate

import (
	"context"
	"testing"
)

// BenchmarkInboundDecision is the per-request cost of an inbound decision
// plus building its record: what every A2A and MCP request pays.
func BenchmarkInboundDecision(b *testing.B) {
	p := a2aPolicy(b, true)
	peer := Peer{Authenticated: true, Origin: "https://peer.example"}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		d := p.Inbound("1.0", peer)
		buf = d.appendRecord(buf[:0])
	}
}

// BenchmarkInboundDecisionNoOrigin is the common case of a caller that sent
// no Origin header.
func BenchmarkInboundDecisionNoOrigin(b *testing.B) {
	p := a2aPolicy(b, true)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		d := p.Inbound("1.0", Peer{Authenticated: true})
		buf = d.appendRecord(buf[:0])
	}
}

// BenchmarkAuditorRecord adds the hand-off to the asynchronous auditor.
func BenchmarkAuditorRecord(b *testing.B) {
	a := NewAuditor(discardSink{}, AuditorOptions{})
	a.Start()
	defer a.Close(context.Background())
	p := a2aPolicy(b, true)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = a.Record(ctx, p.Inbound("1.0", Peer{Authenticated: true}), Scope{Tenant: "acme"})
	}
}
