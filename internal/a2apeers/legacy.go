package a2apeers

import (
	"io"
	"net/http"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// LegacyCard is the shape of the card StartLegacy03 serves.
type LegacyCard int

const (
	// LegacyCard03 is an A2A 0.3 card: top-level url, protocolVersion
	// "0.3.0", preferredTransport and additionalInterfaces, and no
	// supportedInterfaces (A2A 0.3 §5.5). Peer.Card is nil.
	LegacyCard03 LegacyCard = iota
	// LegacyInterfaces03 is an A2A 1.0-shaped card whose every interface
	// says protocolVersion "0.3".
	LegacyInterfaces03
)

// StartLegacy03 starts a peer that offers only A2A 0.3, below the 1.0
// floor: a client must refuse it from the card and send nothing. Every
// request other than the card fetch is recorded (Peer.Calls, which must
// stay empty) and answered with a 0.3-style JSON-RPC -32601 with no data.
func StartLegacy03(t testing.TB, shape LegacyCard) *Peer {
	t.Helper()
	return serve(t, func(base string) (http.Handler, *Peer) {
		p := &Peer{}
		switch shape {
		case LegacyCard03:
			p.CardJSON = mustJSON(map[string]any{
				"protocolVersion":    "0.3.0",
				"name":               "a2apeers legacy agent",
				"description":        "An A2A 0.3 agent, below the 1.0 floor.",
				"url":                base + JSONRPCPath,
				"preferredTransport": "JSONRPC",
				"additionalInterfaces": []map[string]string{
					{"url": base + JSONRPCPath, "transport": "JSONRPC"},
					{"url": base + RESTPath, "transport": "HTTP+JSON"},
				},
				"version":            "1.0.0",
				"capabilities":       map[string]bool{"streaming": true},
				"defaultInputModes":  []string{"text/plain"},
				"defaultOutputModes": []string{"text/plain"},
				"skills":             []map[string]any{{"id": "legacy", "name": "Legacy skill", "description": "Answers A2A 0.3 only.", "tags": []string{"legacy"}}},
			})
		default:
			p.Card = scriptedCard(base, Script{Skills: []wire.AgentSkill{
				{ID: "legacy", Name: "Legacy skill", Description: "Answers A2A 0.3 only.", Tags: []string{"legacy"}},
			}})
			p.Card.Name, p.Card.Description = "a2apeers legacy agent", "An A2A 0.3 agent, below the 1.0 floor."
			for _, i := range p.Card.SupportedInterfaces {
				i.ProtocolVersion = "0.3"
			}
			p.CardJSON = mustJSON(p.Card)
		}
		mux := http.NewServeMux()
		mux.Handle("GET "+CardPath, cardHandler(p.CardJSON))
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(rpcFailure(requestID(body), -32601, "Method not found", nil))
		})
		return mux, p
	}, nil)
}
