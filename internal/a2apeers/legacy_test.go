package a2apeers

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// TestLegacy03: a stock a2a-go client reads either legacy card and builds
// no client from it (no 1.x interface), having sent nothing but the card
// fetch; a call sent anyway is counted and answered -32601.
func TestLegacy03(t *testing.T) {
	for _, tc := range []struct {
		name, refusal string
		shape         LegacyCard
	}{
		{"card-0.3", "agent card has no supported interfaces", LegacyCard03},
		{"interfaces-0.3", "no compatible transports found", LegacyInterfaces03},
	} {
		shape := tc.shape
		t.Run(tc.name, func(t *testing.T) {
			p := StartLegacy03(t, shape)
			if (p.Card == nil) != (shape == LegacyCard03) {
				t.Fatalf("Peer.Card = %v for shape %d", p.Card, shape)
			}
			ctx := callCtx(t)
			card, err := agentcard.NewResolver(http.DefaultClient).Resolve(ctx, p.URL)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if _, err := a2aclient.NewFromCard(ctx, card); err == nil || !strings.Contains(err.Error(), tc.refusal) {
				t.Fatalf("NewFromCard: %v, want %q", err, tc.refusal)
			}
			if calls := p.Calls(); len(calls) != 0 {
				t.Fatalf("the client sent %+v", calls)
			}
			if reqs := p.Requests(); len(reqs) != 1 || reqs[0].Binding != BindingCard {
				t.Fatalf("Requests = %+v, want the card fetch", reqs)
			}

			res, body := postVersion(t, p.URL+JSONRPCPath, "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`)
			if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`; res.StatusCode != http.StatusOK || body != want {
				t.Fatalf("a call: %d %s, want 200 %s", res.StatusCode, body, want)
			}
			if calls := p.Calls(); len(calls) != 1 || calls[0].Method != "message/send" {
				t.Fatalf("Calls = %+v, want the one call counted", calls)
			}
		})
	}
}

// TestCardsGolden: the cards the peers serve, with the base URL as
// http://peer (testdata/cards/).
func TestCardsGolden(t *testing.T) {
	for name, p := range map[string]*Peer{
		"scripted.json":      StartGo(t, Script{Tenant: "acme", BearerToken: "s3cret"}),
		"legacy-0.3.json":    StartLegacy03(t, LegacyCard03),
		"legacy-ifaces.json": StartLegacy03(t, LegacyInterfaces03),
		"malformed.json":     StartMalformed(t, ProblemJSON),
	} {
		golden.Check(t, "cards/"+name, bytes.ReplaceAll(p.CardJSON, []byte(p.URL), []byte("http://peer")))
	}
}
