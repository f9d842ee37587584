package a2a

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// sendDecodeCase is params the hand decoder reads (fast) or leaves to the
// general way.
type sendDecodeCase struct {
	name, params string
	fast         bool
}

// sendDecodeCases are the edges of the hand decoder, each answered by the
// general way too (checkSendDecode).
var sendDecodeCases = []sendDecodeCase{
	{"the benchmark's message", `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"go"}],"metadata":{"skillId":"conformance-noop"}}}`, true},
	{"empty params", `{}`, true},
	{"every member", `{"tenant":"t","configuration":{"acceptedOutputModes":["text/plain","application/json"],"returnImmediately":true,"historyLength":2,"taskPushNotificationConfig":{"tenant":"t","taskId":"x","id":"c","authentication":{"credentials":"s3cret","scheme":"Bearer"},"token":"tok","url":"https://h.example/cb"}},"message":{"messageId":"m","contextId":"ctx","extensions":["urn:e"],"metadata":{"a":[1,"b",null,true,{"c":-0.5e1}]},"parts":[{"text":"t","mediaType":"text/plain","metadata":{"k":"v"}},{"raw":"AAE=","filename":"f.bin"},{"url":"https://x.example/f","filename":"f"},{"data":{"z":12345678901234567890,"a":[1.0,1e2,-0]}}],"referenceTaskIds":["acme/x","y"],"role":"ROLE_AGENT","taskId":"acme/t"},"metadata":{"m":1}}`, true},
	{"whitespace everywhere", " {\n \"message\" : { \"messageId\" : \"m\" , \"parts\" : [ { \"data\" :  [ 1 , 2 ]  } ] , \"role\" : \"ROLE_USER\" } } \t", true},
	{"escapes and unicode", `{"message":{"messageId":"m\u00e9\n","parts":[{"text":"caf\u00e9 \"q\" \ud83d\ude00 \ud83d tab\t /\/ 中"}],"metadata":{"k\u0065y":"v\\"}}}`, true},
	{"invalid UTF-8", "{\"message\":{\"messageId\":\"m\xff\",\"parts\":[{\"text\":\"a\xc3\"}]}}", true},
	{"a member repeated after null", `{"tenant":null,"configuration":{"acceptedOutputModes":null,"returnImmediately":null,"historyLength":null,"taskPushNotificationConfig":null},"message":{"messageId":null,"contextId":null,"extensions":null,"metadata":null,"parts":[{"text":null,"data":null,"raw":null,"url":null,"filename":null,"mediaType":null,"metadata":null,"url":"https://x"}],"referenceTaskIds":null,"role":null,"taskId":null},"metadata":null}`, false},
	{"null members", `{"tenant":null,"configuration":{"acceptedOutputModes":null,"returnImmediately":null,"historyLength":null,"taskPushNotificationConfig":null},"message":{"messageId":null,"contextId":null,"extensions":null,"metadata":null,"parts":[{"text":null,"data":null,"raw":null,"filename":null,"mediaType":null,"metadata":null,"url":"https://x"}],"referenceTaskIds":null,"role":null,"taskId":null},"metadata":null}`, true},
	{"null message", `{"message":null}`, true},
	{"empty arrays and objects", `{"configuration":{"acceptedOutputModes":[]},"message":{"extensions":[],"parts":[],"referenceTaskIds":[],"metadata":{}},"metadata":{"a":[],"o":{}}}`, true},
	{"ROLE_UNSPECIFIED is no role", `{"message":{"role":"ROLE_UNSPECIFIED"}}`, true},
	{"another role is kept", `{"message":{"role":"ROLE_\u0055SER"}}`, true},
	{"unknown members are skipped", `{"blocking":true,"message":{"kind":"message","parts":[{"kind":"text","text":"x","extra":{"a":[1]}}]},"configuration":{"pushNotificationConfig":{"url":"u"}}}`, true},
	{"numbers in metadata", `{"metadata":{"a":0,"b":-0,"c":1e308,"d":5e-324,"e":12345678901234567890,"f":0.1}}`, true},
	{"a repeated metadata key keeps the last", `{"metadata":{"a":1,"a":{"b":2},"a":"last"}}`, true},
	{"historyLength 0 and negative", `{"configuration":{"historyLength":-3},"message":{"messageId":"m"}}`, true},
	{"returnImmediately false", `{"configuration":{"returnImmediately":false}}`, true},
	{"empty url is no content", `{"message":{"parts":[{"url":"","text":"t"}]}}`, true},
	{"empty raw", `{"message":{"parts":[{"raw":""}]}}`, true},
	{"many parts", `{"message":{"parts":[{"text":"1"},{"text":"2"},{"text":"3"},{"text":"4"},{"text":"5"},{"data":6}]}}`, true},

	// Left to the general way, which refuses or reads them its own way.
	{"member in another case", `{"message":{"MessageId":"m"}}`, false},
	{"member in another case, long s", `{"message":{"meſsageId":"m"}}`, false},
	{"unknown member folding onto a known one", `{"Tenant":"t"}`, false},
	{"member name with escapes", `{"m\u0065ssage":{"messageId":"m"}}`, false},
	{"repeated message", `{"message":{"parts":[{"data":1}]},"message":{"messageId":"m"}}`, false},
	{"repeated metadata merges", `{"metadata":{"a":1},"metadata":{"b":2}}`, false},
	{"repeated part member", `{"message":{"parts":[{"data":1,"data":2.50}]}}`, false},
	{"wrong type", `{"message":{"messageId":5}}`, false},
	{"wrong type, role", `{"message":{"role":1}}`, false},
	{"wrong type, parts", `{"message":{"parts":{}}}`, false},
	{"wrong type, metadata", `{"metadata":[]}`, false},
	{"wrong type, message", `{"message":"m"}`, false},
	{"historyLength not an integer", `{"configuration":{"historyLength":1.0}}`, false},
	{"historyLength out of range", `{"configuration":{"historyLength":99999999999999999999}}`, false},
	{"returnImmediately a string", `{"configuration":{"returnImmediately":"true"}}`, false},
	{"a null part", `{"message":{"parts":[null]}}`, false},
	{"a null in a string array", `{"message":{"extensions":[null]}}`, false},
	{"two contents", `{"message":{"parts":[{"text":"t","data":1}]}}`, false},
	{"no content", `{"message":{"parts":[{"filename":"f"}]}}`, false},
	{"bad base64", `{"message":{"parts":[{"raw":"!!"}]}}`, false},
	{"a number out of range in metadata", `{"metadata":{"a":1e400}}`, false},
	{"deep metadata", `{"metadata":` + strings.Repeat(`{"a":`, maxSendDepth+2) + `1` + strings.Repeat(`}`, maxSendDepth+2) + `}`, false},
}

