package workunit_test

import (
	"bytes"
	"encoding/json"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/workunit"
)

// checkOpened holds for every envelope a reader accepted: its digest is
// the hash of its bytes, and sealing its unit gives back those bytes.
func checkOpened(t *testing.T, e workunit.Envelope) {
	t.Helper()
	if e.Digest() != hexSHA256(e.Canonical()) {
		t.Fatalf("digest %s of %q", e.Digest(), e.Canonical())
	}
	again, err := workunit.Seal(e.Unit())
	if err != nil || !bytes.Equal(again.Canonical(), e.Canonical()) || again.Digest() != e.Digest() {
		t.Fatalf("Seal(Open(x)) != x\n   x %q\ngot %q (%v)", e.Canonical(), again.Canonical(), err)
	}
}

func FuzzOpen(f *testing.F) {
	e, _ := workunit.Seal(sample)
	f.Add(e.Canonical(), e.Digest())
	for _, s := range []string{`{"body":1,"kind":"k"}`, `{"body":{"b":1,"a":2},"kind":"k"}`, `{"body":1,"id":"","kind":"k"}`, `{"b\u006fdy":1,"kind":"k"}`, `[1]`, `{"body":"\ud83d\ude00","kind":"k"}`} {
		f.Add([]byte(s), hexSHA256([]byte(s)))
	}
	f.Fuzz(func(t *testing.T, canonical []byte, digest string) {
		// Once with the digest given, once with the bytes' own, so that
		// the fuzzer explores the unit's parsing and not only the hash.
		for _, d := range []string{digest, hexSHA256(canonical)} {
			e, err := workunit.Open(canonical, d)
			if err != nil {
				continue
			}
			if !bytes.Equal(e.Canonical(), canonical) || e.Digest() != d {
				t.Fatalf("opened %q as %q", canonical, e.Canonical())
			}
			checkOpened(t, e)
		}
	})
}

func FuzzFromA2A(f *testing.F) {
	e, _ := workunit.Seal(sample)
	part, _ := json.Marshal(e.A2APart())
	f.Add(part, workunit.ExtensionURI)
	f.Add(part, "urn:x, "+workunit.ExtensionURI)
	f.Add([]byte(`{"text":"x","metadata":{"`+workunit.ExtensionURI+`":{"sha256":"`+e.Digest()+`"}}}`), workunit.ExtensionURI)
	f.Add([]byte(`{"raw":"e30=","mediaType":"application/json","metadata":{"`+workunit.ExtensionURI+`":{"sha256":1}}}`), workunit.ExtensionURI)
	f.Fuzz(func(t *testing.T, partJSON []byte, activated string) {
		var p wire.Part
		if json.Unmarshal(partJSON, &p) != nil {
			return
		}
		got, err := workunit.FromA2A([]*wire.Part{&p}, []string{activated})
		if err != nil {
			return
		}
		if raw, _ := p.Content.(wire.Raw); !bytes.Equal(raw, got.Canonical()) {
			t.Fatalf("the part held %q, the envelope %q", raw, got.Canonical())
		}
		checkOpened(t, got)
	})
}

func FuzzFromMCPArguments(f *testing.F) {
	e, _ := workunit.Seal(sample)
	args, _ := json.Marshal(map[string]any{"x": 1, workunit.ArgumentName: e.MCPArgument()})
	f.Add(args, true)
	f.Add(args, false)
	f.Add([]byte(`{"`+workunit.ArgumentName+`":{"sha256":"`+e.Digest()+`","unit":"{}","unit":"{}"}}`), true)
	f.Add([]byte(`{"`+workunit.ArgumentName+`":{"sha256":"`+hexSHA256([]byte(`{"body":1,"kind":"k"}`))+`","unit":"{\"body\":1,\"kind\":\"k\"}"}}`), true)
	f.Fuzz(func(t *testing.T, args []byte, activated bool) {
		got, err := workunit.FromMCPArguments(args, activated)
		if err != nil {
			return
		}
		if !activated {
			t.Fatal("opened without activation")
		}
		checkOpened(t, got)
	})
}

func FuzzCompletionJSON(f *testing.F) {
	e, _ := workunit.Seal(sample)
	pending := workunit.RemoteCompleted(e)
	r, _ := workunit.Seal(workunit.Unit{Kind: "r", ResultOf: e.Digest(), Body: json.RawMessage(`1`)})
	accepted, _ := pending.Verify(r)
	for _, c := range []workunit.Completion{pending, accepted} {
		b, _ := json.Marshal(c)
		f.Add(b)
	}
	f.Add([]byte(`{"execution":"succeeded","acceptance":"accepted"}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var c workunit.Completion
		if c.UnmarshalJSON(doc) != nil {
			return
		}
		if c.Acceptance() == workunit.Accepted && c.Result() == "" {
			t.Fatalf("accepted without a result: %s", doc)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back workunit.Completion
		if err := json.Unmarshal(b, &back); err != nil || back != c {
			t.Fatalf("%s read back as %+v (%v)", b, back, err)
		}
	})
}
