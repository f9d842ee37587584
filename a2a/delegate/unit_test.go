package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"slices"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/workunit"
)

// declaringCard is a card that declares the work-unit extension.
func declaringCard() *wire.AgentCard {
	return &wire.AgentCard{Capabilities: wire.AgentCapabilities{Extensions: []wire.AgentExtension{workunit.AgentExtension()}}}
}

// replyWith answers a streamed send with one direct message carrying
// parts, after reporting the response's A2A-Extensions as a transport
// does: the extension echoed when echo is set.
func replyWith(echo bool, parts ...*wire.Part) func(context.Context, int, *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
	return func(ctx context.Context, _ int, _ *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
		h := http.Header{}
		if echo {
			workunit.ActivateHeader(h)
		}
		noteResponse(ctx, h)
		return seqOf(ev(&wire.Message{ID: "reply-1", Role: wire.MessageRoleAgent, Parts: parts}))
	}
}

// TestUnitStepMessage: the unit's part follows the step's inputs and
// parts, exactly as workunit writes it, and the message lists the
// extension; a step whose unit holds nothing is refused before sending.
func TestUnitStepMessage(t *testing.T) {
	sent, err := workunit.Seal(workunit.Unit{Kind: unitKind, Body: json.RawMessage(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	r := &fakeRemote{stream: replyWith(true, wire.NewTextPart("ok"))}
	c, _ := testConn(r)
	c.Card = declaringCard()
	step := testStep()
	step.Parts = []*wire.Part{wire.NewTextPart("please review")}
	step.Unit = &sent
	if _, err := c.Delegate(t.Context(), step); err != nil {
		t.Fatal(err)
	}
	m := r.sent(0).Message
	got, _ := json.Marshal(m.Parts)
	want, _ := json.Marshal([]*wire.Part{{Content: wire.Data{Value: json.RawMessage(`{"text":"hello"}`)}}, wire.NewTextPart("please review"), sent.A2APart()})
	if string(got) != string(want) || !slices.Equal(m.Extensions, []string{workunit.ExtensionURI}) {
		t.Fatalf("parts %s extensions %q\nwant parts %s", got, m.Extensions, want)
	}

	step.Unit = &workunit.Envelope{}
	var se *StepError
	if _, err := c.Delegate(t.Context(), step); !errors.As(err, &se) || se.Field != "unit" {
		t.Fatalf("an empty unit: %v", err)
	}
	if sends, _, _, _ := r.counts(); sends != 1 {
		t.Fatalf("%d sends, want the one before", sends)
	}
}

// TestUnitResultInADirectReply: a result unit in the agent's direct
// message reply is verified as one in an artifact: accepted under an
// echoed activation, pending with a warning without one.
func TestUnitResultInADirectReply(t *testing.T) {
	sent, err := workunit.Seal(workunit.Unit{Kind: unitKind, Body: json.RawMessage(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	result, err := workunit.Seal(workunit.Unit{Kind: verdictKind, ResultOf: sent.Digest(), Body: json.RawMessage(`true`)})
	if err != nil {
		t.Fatal(err)
	}
	for _, echo := range []bool{true, false} {
		c, _ := testConn(&fakeRemote{stream: replyWith(echo, result.A2APart())})
		c.Card = declaringCard()
		step := testStep()
		step.Unit = &sent
		out, err := c.Delegate(t.Context(), step)
		if err != nil || out.Reply == nil {
			t.Fatalf("echo %v: Delegate = %+v, %v", echo, out, err)
		}
		if echo && (out.Acceptance != AcceptanceAccepted || out.ResultUnit == nil || out.ResultUnit.Digest() != result.Digest() ||
			out.Unit.Acceptance() != workunit.Accepted || len(out.Warnings) != 0) {
			t.Fatalf("echoed: %+v, want accepted", out)
		}
		if !echo && (out.Acceptance != AcceptancePendingVerification || out.ResultUnit != nil ||
			out.Unit.Acceptance() != workunit.PendingVerification || !slices.Equal(out.Warnings, []Warning{WarningResultUnitRefused})) {
			t.Fatalf("not echoed: %+v, want pending with a warning", out)
		}
	}
}