// TestSendMessageDecode: the hand decoder reads what clients send into the
// value encoding/json makes, and leaves the rest to the general way.
func TestSendMessageDecode(t *testing.T) {
	s := projectServer(t)
	for _, tc := range sendDecodeCases {
		t.Run(tc.name, func(t *testing.T) {
			if fast := checkSendDecode(t, s, []byte(tc.params)); fast != tc.fast {
				t.Errorf("decoded by hand: %v, want %v", fast, tc.fast)
			}
		})
	}
}

// TestSendMessageDecodeGoldens: every SendMessage request of the goldens
// that the general way accepts is decoded by hand, to the same value.
func TestSendMessageDecodeGoldens(t *testing.T) {
	s := projectServer(t)
	seeds := goldenSendParams(t)
	t.Logf("%d golden SendMessage requests", len(seeds))
	if len(seeds) < 20 {
		t.Fatalf("only %d golden SendMessage requests found", len(seeds))
	}
	for _, params := range seeds {
		general := new(wire.SendMessageRequest)
		if s.decodeGeneral(bytes.Clone(params), shapeSendMessageRequest, general) != nil {
			continue
		}
		if !checkSendDecode(t, s, params) {
			t.Errorf("left to the general way: %s", params)
		}
	}
}

// TestSendMessageDecodeAllocs: decoding the benchmark's SendMessage costs
// a handful of allocations (encoding/json took 33).
func TestSendMessageDecodeAllocs(t *testing.T) {
	s := projectServer(t)
	params := []byte(sendDecodeCases[0].params)
	req := new(wire.SendMessageRequest)
	allocs := testing.AllocsPerRun(100, func() {
		*req = wire.SendMessageRequest{}
		if err := s.decodeParams(params, shapeSendMessageRequest, req); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%v allocations per decode", allocs)
	if allocs > 12 {
		t.Errorf("%v allocations per decode, want at most 12", allocs)
	}
}

// FuzzSendMessageDecode holds the hand decoder to the general way: on
// params it decodes, the same value, with params untouched; on params it
// leaves, a zero request; and decodeParams answers exactly as the general
// way does, value or refusal.
func FuzzSendMessageDecode(f *testing.F) {
	for _, tc := range sendDecodeCases {
		f.Add([]byte(tc.params))
	}
	for _, params := range goldenSendParams(f) {
		f.Add(params)
	}
	s := projectServer(f)
	f.Fuzz(func(t *testing.T, params []byte) {
		checkSendDecode(t, s, params)
	})
}

// checkSendDecode compares the hand decoder with the general way on params
// (skipped unless a JSON object: the binding refuses anything else before)
// and reports whether it decoded them.
func checkSendDecode(t *testing.T, s *Server, params []byte) bool {
	t.Helper()
	if !jsonbytes.Valid(params) || jsonbytes.TrimSpace(params)[0] != '{' {
		return false
	}
	general := new(wire.SendMessageRequest)
	generalErr := s.decodeGeneral(bytes.Clone(params), shapeSendMessageRequest, general)

	in := bytes.Clone(params)
	fast := new(wire.SendMessageRequest)
	decoded := decodeSendMessage(in, fast)
	if !bytes.Equal(in, params) {
		t.Fatalf("the hand decoder changed its params: %q", params)
	}
	switch {
	case decoded && generalErr != nil:
		t.Fatalf("decoded by hand what the general way refuses (%v): %q", generalErr, params)
	case decoded:
		if diff := cmp.Diff(general, fast); diff != "" {
			t.Fatalf("hand decoding differs from encoding/json (-general +hand):\n%s\nparams: %q", diff, params)
		}
	default:
		if diff := cmp.Diff(&wire.SendMessageRequest{}, fast); diff != "" {
			t.Fatalf("the hand decoder gave up but left a value:\n%s", diff)
		}
	}

	got := new(wire.SendMessageRequest)
	err := s.decodeParams(bytes.Clone(params), shapeSendMessageRequest, got)
	if !reflect.DeepEqual(err, generalErr) {
		t.Fatalf("decodeParams = %v, the general way %v: %q", err, generalErr, params)
	}
	if err == nil {
		if diff := cmp.Diff(general, got); diff != "" {
			t.Fatalf("decodeParams differs from the general way:\n%s", diff)
		}
	}
	return decoded
}

// goldenSendParams are the params of every SendMessage and
// SendStreamingMessage request in the JSON-RPC goldens and the bodies of
// the HTTP+JSON goldens' requests.
func goldenSendParams(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, pattern := range []string{"testdata/jsonrpc/*.txt", "testdata/rest/*.golden"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			tb.Fatal(err)
		}
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				tb.Fatal(err)
			}
			rest := strings.HasSuffix(name, ".golden")
			lines := strings.Split(string(b), "\n")
			for i, line := range lines {
				if !strings.HasPrefix(line, "{") || !json.Valid([]byte(line)) {
					continue
				}
				if rest {
					// A request body follows its request line.
					if i > 0 && strings.HasPrefix(lines[i-1], "POST /message:") {
						out = append(out, []byte(line))
					}
					continue
				}
				var env struct {
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				}
				if json.Unmarshal([]byte(line), &env) == nil && strings.HasPrefix(env.Method, "Send") && len(env.Params) > 0 && env.Params[0] == '{' {
					out = append(out, env.Params)
				}
			}
		}
	}
	return out
}

