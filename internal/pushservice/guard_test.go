package pushservice

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/fixture"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// TestGuardRefusesAtDelivery sends a push to every refused form through
// the service's delivery attempt and through the guarded client: nothing
// may be dialled, and the client reports the same reason as the check.
func TestGuardRefusesAtDelivery(t *testing.T) {
	var corpus struct {
		AllowOrigin string              `json:"allowOrigin"`
		DNS         map[string][]string `json:"dns"`
		Refused     []struct {
			Form   string        `json:"form"`
			URL    string        `json:"url"`
			Reason egress.Reason `json:"reason"`
			Note   string        `json:"note"`
		} `json:"refused"`
	}
	fixture.JSON(t, "egress/destinations.json", &corpus)
	// A URL one byte over the guard's 2048-byte limit is refused too.
	corpus.Refused = append(corpus.Refused, struct {
		Form   string        `json:"form"`
		URL    string        `json:"url"`
		Reason egress.Reason `json:"reason"`
		Note   string        `json:"note"`
	}{URL: "https://hooks.partner.net/" + strings.Repeat("a", 2048), Reason: egress.ReasonURL})
	dials := newDialLog(t)
	g, err := egress.NewGuard(egress.GuardOptions{Resolver: newResolver(corpus.DNS), AllowOrigins: []string{corpus.AllowOrigin}, Dial: dials.dial})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(memstore.New(), testProjector(), push.Options{Events: newEventSink(), Guard: g, Retry: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	client := g.Client(nil)
	for _, c := range corpus.Refused {
		rec := &push.Record{TaskID: "acme/T", ID: "c", URL: c.URL}
		if out := svc.attempt(context.Background(), rec, push.Secret{Token: "tok"}, idempotencyKey("dl-guard"), []byte(`{}`)); out != (outcome{class: classRefused}) {
			t.Errorf("%q: delivery attempt gave %+v, want refused", c.URL, out)
		}
		req, err := http.NewRequest(http.MethodPost, c.URL, strings.NewReader(`{}`))
		if err != nil || req.URL.String() != c.URL {
			// No request can be built, or net/http rewrote the URL (an
			// empty fragment or port dropped) so the client judges another
			// string: the attempt above covers the form as registered.
			continue
		}
		resp, err := client.Do(req)
		if resp != nil {
			_ = resp.Body.Close()
		}
		var re *egress.RefusedError
		if !errors.As(err, &re) || re.Reason != c.Reason {
			t.Errorf("%q: client error %v, want refusal %q", c.URL, err, c.Reason)
		}
	}
	if got := dials.dialled(); len(got) != 0 {
		t.Fatalf("a refused delivery dialled %v", got)
	}
}
