package hostapp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func withSeams(c *config) { c.Seams = true }

// mint calls the mint seam as key and returns the minted credential.
func (h *testHost) mint(key string) string {
	h.t.Helper()
	r := h.post(mintPath, key, `{"lane":"api-key"}`)
	wantStatus(h.t, r, http.StatusOK)
	var got map[string]string
	if err := json.Unmarshal(r.Body, &got); err != nil || len(got) != 1 || !regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`).MatchString(got["credential"]) {
		h.t.Fatalf("mint answered %s", r.Body)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		h.t.Errorf("a minted credential may be cached: %v", r.Header)
	}
	return got["credential"]
}

// Off by default: the seam path is an unknown route, and discovery names
// no seams profile.
func TestSeamsOffByDefault(t *testing.T) {
	h := newTestHost(t)
	r := h.post(mintPath, acmeKey, `{"lane":"api-key"}`)
	wantError(t, r, http.StatusNotFound, codeNotFound)
	if string(r.Body) != `{"error":"not_found","message":"no such resource"}`+"\n" {
		t.Errorf("seam while off: %s", r.Body)
	}
	if d := h.get("/.well-known/openwop", ""); strings.Contains(string(d.Body), `"conformance"`) {
		t.Errorf("discovery advertises seams while off: %s", d.Body)
	}
}

// With the seams on, discovery names the profile, and the mint seam makes
// a fresh Subject of the caller's tenant whose key works at once on every
// surface; refusals are in the envelope and mint nothing.
func TestMintSeam(t *testing.T) {
	h := newTestHost(t, withSeams)
	var root map[string]json.RawMessage
	if err := json.Unmarshal(h.get("/.well-known/openwop", "").Body, &root); err != nil {
		t.Fatal(err)
	}
	if string(root["conformance"]) != `{"seamsProfile":"openwop-conformance-seams-v2"}` {
		t.Errorf("conformance record %s", root["conformance"])
	}

	// Refusals.
	r := h.post(mintPath, "", `{"lane":"api-key"}`)
	wantError(t, r, http.StatusUnauthorized, codeUnauthenticated)
	r = h.post(mintPath, "not-a-key", `{"lane":"api-key"}`)
	wantError(t, r, http.StatusUnauthorized, codeUnauthenticated)
	r = h.post(mintPath, acmeKey, `{"lane":"oauth"}`)
	if d := wantError(t, r, http.StatusBadRequest, codeValidation); d["field"] != "lane" || d["reason"] != `must be "api-key"` {
		t.Errorf("other lane: %s", r.Body)
	}
	r = h.post(mintPath, acmeKey, `{"lane":"api-key","tenant":"globex"}`)
	wantError(t, r, http.StatusBadRequest, codeValidation)
	r = h.do(req{Method: "GET", Path: mintPath, Key: acmeKey})
	wantError(t, r, http.StatusNotFound, codeNotFound)
	if r.Header.Get("Allow") != "POST" {
		t.Errorf("Allow = %q", r.Header.Get("Allow"))
	}

	minted := h.mint(acmeKey)
	if other := h.mint(acmeKey); other == minted {
		t.Error("two mints gave one credential")
	}

	// REST: the key creates runs in acme, as a principal of its own: an
	// Idempotency-Key acme's demo key used starts a new run for it.
	first := h.do(req{Method: "POST", Path: "/runs", Key: acmeKey, Body: `{"workflowId":"conformance-noop"}`, Headers: map[string]string{"Idempotency-Key": "mint-1"}})
	wantStatus(t, first, http.StatusCreated)
	mine := h.do(req{Method: "POST", Path: "/runs", Key: minted, Body: `{"workflowId":"conformance-noop"}`, Headers: map[string]string{"Idempotency-Key": "mint-1"}})
	wantStatus(t, mine, http.StatusCreated)
	run := decode[created](t, mine)
	if !strings.HasPrefix(run.RunID, "acme/") || run.RunID == decode[created](t, first).RunID {
		t.Fatalf("minted principal's run %+v", run)
	}
	wantStatus(t, h.get("/agents", minted), http.StatusOK)
	// A2A.
	if task := rpcTask(t, h.rpc(minted, "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+run.RunID+`"}}`)); string(task.ID) != run.RunID {
		t.Errorf("A2A GetTask: %+v", task)
	}
	// MCP: acme's tools.
	rr, dec := h.mcp(mcpReq{Key: minted, Method: "tools/list"})
	wantStatus(t, rr, http.StatusOK)
	if got := mcpTools(dec.Result); strings.Join(got, ",") != strings.Join(workflowIDs(tenantAcme, h.url), ",") {
		t.Errorf("MCP tools of the minted key: %v", got)
	}
	// globex mints for globex, never for acme.
	g := h.mint(globexKey)
	wantError(t, h.get(strings.TrimPrefix(run.StatusURL, h.url), g), http.StatusForbidden, codeTenantMismatch)

	if strings.Contains(h.logs.String(), minted) || strings.Contains(h.logs.String(), g) {
		t.Errorf("a minted credential reached the log:\n%s", h.logs.String())
	}
}

