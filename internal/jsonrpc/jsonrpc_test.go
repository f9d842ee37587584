package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wopinterop/wopinterop/internal/golden"
)

var (
	a2aRules = Rules{NullID: true, RefuseFolded: true}
	mcpRules = Rules{}
)

func TestParse(t *testing.T) {
	cases := []struct {
		in      string
		rules   Rules
		id      string // raw id; "" = absent
		method  string
		params  string
		problem Problem
		escaped bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":1}}`, mcpRules, "1", "tools/list", `{"a":1}`, OK, false},
		{` { "params" : {} , "method" : "m" , "id" : "a" , "jsonrpc" : "2.0" } `[1:], mcpRules, `"a"`, "m", `{}`, OK, false},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled"}`, mcpRules, "", "notifications/cancelled", "", OK, false},
		{`{"jsonrpc":"2.0","id":-1.5e3,"method":"m","params":null}`, mcpRules, "-1.5e3", "m", "", OK, false},
		// Escapes are read as encoding/json reads them, in the version,
		// the method and member names alike.
		{`{"jsonrpc":"2\u002e0","id":1,"m\u0065thod":"\u0047etTask"}`, mcpRules, "1", "GetTask", "", OK, true},
		// Duplicates: the last one counts.
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":{"a":1},"params":{"b":2}}`, mcpRules, "2", "m", `{"b":2}`, OK, false},
		// A null id is an id where allowed, refused where not.
		{`{"jsonrpc":"2.0","id":null,"method":"m"}`, a2aRules, "null", "m", "", OK, false},
		{`{"jsonrpc":"2.0","id":null,"method":"m"}`, mcpRules, "", "", "", BadID, false},
		{`{"jsonrpc":"2.0","id":true,"method":"m"}`, a2aRules, "", "", "", BadID, false},
		{`{"jsonrpc":"2.0","id":{},"method":"m"}`, mcpRules, "", "", "", BadID, false},
		// A folded member is refused only where the rules say so;
		// elsewhere it is an unknown member, ignored.
		{`{"jsonrpc":"2.0","id":5,"Method":"x","method":"m"}`, a2aRules, "5", "", "", FoldedMember, false},
		{`{"jsonrpc":"2.0","id":5,"Method":"x","method":"m"}`, mcpRules, "5", "m", "", OK, false},
		{`{"jsonrpc":"2.0","ID":5,"method":"m"}`, mcpRules, "", "m", "", OK, false},
		{`{"id":4,"method":"m"}`, mcpRules, "4", "", "", BadVersion, false},
		{`{"jsonrpc":2.0,"id":4,"method":"m"}`, a2aRules, "4", "", "", BadVersion, false},
		{`{"jsonrpc":"2.0 ","id":4,"method":"m"}`, mcpRules, "4", "", "", BadVersion, false},
		{`{"jsonrpc":"2.0","id":5}`, mcpRules, "5", "", "", BadMethod, false},
		{`{"jsonrpc":"2.0","id":5,"method":null}`, a2aRules, "5", "", "", BadMethod, false},
		{`{"jsonrpc":"2.0","id":5,"method":"m","params":[1]}`, mcpRules, "5", "", "", BadParams, false},
		{`{"jsonrpc":"2.0","id":5,"method":"m","params":"x"}`, a2aRules, "5", "", "", BadParams, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			q, problem := Parse([]byte(tc.in), tc.rules)
			if problem != tc.problem || string(q.ID) != tc.id {
				t.Fatalf("problem %d id %q, want %d %q", problem, q.ID, tc.problem, tc.id)
			}
			if problem != OK {
				return
			}
			if q.MethodName() != tc.method || string(q.Params) != tc.params || q.MethodEscaped != tc.escaped {
				t.Fatalf("method %q (escaped %v) params %q, want %q %v %q", q.MethodName(), q.MethodEscaped, q.Params, tc.method, tc.escaped, tc.params)
			}
			if q.Notification() != (tc.id == "") {
				t.Fatalf("notification %v for id %q", q.Notification(), tc.id)
			}
		})
	}
}