// FuzzSendMessageDecodeShapes is FuzzSendMessageDecode over requests built
// from a seed: every member of the request's shapes, in any order, with
// nulls, wrong types, repeats, members in another case, unknown members,
// escapes, odd numbers and whitespace — valid JSON throughout, which
// mutating bytes seldom keeps.
func FuzzSendMessageDecodeShapes(f *testing.F) {
	for seed := range uint64(64) {
		f.Add(seed)
	}
	s := projectServer(f)
	f.Fuzz(func(t *testing.T, seed uint64) {
		g := requestGen{r: rand.New(rand.NewPCG(seed, seed>>32))}
		params := g.object(shapeSendMessageRequest, 0)
		if !jsonbytes.Valid(params) {
			t.Fatalf("the generator wrote invalid JSON: %q", params)
		}
		checkSendDecode(t, s, params)
	})
}

// TestSendMessageDecodeShapes runs the generator of
// FuzzSendMessageDecodeShapes over many seeds, and checks that it reaches
// both ways.
func TestSendMessageDecodeShapes(t *testing.T) {
	s := projectServer(t)
	n := 3000
	if testing.Short() {
		n = 300
	}
	fast := 0
	for seed := range uint64(n) {
		g := requestGen{r: rand.New(rand.NewPCG(seed, 1))}
		params := g.object(shapeSendMessageRequest, 0)
		if !jsonbytes.Valid(params) {
			t.Fatalf("the generator wrote invalid JSON: %q", params)
		}
		if checkSendDecode(t, s, params) {
			fast++
		}
	}
	if fast == 0 || fast == n {
		t.Fatalf("%d of %d generated requests decoded by hand: the generator misses a way", fast, n)
	}
	t.Logf("%d of %d generated requests decoded by hand", fast, n)
}

// requestGen writes random JSON shaped like a SendMessageRequest.
type requestGen struct {
	r   *rand.Rand
	out []byte
}

func (g *requestGen) pick(options ...string) string { return options[g.r.IntN(len(options))] }

func (g *requestGen) space() {
	if g.r.IntN(8) == 0 {
		g.out = append(g.out, g.pick(" ", "\n", "\t ", "\r\n  ")...)
	}
}