// The table of minted keys is bounded, and the refusal past the bound is
// the envelope's forbidden.
func TestMintLimit(t *testing.T) {
	keys, _ := parseKeys(defaultKeys)
	b := newBearerKeys(keys)
	seen := map[string]bool{}
	for range maxMintedKeys {
		k, err := b.Mint(tenantAcme)
		if err != nil || seen[k] {
			t.Fatalf("mint: %q %v", k, err)
		}
		seen[k] = true
	}
	_, err := b.Mint(tenantAcme)
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusForbidden || ae.Code != codeForbidden {
		t.Fatalf("past the bound: %v", err)
	}
	// The configured keys still work and still name the demo tenants.
	if got := b.Tenants(); strings.Join(got, ",") != "acme,globex" {
		t.Errorf("Tenants = %v", got)
	}
	rq, _ := http.NewRequest("GET", "/", nil)
	rq.Header.Set("Authorization", "Bearer "+acmeKey)
	if sub, err := b.ResolveSubject(rq); err != nil || sub.Tenant != tenantAcme || sub.Principal != "key:acme" || !sub.Authenticated {
		t.Errorf("demo key after minting: %+v %v", sub, err)
	}
}

// startRun runs the program with args and returns its base URL, its
// stderr and a stop function that waits for it.
func startRun(t *testing.T, args ...string) (string, *syncBuffer, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), outW, stderr, nil)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("%v; stderr %s", err, stderr.String())
	}
	base, ok := listeningURL(strings.TrimSuffix(line, "\n"))
	if !ok {
		cancel()
		t.Fatalf("first line %q", line)
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	stopped := false
	stop := func() int {
		if stopped {
			return exitOK
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(5 * time.Second):
			t.Fatal("run did not return")
			return -1
		}
	}
	t.Cleanup(func() { stop() })
	return base, stderr, stop
}

// -conformance-seams reaches discovery and the routes; -log-level reaches
// the logger; a bad level is a usage error.
func TestSeamsAndLogLevelFlags(t *testing.T) {
	base, stderr, stop := startRun(t, "-conformance-seams", "-log-level", "warn")
	resp, err := http.Get(base + "/.well-known/openwop")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"conformance":{"seamsProfile":"openwop-conformance-seams-v2"}`) {
		t.Errorf("discovery with -conformance-seams: %s", body)
	}
	rq, _ := http.NewRequest("POST", base+mintPath, strings.NewReader(`{"lane":"api-key"}`))
	rq.Header.Set("Content-Type", "application/json")
	rq.Header.Set("Authorization", "Bearer "+acmeKey)
	resp, err = http.DefaultClient.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("mint with the flag: %d", resp.StatusCode)
	}
	if code := stop(); code != exitOK {
		t.Errorf("exit %d", code)
	}
	if strings.Contains(stderr.String(), "msg=request") {
		t.Errorf("request lines at -log-level warn:\n%s", stderr.String())
	}

	// The default level, info, writes them.
	base, stderr, stop = startRun(t)
	if resp, err := http.Get(base + "/.well-known/openwop"); err == nil {
		resp.Body.Close()
	}
	stop()
	if !strings.Contains(stderr.String(), "msg=request method=GET path=/.well-known/openwop status=200") {
		t.Errorf("no request line at the default level:\n%s", stderr.String())
	}

	var errOut strings.Builder
	if code := run(context.Background(), []string{"-log-level", "loud"}, io.Discard, &errOut, nil); code != exitUsage ||
		!strings.Contains(errOut.String(), `invalid -log-level: "loud" is not one of debug, info, warn, error`) {
		t.Errorf("bad level: exit %d %q", code, errOut.String())
	}
}

// The seams' help names them test-only.
func TestSeamsFlagHelp(t *testing.T) {
	var stderr strings.Builder
	run(context.Background(), []string{"-h"}, io.Discard, &stderr, nil)
	if !strings.Contains(stderr.String(), "-conformance-seams") || !strings.Contains(stderr.String(), "TEST ONLY") {
		t.Errorf("help:\n%s", stderr.String())
	}
}