func TestValidID(t *testing.T) {
	for _, tc := range []struct {
		raw           string
		nullOK, valid bool
	}{
		{`1`, false, true}, {`-0.5e-3`, false, true}, {`"a\"b"`, false, true},
		{`null`, true, true}, {`null`, false, false},
		{``, true, false}, {`true`, true, false}, {`[1]`, true, false}, {`{}`, true, false},
		{`"abc`, true, false}, {`01`, true, false}, {`1 2`, true, false}, {`-`, true, false},
	} {
		if got := ValidID([]byte(tc.raw), tc.nullOK); got != tc.valid {
			t.Errorf("ValidID(%q, null %v) = %v, want %v", tc.raw, tc.nullOK, got, tc.valid)
		}
	}
}

func TestSplitBatch(t *testing.T) {
	elems, err := SplitBatch([]byte(` [ {"a":[1,2]} , 3 ] `[1:]), 2)
	if err != nil || len(elems) != 2 || string(elems[0]) != `{"a":[1,2]}` || string(elems[1]) != "3" {
		t.Fatalf("%q %v", elems, err)
	}
	if _, err := SplitBatch([]byte(`[1,2,3]`), 2); err != ErrBatchTooLarge {
		t.Fatalf("three elements under a limit of two: %v", err)
	}
	if elems, err := SplitBatch([]byte(`[]`), 2); err != nil || len(elems) != 0 {
		t.Fatalf("empty batch: %q %v", elems, err)
	}
}

// TestEncoders writes every envelope form both surfaces use into one
// golden file.
func TestEncoders(t *testing.T) {
	var out bytes.Buffer
	line := func(b []byte) {
		if !json.Valid(b) {
			t.Fatalf("invalid JSON: %s", b)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	msg := "quote \" <html> & \u2028 bad\xff"
	line(append(AppendResultStart(nil, []byte(`7`)), `{"ok":true}}`...))
	line(AppendErrorEnd(AppendErrorStart(nil, []byte(`"a"`), NullID, CodeMethodNotFound, "method not found", true)))
	line(AppendErrorEnd(AppendErrorStart(nil, nil, NullID, CodeParseError, msg, true)))
	line(AppendErrorEnd(AppendErrorStart(nil, nil, OmitID, CodeParseError, msg, false)))
	e := AppendErrorStart(nil, []byte(`1`), OmitID, CodeInvalidParams, "Invalid params", false)
	e = append(e, `,"data":{"field":"x"}`...)
	line(AppendErrorEnd(e))
	line(AppendNotification(nil, "notifications/<tasks>", []byte(`{"a":1}`), false))
	golden.Check(t, "encoders", out.Bytes())
}

// FuzzParse: Parse never panics; what it accepts, encoding/json reads the
// same way (the id, the method, the params), and the id it reports is
// valid under the rules.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}`,
		`{"jsonrpc":"2\u002e0","id":"x","method":"\u006d"}`,
		`{"jsonrpc":"2.0","id":null,"Method":"m"}`,
		`{"jsonrpc":"2.0","method":"m","params":[]}`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, a2a bool) {
		data = bytes.TrimSpace(data)
		if !json.Valid(data) || len(data) == 0 || data[0] != '{' {
			return
		}
		rules := mcpRules
		if a2a {
			rules = a2aRules
		}
		q, problem := Parse(data, rules)
		if q.ID != nil && !ValidID(q.ID, rules.NullID) {
			t.Fatalf("reported id %q is not valid", q.ID)
		}
		if problem != OK {
			return
		}
		var env struct {
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Version string          `json:"jsonrpc"`
		}
		var exact map[string]json.RawMessage
		if json.Unmarshal(data, &exact) != nil {
			return
		}
		_ = json.Unmarshal(exact["method"], &env.Method)
		_ = json.Unmarshal(exact["jsonrpc"], &env.Version)
		if env.Version != "2.0" || env.Method != q.MethodName() || !bytes.Equal(exact["id"], q.ID) {
			t.Fatalf("Parse read %q %q, encoding/json %q %q %q", q.ID, q.MethodName(), exact["id"], env.Method, env.Version)
		}
		if p := exact["params"]; (q.Params == nil) != (p == nil || string(p) == "null") || q.Params != nil && !bytes.Equal(p, q.Params) {
			t.Fatalf("params %q, encoding/json %q", q.Params, p)
		}
	})
}
