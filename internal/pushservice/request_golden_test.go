package pushservice

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"testing"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// TestGoldenPushRequest pins the bytes a receiver reads for one push
// attempt, request line and header block included (OpenWOP RFC 0214 §C:
// the media type, the config's credentials, the Idempotency-Key): one
// HTTP/1.1 request, no compression asked for, the body as encoded.
func TestGoldenPushRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var raw bytes.Buffer
		req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(c, &raw)))
		if err == nil {
			_, err = io.Copy(io.Discard, req.Body)
		}
		if err == nil {
			_, _ = io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
		}
		got <- raw.Bytes()
	}()
	origin := "http://" + ln.Addr().String()
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{origin}})
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New()
	defer store.Close()
	svc, err := New(store, testProjector(), push.Options{Events: newEventSink(), Guard: g})
	if err != nil {
		t.Fatal(err)
	}
	rec := push.Record{TaskID: "acme/RUN0000000000000000000000", ID: "pc-CFG", URL: origin + "/hooks/a2a?tenant=acme", Scheme: "Bearer"}
	secret := push.Secret{Credentials: "s3cret-token"}
	id := deliveryID(rec.TaskID, rec.ID, 7, 0)
	out := svc.attempt(context.Background(), &rec, secret, idempotencyKey(id), benchBody)
	if !out.delivered {
		t.Fatalf("attempt: %+v", out)
	}
	raw := <-got
	// The receiver's port changes from run to run.
	raw = regexp.MustCompile(`(?m)^Host: 127\.0\.0\.1:\d+\r$`).ReplaceAll(raw, []byte("Host: 127.0.0.1:PORT\r"))
	checkGolden(t, "push_request.http", raw)
}