// object returns an object of shape sh (depth bounds opaque values).
func (g *requestGen) object(sh shape, depth int) []byte {
	start := len(g.out)
	g.writeObject(sh, depth)
	return bytes.Clone(g.out[start:])
}

func (g *requestGen) writeObject(sh shape, depth int) {
	names := strings.Split(sh.names(), ",")
	g.space()
	g.out = append(g.out, '{')
	// Each member at most once, in any order, but now and then one again.
	order := g.r.Perm(len(names))
	order = order[:g.r.IntN(len(order)+1)]
	if len(order) > 0 && g.r.IntN(16) == 0 {
		order = append(order, order[0])
	}
	for i, k := range order {
		if i > 0 {
			g.out = append(g.out, ',')
		}
		g.space()
		name := names[k]
		switch g.r.IntN(24) {
		case 0:
			name = strings.ToUpper(name[:1]) + name[1:] // another case
		case 1:
			name = g.pick("kind", "blocking", "pushNotificationConfig", "x") // unknown
		case 2:
			name = `\u00` + strconv.FormatInt(int64(name[0]), 16) + name[1:] // escaped
		}
		g.out = strconv.AppendQuote(g.out, name)
		if name[0] == '\\' {
			// AppendQuote escaped the backslash of the \u escape: undo it.
			g.out = bytes.Replace(g.out, []byte(`"\\u00`), []byte(`"\u00`), 1)
		}
		g.space()
		g.out = append(g.out, ':')
		g.space()
		g.member(sh, name, depth)
		g.space()
	}
	g.out = append(g.out, '}')
}

// member writes the value of member name of sh: mostly of its type,
// sometimes null or a value of another type.
func (g *requestGen) member(sh shape, name string, depth int) {
	switch g.r.IntN(12) {
	case 0:
		g.out = append(g.out, "null"...)
		return
	case 1:
		g.value(depth + 3)
		return
	}
	switch child := sh.child(name); {
	case child == shapeParts:
		g.out = append(g.out, '[')
		for i := range g.r.IntN(4) {
			if i > 0 {
				g.out = append(g.out, ',')
			}
			if g.r.IntN(20) == 0 {
				g.out = append(g.out, "null"...)
				continue
			}
			g.writeObject(shapePart, depth+1)
		}
		g.out = append(g.out, ']')
	case child == shapeData || name == "metadata":
		g.value(depth)
	case child != shapeSkip:
		g.writeObject(child, depth+1)
	case name == "historyLength":
		g.out = append(g.out, g.pick("0", "2", "-1", "1.0", "1e2", "99999999999999999999", `"3"`)...)
	case name == "returnImmediately":
		g.out = append(g.out, g.pick("true", "false", `"true"`, "0")...)
	case name == "acceptedOutputModes" || name == "extensions" || name == "referenceTaskIds":
		g.out = append(g.out, '[')
		for i := range g.r.IntN(3) {
			if i > 0 {
				g.out = append(g.out, ',')
			}
			g.str()
		}
		g.out = append(g.out, ']')
	default:
		g.str()
	}
}

// str writes a string, now and then one with escapes, invalid UTF-8, a
// role or base64.
func (g *requestGen) str() {
	g.out = append(g.out, '"')
	g.out = append(g.out, g.pick("", "m-1", "ROLE_USER", "ROLE_AGENT", "ROLE_UNSPECIFIED", "ROLE_\\u0055SER",
		"caf\\u00e9 \\\"q\\\"", "\\ud83d\\ude00", "\\ud83d", "tab\\t/\\/", "\xff\xc3", "é中", "AAE=", "!!", "https://x.example/f")...)
	g.out = append(g.out, '"')
}

// value writes any JSON value, nested at most a few levels past depth.
func (g *requestGen) value(depth int) {
	kinds := 6
	if depth > 4 {
		kinds = 4
	}
	switch g.r.IntN(kinds) {
	case 0:
		g.str()
	case 1:
		g.out = append(g.out, g.pick("0", "-0", "1.5", "-1.5E-7", "12345678901234567890", "1e308", "1e400", "5e-324")...)
	case 2:
		g.out = append(g.out, g.pick("true", "false")...)
	case 3:
		g.out = append(g.out, "null"...)
	case 4:
		g.out = append(g.out, '[')
		for i := range g.r.IntN(3) {
			if i > 0 {
				g.out = append(g.out, ',')
			}
			g.value(depth + 1)
		}
		g.out = append(g.out, ']')
	case 5:
		g.out = append(g.out, '{')
		for i := range g.r.IntN(3) {
			if i > 0 {
				g.out = append(g.out, ',')
			}
			g.str()
			g.out = append(g.out, ':')
			g.value(depth + 1)
		}
		g.out = append(g.out, '}')
	}
}
